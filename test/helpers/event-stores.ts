/** The same events in both event stores: a migrated SQLite file and a ClickHouse server, for tests comparing their reads. */
import { join } from 'node:path'
import type { Test } from 'tap'
import { compileRegex } from '../../src/flags/index.js'
import { SqliteEventSink, SqliteEventStore, type EventRow } from '../../src/storage/events/index.js'
import { migrate, openDatabase } from '../../src/storage/index.js'
import { EVENTS_MIGRATIONS } from '../../src/storage/sqlite/migrations/events.js'
import { clickhouseEventStore } from './clickhouse.js'

/** A migrated events.db in the test's folder holding `rows`, and its reader, closed after `t`. */
export async function sqliteEventStore(t: Test, rows: readonly EventRow[]): Promise<SqliteEventStore> {
  const file = join(t.testdir(), 'events.db')
  const db = openDatabase(file)
  migrate(db, EVENTS_MIGRATIONS)
  db.close()
  const sqliteSink = new SqliteEventSink(file)
  await sqliteSink.write(rows)
  await sqliteSink.close()
  // The regex engine the service's read thread gets (workers/event-query.ts): action and element filters run it.
  const sqlite = new SqliteEventStore(file, compileRegex)
  t.teardown(() => sqlite.close())
  return sqlite
}

export async function bothEventStores(t: Test, rows: readonly EventRow[], database: string) {
  const sqlite = await sqliteEventStore(t, rows)
  const clickhouse = await clickhouseEventStore(t, database)
  await clickhouse.sink.write(rows)
  return { sqlite, clickhouse: clickhouse.store, ch: clickhouse.ch }
}
