/**
 * Opening SQLite files and applying versioned migrations. Every database skylark owns goes through
 * openDatabase so WAL, busy timeouts and foreign keys are set the same way everywhere.
 */
import { closeSync, fdatasyncSync, openSync } from 'node:fs'
import Database from 'better-sqlite3'

export type Db = Database.Database

export interface Migration {
  version: number
  name: string
  sql: string
}

export interface OpenOptions {
  readonly?: boolean
  /** NORMAL is durable across process crashes in WAL mode; FULL also across power loss. */
  synchronous?: 'NORMAL' | 'FULL' | 'OFF'
  /** Page size of a new file; an existing file keeps its own (changing it would need a VACUUM). */
  pageSize?: number
}

/**
 * WAL bytes between two automatic checkpoints, whatever the page size: SQLite counts pages (1,000 by default,
 * 4 MB of 4 KB pages), and events.db's 16 KB pages had made each checkpoint 16 MB. A checkpoint syncs the WAL
 * and then the database file, and a burst that large held the spool's synchronous writes back behind it on the
 * Firecracker machine: /capture/ p99 57–77 → 26–29 ms with wrk, and a /batch/ backlog on SQLite drained at
 * 19.1–20.1 k events/s against 16.3–16.7 k (alternated runs; 1 and 2 MB checkpoints were no better).
 */
export const CHECKPOINT_WAL_BYTES = 4 * 1024 * 1024

export function openDatabase(file: string, options: OpenOptions = {}): Db {
  const db = new Database(file, { readonly: options.readonly ?? false, fileMustExist: options.readonly ?? false })
  // Several threads and the CLI share these files; waiting beats failing with SQLITE_BUSY.
  db.pragma('busy_timeout = 5000')
  if (!options.readonly) {
    // Must come before WAL: a WAL file's page size is fixed once it exists.
    if (options.pageSize) db.pragma(`page_size = ${options.pageSize}`)
    db.pragma('journal_mode = WAL')
    db.pragma(`synchronous = ${options.synchronous ?? 'NORMAL'}`)
    db.pragma(`wal_autocheckpoint = ${Math.ceil(CHECKPOINT_WAL_BYTES / (db.pragma('page_size', { simple: true }) as number))}`)
  }
  db.pragma('foreign_keys = ON')
  return db
}

/**
 * Makes every transaction committed to `file` so far durable, whichever connection or thread committed it.
 * With WAL and synchronous=NORMAL a commit only writes its frames to the `-wal` file; SQLite syncs that file
 * before a checkpoint and the database file after one, so the commits since the last checkpoint could roll
 * back at a power loss or a kernel crash (not at a process crash). fdatasync of the WAL covers them: it
 * flushes the file, not one descriptor's writes. False when there is no WAL (nothing committed since the
 * last connection closed, which checkpointed and synced).
 */
export function syncCommitted(file: string): boolean {
  let fd: number
  try {
    fd = openSync(`${file}-wal`, 'r')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false
    throw error
  }
  try {
    fdatasyncSync(fd)
    return true
  } finally {
    closeSync(fd)
  }
}

/**
 * Copies a database with SQLite's online backup in a single step: one read transaction, so the copy is the
 * file as of one commit while other connections go on writing (WAL readers do not block writers). In steps
 * of pages, a commit from another connection restarts the copy, and a file committed to hundreds of times a
 * second (persons.db under load) would never finish. Returns the copy's pages.
 */
export async function snapshotTo(db: Db, file: string): Promise<number> {
  const { totalPages } = await db.backup(file, { progress: () => 0x7fffffff })
  return totalPages
}

/** Applies the migrations newer than the stored version, each in its own transaction. */
export function migrate(db: Db, migrations: readonly Migration[]): number {
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    applied_at TEXT NOT NULL
  )`)
  const current = (db.prepare('SELECT COALESCE(MAX(version), 0) AS v FROM schema_migrations').get() as { v: number }).v
  const ordered = [...migrations].sort((a, b) => a.version - b.version)
  let applied = 0
  for (const migration of ordered) {
    if (migration.version <= current) continue
    db.transaction(() => {
      db.exec(migration.sql)
      db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(
        migration.version,
        migration.name,
        new Date().toISOString(),
      )
    })()
    applied++
  }
  return applied
}

export function schemaVersion(db: Db): number {
  return (db.prepare('SELECT COALESCE(MAX(version), 0) AS v FROM schema_migrations').get() as { v: number }).v
}

const STATEMENT_CACHE_SIZE = 500
const statementCaches = new WeakMap<Db, Map<string, Database.Statement>>()

/**
 * `db.prepare(sql)` with the statement kept for the next call with the same SQL text. Preparing costs tens
 * of microseconds, more than running a small query, and the management API runs the same few statements on
 * every request. Bounded: the oldest statement is dropped past 500 distinct texts (dynamic IN lists).
 */
export function prepared(db: Db, sql: string): Database.Statement {
  let cache = statementCaches.get(db)
  if (!cache) statementCaches.set(db, (cache = new Map()))
  let statement = cache.get(sql)
  if (statement === undefined) {
    statement = db.prepare(sql)
    if (cache.size >= STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value as string)
    cache.set(sql, statement)
  }
  return statement
}
