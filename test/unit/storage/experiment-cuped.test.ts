/**
 * CUPED's covariate sums on both stores, for the events of PostHog's own query tests
 * (products/experiments/backend/hogql_queries/test/experiment_query_runner/test_cuped_mean_metric.py and
 * test_cuped_funnel_metric.py): an experiment from 2020-01-10 to 2020-01-15, persons exposed on the 10th at noon,
 * their metric events before (the covariate, within the lookback) and after. Each store must give PostHog's sums.
 */
import { randomUUID } from 'node:crypto'
import t from 'tap'
import type { EventRow, ExperimentVariantsQuery, SourceMath, VariantSums } from '../../../src/storage/events/index.js'
import { clickhouseUnavailableReason } from '../../helpers/clickhouse.js'
import { bothEventStores } from '../../helpers/event-stores.js'

const DAY = 86_400_000
const START = Date.parse('2020-01-10T00:00:00Z')
const END = Date.parse('2020-01-15T00:00:00Z')
const at = (iso: string) => Date.parse(`${iso}Z`)

type Event = [person: string, event: string, time: string, properties?: Record<string, unknown>]
const exposure = (person: string, variant: string, time: string): Event => [person, '$feature_flag_called', time, { $feature_flag: 'f', $feature_flag_response: variant }]
const purchase = (person: string, time: string, amount: number): Event => [person, 'purchase', time, { amount }]
const pageview = (person: string, time: string, session: string): Event => [person, '$pageview', time, { $session_id: session }]
const checkout = (person: string, time: string): Event => [person, 'checkout completed', time]
const signup = (person: string, time: string): Event => [person, 'signup', time]

interface Scenario {
  name: string
  events: Event[]
  lookbackDays: number
  type: 'mean' | 'funnel'
  steps: string[]
  source?: SourceMath
  windowMs?: number
  /** PostHog's asserted sums, control then test: [sum, covariate_sum, covariate_sum_squares?, covariate_sum_product]. */
  expected: Array<Partial<VariantSums>>
}

const SCENARIOS: Scenario[] = [
  {
    name: 'test_cuped_mean_metric_collects_covariate_columns',
    events: (
      [
        ['control_1', 'control', 3, 10],
        ['control_2', 'control', 4, 20],
        ['test_1', 'test', 5, 30],
        ['test_2', 'test', 6, 40],
      ] as const
    ).flatMap(([p, v, pre, post]) => [purchase(p, '2020-01-08T12:00:00', pre), exposure(p, v, '2020-01-10T12:00:00'), purchase(p, '2020-01-10T13:00:00', post)]),
    lookbackDays: 7,
    type: 'mean',
    steps: ['purchase'],
    source: { kind: 'sum', property: 'amount' },
    expected: [
      { sum: 30, covariate_sum: 7, covariate_sum_squares: 25, covariate_sum_product: 110 },
      { sum: 70, covariate_sum: 11, covariate_sum_squares: 61, covariate_sum_product: 390 },
    ],
  },
  {
    name: 'test_cuped_uses_pre_exposure_window_relative_to_first_exposure (mean)',
    events: [
      purchase('control_1', '2020-01-07T12:00:00', 100),
      purchase('control_1', '2020-01-09T12:00:00', 5),
      exposure('control_1', 'control', '2020-01-10T12:00:00'),
      purchase('control_1', '2020-01-11T12:00:00', 7),
      exposure('control_1', 'control', '2020-01-12T12:00:00'),
      purchase('test_1', '2020-01-09T12:00:00', 6),
      exposure('test_1', 'test', '2020-01-10T12:00:00'),
      purchase('test_1', '2020-01-11T12:00:00', 8),
    ],
    lookbackDays: 2,
    type: 'mean',
    steps: ['purchase'],
    source: { kind: 'sum', property: 'amount' },
    expected: [
      { sum: 7, covariate_sum: 5, covariate_sum_squares: 25, covariate_sum_product: 35 },
      { sum: 8, covariate_sum: 6, covariate_sum_product: 48 },
    ],
  },
  {
    name: 'test_cuped_respects_conversion_window_for_post_values',
    events: (
      [
        ['control_1', 'control', 4, 10],
        ['test_1', 'test', 5, 20],
      ] as const
    ).flatMap(([p, v, pre, post]) => [
      purchase(p, '2020-01-09T12:00:00', pre),
      exposure(p, v, '2020-01-10T12:00:00'),
      purchase(p, '2020-01-10T13:00:00', post),
      purchase(p, '2020-01-12T13:00:00', 100),
    ]),
    lookbackDays: 7,
    type: 'mean',
    steps: ['purchase'],
    source: { kind: 'sum', property: 'amount' },
    windowMs: DAY,
    expected: [
      { sum: 10, covariate_sum: 4, covariate_sum_product: 40 },
      { sum: 20, covariate_sum: 5, covariate_sum_product: 100 },
    ],
  },
  {
    name: 'test_cuped_unique_session_metric_collects_distinct_covariates',
    events: [
      pageview('control_1', '2020-01-09T12:00:00', 'c_1_pre_a'),
      pageview('control_1', '2020-01-09T12:05:00', 'c_1_pre_b'),
      exposure('control_1', 'control', '2020-01-10T12:00:00'),
      pageview('control_1', '2020-01-10T13:00:00', 'c_1_post'),
      exposure('control_2', 'control', '2020-01-10T12:00:00'),
      pageview('control_2', '2020-01-10T13:00:00', 'c_2_post'),
      pageview('test_1', '2020-01-09T12:00:00', 't_1_pre'),
      exposure('test_1', 'test', '2020-01-10T12:00:00'),
      pageview('test_1', '2020-01-10T13:00:00', 't_1_post_a'),
      pageview('test_1', '2020-01-10T13:05:00', 't_1_post_b'),
      pageview('test_2', '2020-01-09T12:00:00', 't_2_pre_a'),
      pageview('test_2', '2020-01-09T12:05:00', 't_2_pre_b'),
      exposure('test_2', 'test', '2020-01-10T12:00:00'),
      pageview('test_2', '2020-01-10T13:00:00', 't_2_post'),
    ],
    lookbackDays: 7,
    type: 'mean',
    steps: ['$pageview'],
    source: { kind: 'distinct', key: '$session_id' },
    expected: [
      { sum: 2, covariate_sum: 2, covariate_sum_squares: 4, covariate_sum_product: 2 },
      { sum: 3, covariate_sum: 3, covariate_sum_squares: 5, covariate_sum_product: 4 },
    ],
  },
  {
    name: 'test_cuped_funnel_metric_collects_covariate_columns',
    events: [
      checkout('control_1', '2020-01-08T12:00:00'),
      exposure('control_1', 'control', '2020-01-10T12:00:00'),
      checkout('control_1', '2020-01-10T13:00:00'),
      exposure('control_2', 'control', '2020-01-10T12:00:00'),
      checkout('control_2', '2020-01-10T13:00:00'),
      checkout('test_1', '2020-01-08T12:00:00'),
      exposure('test_1', 'test', '2020-01-10T12:00:00'),
      checkout('test_2', '2020-01-08T12:00:00'),
      exposure('test_2', 'test', '2020-01-10T12:00:00'),
      checkout('test_2', '2020-01-10T13:00:00'),
    ],
    lookbackDays: 7,
    type: 'funnel',
    steps: ['checkout completed'],
    expected: [
      { sum: 2, covariate_sum: 1, covariate_sum_squares: 1, covariate_sum_product: 1 },
      { sum: 1, covariate_sum: 2, covariate_sum_squares: 2, covariate_sum_product: 1 },
    ],
  },
  {
    name: 'test_cuped_uses_pre_exposure_window_relative_to_first_exposure (funnel)',
    events: [
      checkout('control_1', '2020-01-07T12:00:00'),
      checkout('control_1', '2020-01-09T12:00:00'),
      exposure('control_1', 'control', '2020-01-10T12:00:00'),
      checkout('control_1', '2020-01-11T12:00:00'),
      exposure('control_1', 'control', '2020-01-12T12:00:00'),
      checkout('test_1', '2020-01-09T12:00:00'),
      exposure('test_1', 'test', '2020-01-10T12:00:00'),
      checkout('test_1', '2020-01-11T12:00:00'),
    ],
    lookbackDays: 2,
    type: 'funnel',
    steps: ['checkout completed'],
    expected: [
      { sum: 1, covariate_sum: 1, covariate_sum_product: 1 },
      { sum: 1, covariate_sum: 1, covariate_sum_product: 1 },
    ],
  },
  {
    name: 'test_cuped_multi_step_funnel_uses_last_step_for_covariate',
    events: [
      signup('control_1', '2020-01-08T12:00:00'),
      exposure('control_1', 'control', '2020-01-10T12:00:00'),
      signup('control_1', '2020-01-10T13:00:00'),
      checkout('control_1', '2020-01-10T13:30:00'),
      checkout('control_2', '2020-01-08T12:00:00'),
      exposure('control_2', 'control', '2020-01-10T12:00:00'),
      signup('control_2', '2020-01-10T13:00:00'),
      checkout('control_2', '2020-01-10T13:30:00'),
      exposure('test_1', 'test', '2020-01-10T12:00:00'),
      signup('test_1', '2020-01-10T13:00:00'),
    ],
    lookbackDays: 7,
    type: 'funnel',
    steps: ['signup', 'checkout completed'],
    expected: [
      { sum: 2, covariate_sum: 1, covariate_sum_product: 1 },
      { sum: 0, covariate_sum: 0, covariate_sum_product: 0 },
    ],
  },
]

function rows(team: number, events: readonly Event[]): EventRow[] {
  const persons = [...new Set(events.map(([person]) => person))]
  return events.map(([person, event, time, properties = {}]) => ({
    uuid: randomUUID(),
    team_id: team,
    event,
    distinct_id: person,
    person_id: `00000000-0000-4000-8000-${String(team * 100 + persons.indexOf(person)).padStart(12, '0')}`,
    properties: JSON.stringify(properties),
    timestamp: at(time),
    created_at: at(time),
    groups: ['', '', '', '', ''],
    elements_chain: '',
  }))
}

/** The runner's query for a scenario: exposures over the experiment, metric events from the lookback before its start. */
function query(team: number, s: Scenario): ExperimentVariantsQuery {
  const lookback = s.lookbackDays * DAY
  return {
    teamId: team,
    groupTypeIndex: null,
    exposure: { teamId: team, event: '$feature_flag_called', after: START, before: END + 1, properties: [{ key: '$feature_flag_response', operator: 'exact', value: ['control', 'test'] }] },
    variantProperty: '$feature_flag_response',
    breakdowns: [],
    metric: {
      after: START - lookback,
      before: END + 1 + (s.windowMs ?? 0),
      steps: s.steps.map((event) => ({ event })),
      valueProperties: s.source && 'property' in s.source ? [[s.source.property]] : [],
      distinctKeys: s.source?.kind === 'distinct' ? [s.source.key] : [],
    },
    variants: ['control', 'test'],
    multipleVariantHandling: 'exclude',
    aggregation: { type: s.type, sources: s.source ? [s.source] : [], windowMs: s.windowMs ?? null, lowerPercentile: null, upperPercentile: null, ignoreZeros: false, cupedLookbackMs: lookback },
  }
}

t.test("both stores give PostHog's CUPED sums for the events of its query tests", { skip: clickhouseUnavailableReason() ?? false }, async (t) => {
  const fixture = SCENARIOS.flatMap((s, k) => rows(k + 1, s.events))
  const { sqlite, clickhouse: store } = await bothEventStores(t, fixture, 'skylark_experiment_cuped')

  for (const [k, s] of SCENARIOS.entries()) {
    for (const [name, events] of [
      ['SQLite', sqlite],
      ['ClickHouse', store],
    ] as const) {
      const variants = (await events.experimentVariants(query(k + 1, s))).variants
      s.expected.forEach((want, i) => t.match(variants[i], want, `${s.name} on ${name}: ${variants[i].key}`))
    }
  }
})
