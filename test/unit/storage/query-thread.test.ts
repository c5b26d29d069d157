/** The embedded store's reads on their own thread answer what the same reads on the caller's thread answer. */
import { randomUUID } from 'node:crypto'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import t, { type Test } from 'tap'
import { SqliteEventSink, SqliteEventStore, type EventRow } from '../../../src/storage/events/index.js'
import { ThreadedEventStore } from '../../../src/storage/events/query-thread.js'
import { migrate, openDatabase } from '../../../src/storage/index.js'
import { EVENTS_MIGRATIONS } from '../../../src/storage/sqlite/migrations/events.js'
import { ROOT } from '../../helpers/server.js'

// The thread runs the compiled entry, as the service does (`npm test` builds dist/ first).
const ENTRY = pathToFileURL(join(ROOT, 'dist', 'workers', 'event-query.js'))
const T0 = 1_700_000_000_000
const HOUR = 3_600_000

async function filledFile(t: Test): Promise<string> {
  const file = join(t.testdir(), 'events.db')
  const db = openDatabase(file)
  migrate(db, EVENTS_MIGRATIONS)
  db.close()
  const rows: EventRow[] = Array.from({ length: 300 }, (_, i) => ({
    uuid: randomUUID(),
    team_id: i % 7 === 0 ? 2 : 1,
    event: i % 3 === 0 ? 'signed up' : '$pageview',
    distinct_id: `user-${i % 11}`,
    person_id: `00000000-0000-4000-8000-0000000000${String(i % 11).padStart(2, '0')}`,
    properties: JSON.stringify({ plan: i % 2 ? 'pro' : 'free', n: i, $feature_flag_response: i % 4 ? 'test' : 'control' }),
    timestamp: T0 + i * HOUR,
    created_at: T0 + i * HOUR + 5,
    groups: [i % 5 ? 'acme' : 'globex', '', '', '', ''],
    elements_chain: '',
  }))
  const sink = new SqliteEventSink(file)
  await sink.write(rows)
  await sink.close()
  return file
}

t.test('every read gives the same answer through the thread as on the calling thread', async (t) => {
  const file = await filledFile(t)
  const direct = new SqliteEventStore(file)
  const threaded = new ThreadedEventStore({ file, entry: ENTRY })
  t.teardown(async () => {
    await direct.close()
    await threaded.close()
  })
  const filter = { teamId: 1, event: ['$pageview', 'signed up'], after: T0, before: T0 + 200 * HOUR, properties: [{ key: 'plan', operator: 'exact' as const, value: 'pro' }] }
  const stored = await direct.list(filter, { limit: 5, offset: 0 })
  t.equal(stored.length, 5, 'the fixture matches')
  const reads: Array<[string, (s: SqliteEventStore | ThreadedEventStore) => Promise<unknown>]> = [
    ['list', (s) => s.list(filter, { limit: 20, offset: 3, ascending: true })],
    ['get', (s) => s.get(1, stored[0]!.uuid)],
    ['get of a missing uuid', (s) => s.get(1, randomUUID())],
    ['propertyValues', (s) => s.propertyValues({ filter: { teamId: 1 }, source: { property: 'plan' }, search: 'P', limit: 10 })],
    ['actors', (s) => s.actors(filter)],
    ['count', (s) => s.count(filter)],
    ['breakdown', (s) => s.breakdown({ ...filter, breakdown: '$feature_flag_response', math: 'persons' })],
    ['dailyBreakdown', (s) => s.dailyBreakdown({ teamId: 1, breakdown: '$feature_flag_response', math: 'events', after: T0, before: T0 + 300 * HOUR })],
    ['funnel', (s) => s.funnel({ teamId: 1, steps: [{ event: '$pageview' }, { event: 'signed up' }], after: T0, before: T0 + 300 * HOUR, windowMs: 14 * 24 * HOUR, breakdown: '$feature_flag_response', breakdownValues: ['control', 'test'] })],
    ['distinctIds', (s) => s.distinctIds(filter)],
    [
      'experimentVariants',
      (s) =>
        s.experimentVariants({
          teamId: 1,
          groupTypeIndex: null,
          exposure: { teamId: 1, event: 'signed up', after: T0, before: T0 + 300 * HOUR, properties: [{ key: '$feature_flag_response', operator: 'exact', value: ['control', 'test'] }] },
          variantProperty: '$feature_flag_response',
          breakdowns: ['$browser'],
          metric: { after: T0, before: T0 + 300 * HOUR, steps: [{ event: '$pageview' }], valueProperties: [['n']], distinctKeys: ['person'] },
          variants: ['control', 'test'],
          multipleVariantHandling: 'first_seen',
          aggregation: { type: 'mean', sources: [{ kind: 'sum', property: 'n' }], windowMs: null, lowerPercentile: null, upperPercentile: null, ignoreZeros: false },
        }),
    ],
  ]
  for (const [name, read] of reads) t.same(await read(threaded), await read(direct), name)
})

t.test('a failed read rejects with the store’s message and the thread goes on serving', async (t) => {
  const file = await filledFile(t)
  const threaded = new ThreadedEventStore({ file, entry: ENTRY })
  t.teardown(() => threaded.close())
  await t.rejects(threaded.list({ teamId: 1, group: { index: 9, key: 'x' } }, { limit: 1, offset: 0 }), { message: /group type index 9/ })
  t.equal(await threaded.count({ teamId: 1 }), 300 - Math.ceil(300 / 7))
})

t.test('a store that cannot be opened fails each read, and is opened once it exists', async (t) => {
  const dir = t.testdir()
  const file = join(dir, 'later.db')
  const threaded = new ThreadedEventStore({ file, entry: ENTRY })
  t.teardown(() => threaded.close())
  await t.rejects(threaded.count({ teamId: 1 }), Error, 'no file yet')
  const db = openDatabase(file)
  migrate(db, EVENTS_MIGRATIONS)
  db.close()
  t.equal(await threaded.count({ teamId: 1 }), 0)
})

t.test('reads asked while the thread closes are answered by the next thread', async (t) => {
  const file = await filledFile(t)
  const threaded = new ThreadedEventStore({ file, entry: ENTRY })
  t.teardown(() => threaded.close())
  const before = threaded.count({ teamId: 1 })
  const closing = threaded.close()
  const after = threaded.count({ teamId: 2 })
  t.equal(await before, 300 - Math.ceil(300 / 7), 'asked before close: answered by the closing thread')
  await closing
  t.equal(await after, Math.ceil(300 / 7), 'asked after: a new thread, not failed by the old one’s exit')
})

t.test('closing ends the thread, and a later read starts another', async (t) => {
  const file = await filledFile(t)
  const started: number[] = []
  const threaded = new ThreadedEventStore({ file, entry: ENTRY, onThreadStart: (id) => started.push(id) })
  t.equal(await threaded.count({ teamId: 2 }), Math.ceil(300 / 7))
  await threaded.close()
  t.equal(await threaded.count({ teamId: 2 }), Math.ceil(300 / 7))
  await threaded.close()
  t.equal(started.length, 2)
  t.not(started[0], started[1])
})
