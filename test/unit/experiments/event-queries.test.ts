/**
 * The aggregate queries experiments run (funnel per breakdown value, distinct ids), against both event
 * stores with the same rows: SQLite always, a real ClickHouse (Debian's 18.16 or newer) when installed.
 */
import t, { type Test } from 'tap'
import { randomUUID } from 'node:crypto'
import {
  ClickHouseEventSink,
  ClickHouseEventStore,
  SqliteEventSink,
  SqliteEventStore,
  migrateClickHouse,
  type EventRow,
  type EventSink,
  type EventStore,
  type FunnelQuery,
} from '../../../src/storage/events/index.js'
import { prepareDataDir } from '../../../src/storage/index.js'
import { clickhouseUnavailableReason, startClickHouse } from '../../helpers/clickhouse.js'
import { testDir } from '../../helpers/temp.js'

const TEAM = 7
const T0 = Date.parse('2024-03-01T00:00:00Z')
const SECOND = 1000
const DAY = 86_400_000
const KEY = '$feature/exp-flag'

function row(person: string, event: string, at: number, properties: Record<string, unknown> = {}, team = TEAM): EventRow {
  return {
    uuid: randomUUID(),
    team_id: team,
    event,
    distinct_id: `d-${person}`,
    person_id: person,
    properties: JSON.stringify(properties),
    timestamp: at,
    created_at: at,
    groups: ['', '', '', '', ''],
    elements_chain: '',
  }
}

// Persons are UUIDs because ClickHouse stores person_id as one.
const P = Object.fromEntries(
  ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j'].map((name, i) => [name, `00000000-0000-4000-8000-00000000000${i}`]),
) as Record<string, string>

const ROWS: EventRow[] = [
  // a: control, signs up then pays a second later → converts
  row(P.a, 'signup', T0 + DAY, { [KEY]: 'control' }),
  row(P.a, 'paid', T0 + DAY + SECOND),
  // b: test, pays after the 14-day window → entered only
  row(P.b, 'signup', T0 + DAY, { [KEY]: 'test' }),
  row(P.b, 'paid', T0 + 16 * DAY),
  // c: test, pays before signing up → entered only (order matters)
  row(P.c, 'paid', T0 + DAY),
  row(P.c, 'signup', T0 + 2 * DAY, { [KEY]: 'test' }),
  // d: a variant outside the experiment → not counted
  row(P.d, 'signup', T0 + DAY, { [KEY]: 'other' }),
  row(P.d, 'paid', T0 + DAY + SECOND),
  // e: test, all three steps → converts in a 3-step funnel too
  row(P.e, 'signup', T0 + DAY, { [KEY]: 'test', plan: 'pro' }),
  row(P.e, 'paid', T0 + DAY + 2 * SECOND),
  row(P.e, 'renewed', T0 + DAY + 3 * SECOND),
  // f: before the range → not counted
  row(P.f, 'signup', T0 - DAY, { [KEY]: 'control' }),
  row(P.f, 'paid', T0 - DAY + SECOND),
  // g: control first, then test → counted under control (first touch); never pays
  row(P.g, 'signup', T0 + DAY, { [KEY]: 'control' }),
  row(P.g, 'signup', T0 + 2 * DAY, { [KEY]: 'test' }),
  // h: control; first attempt times out, a second signup 20 days later converts
  row(P.h, 'signup', T0 + DAY, { [KEY]: 'control' }),
  row(P.h, 'signup', T0 + 21 * DAY, { [KEY]: 'control' }),
  row(P.h, 'paid', T0 + 22 * DAY),
  // i: another project
  row(P.i, 'signup', T0 + DAY, { [KEY]: 'control' }, TEAM + 1),
  // j: control, pays in the same millisecond as the signup → converts (steps may share a timestamp)
  row(P.j, 'signup', T0 + 3 * DAY, { [KEY]: 'control' }),
  row(P.j, 'paid', T0 + 3 * DAY),
]

const base: FunnelQuery = {
  teamId: TEAM,
  steps: [{ event: 'signup' }, { event: 'paid' }],
  after: T0,
  before: T0 + 30 * DAY,
  windowMs: 14 * DAY,
  breakdown: KEY,
  breakdownValues: ['control', 'test'],
}

function queries(t: Test, store: () => EventStore): void {
  const cases: Array<[string, Partial<FunnelQuery>, Array<{ value: string; counts: number[] }>]> = [
    [
      'counts entered and converted persons per variant',
      {},
      [
        { value: 'control', counts: [4, 3] },
        { value: 'test', counts: [3, 1] },
      ],
    ],
    [
      'a three-step funnel',
      { steps: [{ event: 'signup' }, { event: 'paid' }, { event: 'renewed' }] },
      [
        { value: 'control', counts: [4, 3, 0] },
        { value: 'test', counts: [3, 1, 1] },
      ],
    ],
    [
      'a one-step funnel counts entries only',
      { steps: [{ event: 'signup' }] },
      [
        { value: 'control', counts: [4] },
        { value: 'test', counts: [3] },
      ],
    ],
    [
      'step properties narrow the step',
      { steps: [{ event: 'signup', properties: [{ key: 'plan', operator: 'exact', value: 'pro' }] }, { event: 'paid' }] },
      [{ value: 'test', counts: [1, 1] }],
    ],
    [
      'a shorter window converts fewer',
      { windowMs: 1500 },
      [
        { value: 'control', counts: [4, 2] },
        { value: 'test', counts: [3, 0] },
      ],
    ],
    ['the range bounds every step', { before: T0 + DAY + 500 }, [{ value: 'control', counts: [3, 0] }, { value: 'test', counts: [2, 0] }]],
    [
      'a range over a year (coarser ticks on ClickHouse) gives the same answer',
      { before: T0 + 400 * DAY },
      [
        { value: 'control', counts: [4, 3] },
        { value: 'test', counts: [3, 1] },
      ],
    ],
    ['only the listed values', { breakdownValues: ['other'] }, [{ value: 'other', counts: [1, 1] }]],
    ['no values, no rows', { breakdownValues: [] }, []],
  ]
  for (const [name, change, wanted] of cases) {
    t.test(`funnel: ${name}`, async (t) => {
      t.same(await store().funnel({ ...base, ...change }), wanted)
    })
  }

  t.test('distinctIds lists who sent matching events, once each, sorted', async (t) => {
    const ids = await store().distinctIds({
      teamId: TEAM,
      event: 'signup',
      after: T0,
      properties: [{ key: KEY, operator: 'exact', value: ['control'] }],
    })
    t.same(ids, [`d-${P.a}`, `d-${P.g}`, `d-${P.h}`, `d-${P.j}`])
    t.same(await store().distinctIds({ teamId: TEAM, event: 'nothing' }), [])
  })
}

async function fill(sink: EventSink): Promise<void> {
  await sink.write(ROWS)
  await sink.close()
}

t.test('SQLite event store', async (t) => {
  const paths = prepareDataDir(testDir(t, 'skylark-eq-'))
  await fill(new SqliteEventSink(paths.events))
  const store = new SqliteEventStore(paths.events)
  t.teardown(() => store.close()) // teardowns run last-in first-out: closed before its folder goes
  queries(t, () => store)
})

const skip = clickhouseUnavailableReason()
t.test('ClickHouse event store', { skip: skip ?? false }, async (t) => {
  const ch = await startClickHouse()
  const options = { url: ch.url, database: 'skylark_eq', user: 'default', password: '', cluster: null }
  const features = await migrateClickHouse(options)
  await fill(new ClickHouseEventSink(options, features))
  const store = new ClickHouseEventStore(options, features)
  t.teardown(async () => {
    await store.close()
    await ch.destroy()
  })
  t.comment(`ClickHouse ${features.version}`)
  queries(t, () => store)
})
