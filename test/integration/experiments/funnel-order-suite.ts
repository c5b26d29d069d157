/**
 * Funnel metrics of each order end to end, once per event store: persons of a control/test flag
 * each follow one of a few timelines after their flag call (the exposure, X) through a funnel of
 * "viewed pricing" (V) then "purchased" (P), with clicks no step matches; `POST …/query/` must answer the
 * step counts worked out by hand below from PostHog's aggregate_funnel UDF (its step 0 the exposure),
 * with and without a one-hour conversion window. Test has two persons of each timeline, control one.
 */
import type { Test } from 'tap'
import { experimentServer, type BatchEvent, type ExperimentServer } from './fixture.js'
import type { StoreSetup } from './query-suite.js'

const SECOND = 1000
const HOUR = 3_600_000

/** Where each timeline's events fall after the exposure (ms), and the step it reaches (−1 none, 0 V, 1 P). */
interface Timeline {
  events: Array<['X' | 'V' | 'P' | 'click', number]>
  ordered: number
  orderedHour: number
  strict: number
  unordered: number
  strictHour: number
  unorderedHour: number
}

const TIMELINES: Record<string, Timeline> = {
  inOrder: { events: [['V', 10 * SECOND], ['P', 20 * SECOND]], ordered: 1, orderedHour: 1, strict: 1, unordered: 1, strictHour: 1, unorderedHour: 1 },
  // P clears the exposure's chain in a strict funnel; unordered, the three steps are there.
  reversed: { events: [['P', 5 * SECOND], ['V', 10 * SECOND]], ordered: 0, orderedHour: 0, strict: -1, unordered: 1, strictHour: -1, unorderedHour: 1 },
  repeated: { events: [['V', 10 * SECOND], ['V', 15 * SECOND], ['P', 20 * SECOND]], ordered: 1, orderedHour: 1, strict: 1, unordered: 1, strictHour: 1, unorderedHour: 1 },
  // Clicks match no step: they are not read, so they break nothing.
  clicks: { events: [['V', 10 * SECOND], ['click', 12 * SECOND], ['P', 20 * SECOND]], ordered: 1, orderedHour: 1, strict: 1, unordered: 1, strictHour: 1, unorderedHour: 1 },
  // Another exposure is an event of step 0: it restarts a strict chain.
  reexposed: { events: [['V', 10 * SECOND], ['X', 15 * SECOND], ['P', 20 * SECOND]], ordered: 1, orderedHour: 1, strict: 0, unordered: 1, strictHour: 0, unorderedHour: 1 },
  // V and P in one millisecond: taken in step order, whichever uuid is the smaller.
  together: { events: [['P', 10 * SECOND], ['V', 10 * SECOND]], ordered: 1, orderedHour: 1, strict: 1, unordered: 1, strictHour: 1, unorderedHour: 1 },
  // Unordered, P with the exposure is two of the three steps: step 0.
  purchaseOnly: { events: [['P', 10 * SECOND]], ordered: -1, orderedHour: -1, strict: -1, unordered: 0, strictHour: -1, unorderedHour: 0 },
  // Two hours on: past a one-hour window from the exposure, though V and P are within one of each other.
  late: { events: [['V', 2 * HOUR], ['P', 2 * HOUR + 10 * SECOND]], ordered: 1, orderedHour: -1, strict: 1, unordered: 1, strictHour: -1, unorderedHour: 0 },
  // Exposed again two hours on: the window runs from that exposure (ordered too: a chain starts at each one).
  lateReexposed: { events: [['X', 2 * HOUR], ['V', 2 * HOUR + 10 * SECOND], ['P', 2 * HOUR + 20 * SECOND]], ordered: 1, orderedHour: 1, strict: 1, unordered: 1, strictHour: 1, unorderedHour: 1 },
  // A purchase before the exposure is not read.
  purchasedBefore: { events: [['P', -60 * SECOND], ['V', 10 * SECOND]], ordered: 0, orderedHour: 0, strict: 0, unordered: 0, strictHour: 0, unorderedHour: 0 },
  // P exactly an hour after the exposure: the window is inclusive at its end, in every order.
  windowEnd: { events: [['V', HOUR / 2], ['P', HOUR]], ordered: 1, orderedHour: 1, strict: 1, unordered: 1, strictHour: 1, unorderedHour: 1 },
  // 1 ms later: past it; unordered, V and P alone are within it (step 0).
  windowPast: { events: [['V', HOUR / 2], ['P', HOUR + 1]], ordered: 1, orderedHour: 0, strict: 1, unordered: 1, strictHour: 0, unorderedHour: 0 },
  exposedOnly: { events: [], ordered: -1, orderedHour: -1, strict: -1, unordered: -1, strictHour: -1, unorderedHour: -1 },
}
const PERSONS = { control: 1, test: 2 } as const
type Variant = keyof typeof PERSONS
type Reached = 'ordered' | 'orderedHour' | 'strict' | 'unordered' | 'strictHour' | 'unorderedHour'

/** A variant's sums as the answer has them, from each timeline's step reached. */
function expected(variant: Variant, reached: Reached | ((t: Timeline) => number)) {
  const stepOf = typeof reached === 'function' ? reached : (t: Timeline) => t[reached]
  const steps = Object.values(TIMELINES).flatMap((t) => new Array<number>(PERSONS[variant]).fill(stepOf(t)))
  const completed = steps.filter((s) => s === 1).length
  return { number_of_samples: steps.length, sum: completed, sum_squares: completed, step_counts: [steps.filter((s) => s >= 0).length, completed] }
}

export function funnelOrderSuite(t: Test, setup: StoreSetup): void {
  let f: ExperimentServer
  let experimentId = 0
  const start = Date.now() - 4 * HOUR
  const exposedAt = start + HOUR / 2

  function events(): BatchEvent[] {
    const out: BatchEvent[] = []
    const call = (id: string, at: number, variant: Variant) =>
      out.push({ event: '$feature_flag_called', distinct_id: id, at, properties: { $feature_flag: 'fo-flag', $feature_flag_response: variant } })
    const names = { V: 'viewed pricing', P: 'purchased', click: 'clicked' } as const
    for (const variant of ['control', 'test'] as const) {
      for (const [name, timeline] of Object.entries(TIMELINES)) {
        for (let i = 0; i < PERSONS[variant]; i++) {
          const id = `fo-${variant}-${name}-${i}`
          call(id, exposedAt, variant)
          for (const [step, after] of timeline.events) {
            if (step === 'X') call(id, exposedAt + after, variant)
            else out.push({ event: names[step], distinct_id: id, at: exposedAt + after })
          }
        }
      }
    }
    return out
  }

  t.before(async () => {
    f = await experimentServer(setup.env())
    experimentId = await f.createExperiment({ name: 'Funnel orders', feature_flag_key: 'fo-flag', start_date: new Date(start).toISOString() })
    await f.sendAll(events())
  })
  t.teardown(() => f?.close())

  const funnel = (order: string, more: object = {}) => ({
    kind: 'ExperimentMetric',
    metric_type: 'funnel',
    funnel_order_type: order,
    series: [
      { kind: 'EventsNode', event: 'viewed pricing' },
      { kind: 'EventsNode', event: 'purchased' },
    ],
    ...more,
  })
  const query = (metric: object) => f.api('POST', `${f.base}/query/`, { query: { kind: 'ExperimentQuery', experiment_id: experimentId, metric } })
  const sums = (v: any) => ({ number_of_samples: v.number_of_samples, sum: v.sum, sum_squares: v.sum_squares, step_counts: v.step_counts })
  const check = async (t: Test, metric: object, reached: Parameters<typeof expected>[1]) => {
    const res = await query(metric)
    t.equal(res.status, 200, res.text)
    t.same(sums(res.body.baseline), expected('control', reached), 'control')
    t.same(res.body.variant_results.map(sums), [expected('test', reached)], 'test')
  }
  const hour = { conversion_window: 1, conversion_window_unit: 'hour' }

  t.test('an ordered funnel (the default): chains from each exposure, steps out of sequence passed over, one millisecond in step order', async (t) => {
    await check(t, funnel('ordered'), 'ordered')
    const { funnel_order_type: _, ...absent } = funnel('ordered')
    await check(t, absent, 'ordered')
  })

  t.test('an ordered funnel within an hour of the exposure that started the chain, inclusive at its end', async (t) => {
    await check(t, funnel('ordered', hour), 'orderedHour')
  })

  t.test('an ordered funnel with a window of 0: only steps of the exposure’s millisecond, none here', async (t) => {
    await check(t, funnel('ordered', { conversion_window: 0, conversion_window_unit: 'hour' }), () => -1)
  })

  t.test('a strict funnel: any exposure or step event out of sequence breaks the chain, events of no step do not', async (t) => {
    await check(t, funnel('strict'), 'strict')
  })

  t.test('a strict funnel within an hour of the exposure that started the chain', async (t) => {
    await check(t, funnel('strict', hour), 'strictHour')
  })

  t.test('an unordered funnel: the steps, the exposure one of them, in any order', async (t) => {
    await check(t, funnel('unordered'), 'unordered')
  })

  t.test('an unordered funnel within an hour: the steps held within one hour of each other', async (t) => {
    await check(t, funnel('unordered', hour), 'unorderedHour')
  })

  t.test('steps by action and with property filters: an event their conditions leave out is not read', async (t) => {
    const action = await f.api('POST', `${f.base}/actions/`, { name: 'Purchased', steps: [{ event: 'purchased' }] })
    t.equal(action.status, 201, action.text)
    const byAction = (order: string) =>
      funnel(order, { series: [{ kind: 'EventsNode', event: 'viewed pricing' }, { kind: 'ActionsNode', id: action.body.id }] })
    await check(t, byAction('strict'), 'strict')
    await check(t, byAction('unordered'), 'unordered')
    // No purchase has the property: purchases match no step, so they break no strict chain (V is reached).
    const filtered = funnel('strict', {
      series: [
        { kind: 'EventsNode', event: 'viewed pricing' },
        { kind: 'EventsNode', event: 'purchased', properties: [{ key: 'plan', operator: 'exact', value: 'pro', type: 'event' }] },
      ],
    })
    await check(t, filtered, (timeline) => (timeline.events.some(([step]) => step === 'V') ? 0 : -1))
  })

  t.test('CUPED adjusts ordered and strict funnels, not unordered ones (PostHog’s _metric_supports_cuped)', async (t) => {
    const patchStats = async (stats_config: object) => t.equal((await f.api('PATCH', `${f.experiments}${experimentId}/`, { stats_config })).status, 200)
    await patchStats({ cuped: { enabled: true } })
    const covariates = (v: any) => [v.covariate_sum, v.covariate_sum_squares, v.covariate_sum_product]
    // The covariate is whether the last step's event happened in the lookback: the purchase before the exposure.
    for (const order of ['ordered', 'strict'] as const) {
      const body = (await query(funnel(order))).body
      t.same([covariates(body.baseline), covariates(body.variant_results[0])], [[1, 1, 0], [2, 2, 0]], order)
      t.same(sums(body.baseline), expected('control', order), `${order}: the sums unchanged`)
    }
    const unordered = (await query(funnel('unordered'))).body
    t.same([covariates(unordered.baseline), covariates(unordered.variant_results[0])], [[null, null, null], [null, null, null]])
    t.same(sums(unordered.variant_results[0]), expected('test', 'unordered'))
    await patchStats({})
  })

  t.test('an order PostHog does not know is refused', async (t) => {
    const res = await query(funnel('sideways'))
    t.match(res, { status: 400, body: { type: 'validation_error', code: 'invalid', detail: 'funnel_order_type must be one of ordered, unordered, strict.' } })
  })
}
