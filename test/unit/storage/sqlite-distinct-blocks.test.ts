import { join } from 'node:path'
import { randomUUID } from 'node:crypto'
import t from 'tap'
import { SqliteEventSink, SqliteEventStore, type EventRow } from '../../../src/storage/events/index.js'
import { compileSqliteWhere } from '../../../src/storage/events/sqlite-filters.js'
import { migrate, openDatabase, prepareDataDir } from '../../../src/storage/index.js'
import { EVENTS_MIGRATIONS } from '../../../src/storage/sqlite/migrations/events.js'
import { testDir } from '../../helpers/temp.js'

const T0 = Date.parse('2024-05-01T00:00:00.000Z')

function row(teamId: number, distinctId: string, i: number): EventRow {
  return {
    uuid: randomUUID(),
    team_id: teamId,
    event: i % 2 ? 'clicked' : '$pageview',
    distinct_id: distinctId,
    person_id: `person-${distinctId}`,
    properties: JSON.stringify({ i }),
    timestamp: T0 + i * 1000,
    created_at: T0 + i * 1000,
    groups: ['', '', '', '', ''],
    elements_chain: '',
  }
}

const blocksOf = (file: string) => {
  const db = openDatabase(file, { readonly: true })
  try {
    return (db.prepare('SELECT DISTINCT block FROM events ORDER BY 1').all() as Array<{ block: number }>).map((r) => r.block)
  } finally {
    db.close()
  }
}

t.test('a distinct id is found in every block its project spans, and only in its project', async (t) => {
  const dir = testDir(t, 'skylark-blocks-')
  const paths = prepareDataDir(dir)
  const sink = new SqliteEventSink(paths.events, 3)
  const store = new SqliteEventStore(paths.events)
  t.teardown(async () => {
    await sink.close()
    await store.close()
  })
  // Project 2 writes between project 1's rows, so project 1's blocks have gaps without its rows.
  for (let i = 0; i < 30; i++) await sink.write([row(i % 10 < 7 ? 1 : 2, i % 3 === 0 ? 'alice' : 'bob', i)])

  t.same(blocksOf(paths.events), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9], 'three rows a block, numbered in insertion order')
  const alice = await store.list({ teamId: 1, distinctId: 'alice' }, { limit: 100, offset: 0 })
  const expected = Array.from({ length: 30 }, (_, i) => i).filter((i) => i % 10 < 7 && i % 3 === 0).reverse()
  t.same(alice.map((e) => e.properties.i), expected, 'all of them, newest first')
  t.equal(await store.count({ teamId: 1, distinctId: 'alice' }), expected.length)
  t.equal(await store.count({ teamId: 2, distinctId: 'alice' }), 3, 'project 2 has its own')
  t.equal(await store.count({ teamId: 1, distinctId: 'alice', event: 'clicked', after: T0 + 10_000 }), expected.filter((i) => i % 2 && i >= 10).length)
  t.same(await store.list({ teamId: 3, distinctId: 'alice' }, { limit: 100, offset: 0 }), [], 'a project without events')
})

t.test('a lookup by distinct id seeks the block index instead of scanning the project', async (t) => {
  const db = openDatabase(':memory:')
  migrate(db, EVENTS_MIGRATIONS)
  const where = compileSqliteWhere({ teamId: 1, distinctId: 'alice', event: 'clicked' })
  const plan = (db.prepare(`EXPLAIN QUERY PLAN SELECT * FROM ${where.from} WHERE ${where.sql} ORDER BY timestamp DESC`).all(...where.params) as Array<{ detail: string }>)
    .map((r) => r.detail)
    .join(' | ')
  t.match(plan, 'SEARCH events USING INDEX events_team_block_distinct (team_id=? AND block=? AND distinct_id=?)')
  t.notMatch(plan, 'events_team_time')
})

t.test('events stored before the block index keep block 0, are still found, and new ones count on from them', async (t) => {
  const dir = testDir(t, 'skylark-blocks-old-')
  const file = join(dir, 'events.db')
  const old = openDatabase(file)
  migrate(old, EVENTS_MIGRATIONS.filter((m) => m.version === 1))
  const insert = old.prepare(
    `INSERT INTO events (uuid, team_id, event, distinct_id, person_id, properties, timestamp, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
  )
  for (let i = 0; i < 5; i++) {
    const r = row(1, 'carol', i)
    insert.run(r.uuid, r.team_id, r.event, r.distinct_id, r.person_id, r.properties, r.timestamp, r.created_at)
  }
  migrate(old, EVENTS_MIGRATIONS)
  old.close()

  const sink = new SqliteEventSink(file, 2)
  const store = new SqliteEventStore(file)
  t.teardown(async () => {
    await sink.close()
    await store.close()
  })
  await sink.write([5, 6, 7].map((i) => row(1, 'carol', i)))
  t.same(blocksOf(file), [0, 2, 3], 'rowids 6–8 in blocks of two')
  t.same((await store.list({ teamId: 1, distinctId: 'carol' }, { limit: 100, offset: 0 })).map((e) => e.properties.i), [7, 6, 5, 4, 3, 2, 1, 0])
})
