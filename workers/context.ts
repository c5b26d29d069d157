/**
 * Per-worker state, created on the first task (a module must not do work at import time): read-only
 * SQLite connections and the caches built on them.
 */
import { workerData } from 'node:worker_threads'
import { systemClock } from '../src/common/clock.js'
import { uuidv7 } from '../src/common/ids.js'
import { ProjectFlagCache } from '../src/flags/project-cache.js'
import { Accounts, ManagementFlagSource, PersonalKeys, ProjectDirectory, createProjectResolver, type ProjectResolver } from '../src/management/index.js'
import { PersonReader } from '../src/persons/index.js'
import { dataPaths, openDatabase, type Db } from '../src/storage/index.js'

export interface WorkerContext {
  resolveProject: ProjectResolver
  uuid: () => string
}

let context: WorkerContext | null = null
let managementDb: Db | null = null
let flags: { cache: ProjectFlagCache } | null = null

function management(): Db {
  const { dataDir } = workerData as { dataDir: string }
  managementDb ??= openDatabase(dataPaths(dataDir).management, { readonly: true })
  return managementDb
}

/** Compiled flag sets, per project, from this worker's own read-only connections. */
export function flagContext(): { cache: ProjectFlagCache } {
  if (flags) return flags
  const { dataDir } = workerData as { dataDir: string }
  const persons = new PersonReader(openDatabase(dataPaths(dataDir).persons, { readonly: true }))
  flags = { cache: new ProjectFlagCache(new ManagementFlagSource(management()), persons) }
  return flags
}

export function workerContext(): WorkerContext {
  if (context) return context
  const db = management()
  const accounts = new Accounts(db, systemClock)
  context = {
    resolveProject: createProjectResolver(new ProjectDirectory(db), new PersonalKeys(db, systemClock), accounts),
    uuid: () => uuidv7(),
  }
  return context
}
