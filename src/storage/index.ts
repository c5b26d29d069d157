/**
 * Storage adapters. The data folder holds management.db, persons.db, events.db (embedded event store),
 * dead_letters.db, logs.db and metrics.db (OTLP logs and metrics, embedded store) and the spool. Imports: common/, config types, observability; never domain logic.
 */
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { migrate, openDatabase, type Db } from './sqlite/database.js'
import { EVENTS_MIGRATIONS, EVENTS_PAGE_SIZE } from './sqlite/migrations/events.js'
import { MANAGEMENT_MIGRATIONS } from './sqlite/migrations/management.js'
import { LOGS_MIGRATIONS } from './sqlite/migrations/logs.js'
import { METRICS_MIGRATIONS } from './sqlite/migrations/metrics.js'
import { PERSONS_MIGRATIONS } from './sqlite/migrations/persons.js'

export { openDatabase, migrate, schemaVersion, snapshotTo, syncCommitted, type Db, type Migration } from './sqlite/database.js'

export interface DataPaths {
  root: string
  management: string
  persons: string
  events: string
  deadLetters: string
  /** OTLP logs (the embedded store's). */
  logs: string
  /** OTLP metrics (the embedded store's). */
  metrics: string
  spool: string
}

export function dataPaths(dataDir: string): DataPaths {
  return {
    root: dataDir,
    management: join(dataDir, 'management.db'),
    persons: join(dataDir, 'persons.db'),
    events: join(dataDir, 'events.db'),
    deadLetters: join(dataDir, 'dead_letters.db'),
    logs: join(dataDir, 'logs.db'),
    metrics: join(dataDir, 'metrics.db'),
    spool: join(dataDir, 'spool'),
  }
}

/** Creates the data folder and brings every SQLite file to the current schema. */
export function prepareDataDir(dataDir: string): DataPaths {
  const paths = dataPaths(dataDir)
  mkdirSync(paths.spool, { recursive: true })
  for (const [file, migrations, pageSize] of [
    [paths.management, MANAGEMENT_MIGRATIONS, undefined],
    [paths.persons, PERSONS_MIGRATIONS, undefined],
    [paths.events, EVENTS_MIGRATIONS, EVENTS_PAGE_SIZE],
    [paths.logs, LOGS_MIGRATIONS, undefined],
    [paths.metrics, METRICS_MIGRATIONS, undefined],
  ] as const) {
    const db = openDatabase(file, { pageSize })
    try {
      migrate(db, migrations)
    } finally {
      db.close()
    }
  }
  return paths
}

export function openManagementDb(paths: DataPaths): Db {
  return openDatabase(paths.management)
}
