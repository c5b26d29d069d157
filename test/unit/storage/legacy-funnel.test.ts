/**
 * The legacy funnel (the legacy experiment results' FunnelQuery) counts as PostHog's funnel UDF on both stores:
 * one event advances a person by one step at most, so repeated steps need as many events (PostHog's issue 4813),
 * while two events at one instant may be two steps (issue 25048's journey); the window is inclusive at its end;
 * a person is counted under the breakdown value of the earliest first-step event with one of the query's values,
 * the smaller text at one instant. Before, SQLite let one event count for two steps and ClickHouse's windowFunnel
 * did not, so the stores told such persons apart.
 */
import { randomUUID } from 'node:crypto'
import t from 'tap'
import type { EventRow, FunnelQuery } from '../../../src/storage/events/index.js'
import { clickhouseUnavailableReason } from '../../helpers/clickhouse.js'
import { bothEventStores } from '../../helpers/event-stores.js'

const TEAM = 13
const T0 = Date.parse('2024-03-22T13:00:00Z')
const MINUTE = 60_000

/** Events of one person each: [distinct id, event, minutes after T0, the flag's variant (`$feature/f`)]. */
const JOURNEYS: Array<[string, string, number, string?]> = [
  // Issue 25048: two pageviews at one instant, then a third a minute later: every step of three.
  ['a', 'onboarded', 1, 'control'],
  ['a', '$pageview', 10],
  ['a', '$pageview', 10],
  ['a', '$pageview', 11],
  // One pageview after onboarding: the first pageview step only.
  ['b', 'onboarded', 1, 'control'],
  ['b', '$pageview', 2],
  // A pageview that is also the first step (its own `$feature/f`) starts the funnel and is no later step.
  ['c', '$pageview', 5, 'test'],
  // Onboarding at the window's end (60 minutes, inclusive) and just past it.
  ['d', 'onboarded', 0, 'test'],
  ['d', '$pageview', 60],
  ['d', '$pageview', 61],
  // Two first steps at one instant with different variants: the smaller text; an earlier one without a variant of the query.
  ['e', 'onboarded', 3, 'other'],
  ['e', 'onboarded', 4, 'test'],
  ['e', 'onboarded', 4, 'control'],
  ['e', '$pageview', 5],
  ['e', '$pageview', 5],
]

function rows(): EventRow[] {
  return JOURNEYS.map(([id, event, minutes, variant]) => ({
    uuid: randomUUID(),
    team_id: TEAM,
    event,
    distinct_id: id,
    person_id: `00000000-0000-4000-8000-00000000000${'abcde'.indexOf(id)}`,
    properties: JSON.stringify(variant === undefined ? {} : { '$feature/f': variant }),
    timestamp: T0 + minutes * MINUTE,
    created_at: T0 + minutes * MINUTE,
    groups: ['', '', '', '', ''],
    elements_chain: '',
  }))
}

const funnel = (steps: string[]): FunnelQuery => ({
  teamId: TEAM,
  steps: steps.map((event) => ({ event })),
  after: T0,
  before: T0 + 24 * 60 * MINUTE,
  windowMs: 60 * MINUTE,
  breakdown: '$feature/f',
  breakdownValues: ['control', 'test'],
})

t.test('legacy funnels count repeated steps and instants as PostHog does, alike on both stores', { skip: clickhouseUnavailableReason() ?? false }, async (t) => {
  const { sqlite, clickhouse } = await bothEventStores(t, rows(), 'skylark_legacy_funnel')
  const cases: Array<[string, FunnelQuery, Array<{ value: string; counts: number[] }>]> = [
    [
      'onboarding, then three pageviews: a (two at one instant) reaches every step, b two steps, d two (its pageview on the window\'s end), e three (control)',
      funnel(['onboarded', '$pageview', '$pageview', '$pageview']),
      [
        { value: 'control', counts: [3, 3, 2, 1] },
        { value: 'test', counts: [1, 1, 0, 0] },
      ],
    ],
    [
      'pageviews twice: only c starts (the others have no variant on theirs), and its one pageview is no second step',
      funnel(['$pageview', '$pageview']),
      [{ value: 'test', counts: [1, 0] }],
    ],
    ['one step: each person under its earliest variant of the query', funnel(['onboarded']), [{ value: 'control', counts: [3] }, { value: 'test', counts: [1] }]],
  ]
  for (const [name, q, want] of cases) {
    t.same(await sqlite.funnel(q), want, `SQLite: ${name}`)
    t.same(await clickhouse.funnel(q), want, `ClickHouse: ${name}`)
  }
})
