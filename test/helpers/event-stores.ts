/** The same events in both event stores: a migrated SQLite file and a ClickHouse server, for tests comparing their reads. */
import { randomUUID } from 'node:crypto'
import { join } from 'node:path'
import type { Test } from 'tap'
import { compileSearchRegex } from '../../src/flags/index.js'
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
  const sqlite = new SqliteEventStore(file, compileSearchRegex)
  t.teardown(() => sqlite.close())
  return sqlite
}

export async function bothEventStores(t: Test, rows: readonly EventRow[], database: string) {
  const sqlite = await sqliteEventStore(t, rows)
  const clickhouse = await clickhouseEventStore(t, database)
  await clickhouse.sink.write(rows)
  return { sqlite, clickhouse: clickhouse.store, ch: clickhouse.ch }
}

/** One `$pageview` a second from 2024-06-01 for each distinct id, with its properties, in `team`. */
export function pageviewRows(team: number, propertiesById: Record<string, Record<string, unknown>>): EventRow[] {
  const t0 = Date.parse('2024-06-01T00:00:00Z')
  return Object.entries(propertiesById).map(([id, properties], i) => ({
    uuid: randomUUID(),
    team_id: team,
    event: '$pageview',
    distinct_id: id,
    person_id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
    properties: JSON.stringify(properties),
    timestamp: t0 + i * 1000,
    created_at: t0 + i * 1000,
    groups: ['', '', '', '', ''],
    elements_chain: '',
  }))
}

/** Rows whose order a store leaves open (counts that tie), as sorted JSON texts, for comparing two stores' answers. */
export const asSet = <T>(rows: readonly T[]): string[] => rows.map((r) => JSON.stringify(r)).sort()

/** The texts HogQL's array tests split (properties.s of d1…d5): a path, a list, empty, missing, and of two-byte characters. */
export const PATH_TEXTS: Record<string, Record<string, unknown>> = {
  d1: { s: '/a/b/c' },
  d2: { s: 'x,y' },
  d3: { s: '' },
  d4: {},
  d5: { s: 'héllo/wörld' },
}
