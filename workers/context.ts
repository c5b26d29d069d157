/**
 * Per-worker state, created on the first task (a module must not do work at import time): read-only
 * SQLite connections and the caches built on them.
 */
import { workerData } from 'node:worker_threads'
import { systemClock } from '../src/common/clock.js'
import { uuidv7 } from '../src/common/ids.js'
import { Accounts, PersonalKeys, ProjectDirectory, createProjectResolver, type ProjectResolver } from '../src/management/index.js'
import { dataPaths, openDatabase } from '../src/storage/index.js'

export interface WorkerContext {
  resolveProject: ProjectResolver
  uuid: () => string
}

let context: WorkerContext | null = null

export function workerContext(): WorkerContext {
  if (context) return context
  const { dataDir } = workerData as { dataDir: string }
  const db = openDatabase(dataPaths(dataDir).management, { readonly: true })
  const accounts = new Accounts(db, systemClock)
  context = {
    resolveProject: createProjectResolver(new ProjectDirectory(db), new PersonalKeys(db, systemClock), accounts),
    uuid: () => uuidv7(),
  }
  return context
}
