import t from 'tap'
import { distinctKeys, metricSteps, planMetric, valueFields, valueProperties } from '../../../src/experiments/query/metric.js'
import type { PersonLookup } from '../../../src/experiments/metrics.js'
import type { PersonProperty, PropertyPath } from '../../../src/storage/events/index.js'

const noActions = () => null
const mean = (over: Record<string, unknown>) =>
  planMetric({ kind: 'ExperimentMetric', metric_type: 'mean', source: { kind: 'EventsNode', event: 'purchase', math: 'sum', math_property: 'amount' }, ...over }, noActions)

t.test("winsorisation bounds are read as PostHog's mean query builder reads them: any number from 0 to 1, 0 included", async (t) => {
  t.match(mean({}), { lowerPercentile: null, upperPercentile: null, ignoreZeros: false, sources: [{ kind: 'sum', property: 'amount' }] })
  t.match(mean({ lower_bound_percentile: 0.05, upper_bound_percentile: 0.95, ignore_zeros: true }), { lowerPercentile: 0.05, upperPercentile: 0.95, ignoreZeros: true })
  t.match(mean({ upper_bound_percentile: 0 }), { upperPercentile: 0 }, 'a bound of 0 is quantileExact(0), not "no bound"')
  for (const bad of [-0.1, 1.5, '0.9']) {
    t.throws(() => mean({ upper_bound_percentile: bad }), { code: 'invalid', detail: 'upper_bound_percentile must be a number between 0 and 1.' }, JSON.stringify(bad))
  }
})

t.test('breakdowns are the event properties of breakdownFilter.breakdowns, at most 3; other types are refused', async (t) => {
  t.same(mean({}).breakdowns, [], 'no breakdownFilter')
  t.same(mean({ breakdownFilter: null }).breakdowns, [])
  t.same(mean({ breakdownFilter: { breakdown_limit: 5 } }).breakdowns, [], 'a filter without breakdowns')
  t.same(mean({ breakdownFilter: { breakdowns: [{ property: '$browser' }, { property: 'plan', type: 'event' }, { property: 7, type: null }] } }).breakdowns, ['$browser', 'plan', '7'])
  const four = [1, 2, 3, 4].map((n) => ({ property: `p${n}` }))
  t.throws(() => mean({ breakdownFilter: { breakdowns: four } }), { code: 'invalid', detail: 'Maximum of 3 breakdowns are supported for experiment metrics' })
  for (const type of ['person', 'group', 'session', 'cohort', 'hogql', 'event_metadata', 'data_warehouse']) {
    t.throws(
      () => mean({ breakdownFilter: { breakdowns: [{ property: 'x', type }] } }),
      { code: 'invalid', detail: `Breakdowns of type "${type}" are not supported in experiment metrics here; only event, person and group property breakdowns are.` },
      type,
    )
  }
  t.throws(() => mean({ breakdownFilter: { breakdowns: [{ type: 'event' }] } }), { code: 'invalid', detail: 'A breakdown property must be a string or an integer.' })
  t.throws(() => mean({ breakdownFilter: { breakdowns: '$browser' } }), { code: 'invalid', detail: 'breakdownFilter.breakdowns must be a list.' })
  t.throws(() => mean({ breakdownFilter: ['$browser'] }), { code: 'invalid', detail: 'breakdownFilter must be an object.' })
  t.throws(() => mean({ breakdownFilter: { breakdowns: ['$browser'] } }), { code: 'invalid', detail: 'A breakdown must be an object.' })
})

t.test("math types are read as PostHog's base_query_utils reads them: dau distinct persons, unique_group distinct keys of a truthy type", async (t) => {
  const math = (source: Record<string, unknown>) => mean({ source: { kind: 'EventsNode', event: 'purchase', ...source } }).sources[0]
  t.same(math({ math: 'dau' }), { kind: 'distinct', key: 'person' })
  t.same(math({ math: 'unique_session' }), { kind: 'distinct', key: '$session_id' })
  t.same(math({ math: 'unique_group', math_group_type_index: 2 }), { kind: 'distinct', key: '$group_2' })
  t.same(math({ math: 'unique_group', math_group_type_index: 0 }), { kind: 'any' }, 'type 0 is falsy: the constant 1, counted once')
  t.same(math({ math: 'unique_group' }), { kind: 'any' })
  t.throws(() => math({ math: 'unique_group', math_group_type_index: 5 }), { code: 'invalid', detail: 'math_group_type_index must be one of 0, 1, 2, 3, 4.' })
  t.same(math({ math: 'total' }), { kind: 'count' })
  t.same(math({ math: 'sum' }), { kind: 'count' }, 'a sum without a property sums 1 an event')
})

t.test("a mean of a session property is a session property metric as PostHog's is_session_property_metric reads one: $session_duration however typed, the others it allows typed session_properties", async (t) => {
  const session = (source: Record<string, unknown>) => mean({ source: { kind: 'EventsNode', event: '$pageview', math_property: '$session_duration', ...source } })
  const duration = (aggregation: string) => [{ kind: 'session', sessionProperty: '$session_duration', aggregation }]
  t.same(session({ math: 'sum', math_property_type: 'session_properties' }).sources, duration('sum'))
  t.same(session({ math: 'avg' }).sources, duration('avg'), 'without math_property_type too')
  t.same(session({ math: 'max', math_property_type: 'event_properties' }).sources, duration('max'), 'whatever its type')
  t.same(session({ math: 'total' }).sources, duration('sum'), "total: the default aggregation, a sum of the sessions' values")
  t.same(session({ math: 'dau' }).sources, duration('distinct'), 'a distinct count of their values')
  const plan = session({ math: 'min' })
  t.same([plan.steps, valueProperties(plan), distinctKeys(plan)], [[{ event: '$pageview', properties: [] }], [], ['$session_id']], 'the sessions are read from each event')
  for (const property of ['$pageview_count', '$autocapture_count', '$screen_count', '$num_uniq_urls', '$is_bounce']) {
    t.same(session({ math: 'avg', math_property: property, math_property_type: 'session_properties' }).sources, [{ kind: 'session', sessionProperty: property, aggregation: 'avg' }], property)
    t.same(session({ math: 'avg', math_property: property }).sources, [{ kind: 'avg', property }], `${property} untyped: an event property`)
  }
  t.same(session({ math: 'sum', math_property: '$channel_type', math_property_type: 'session_properties' }).sources, [{ kind: 'sum', property: '$channel_type' }], 'a session property PostHog does not allow: read from the events, as PostHog reads it')
  t.throws(() => session({ math: 'hogql', math_hogql: 'sum(1)' }), { code: 'invalid', detail: 'HogQL math over a session property is not supported here.' })
  t.same(mean({ source: { kind: 'EventsNode', math: 'sum', math_property: '$foo', math_property_type: 'person_properties' } }).sources, [{ kind: 'sum', property: '$foo' }], 'another type: no session metric')
  const ratio = planMetric({ kind: 'ExperimentMetric', metric_type: 'ratio', numerator: { kind: 'EventsNode', math: 'sum', math_property: '$session_duration' }, denominator: { kind: 'EventsNode' } }, noActions)
  t.same(ratio.sources[0], { kind: 'sum', property: '$session_duration' }, "a ratio reads it as an event property, as PostHog's ratio builder does")
})

t.test("HogQL math is read from math_hogql; without one PostHog's value is 1 an event, and a text it can't read is a 400", async (t) => {
  const plan = (source: Record<string, unknown>) => mean({ source: { kind: 'EventsNode', event: 'purchase', math: 'hogql', ...source } })
  const priced = plan({ math_hogql: 'avg(properties.price * properties.item.qty)' })
  t.match(priced.sources[0], { kind: 'hogql', hogql: { aggregation: 'avg', expr: { op: '*' } } })
  t.same(valueProperties(priced), [['price'], ['item', 'qty']], 'the store reads the properties (paths) the expression does')
  const fields = plan({ math_hogql: "sum(if(event = 'purchase' and distinct_id != '', properties.price, 0))" })
  t.same([valueProperties(fields), valueFields(fields)], [[['price']], ['event', 'distinct_id']], 'and the fields')
  for (const none of [undefined, null, '']) t.same(plan({ math_hogql: none }).sources[0], { kind: 'count' }, String(none))
  t.throws(() => plan({ math_hogql: 7 }), { code: 'invalid', detail: 'math_hogql must be a string.' })
  t.throws(() => plan({ math_hogql: 'sum(person.properties.x)' }), { code: 'invalid', detail: 'math_hogql: Person properties are not read here.' }, 'person properties without persons.db')
  t.throws(() => plan({ math_hogql: 'sum(person.id)' }), { code: 'invalid', detail: /^math_hogql: Of the person, skylark reads its properties/ })
})

t.test('HogQL math on person properties carries them as the lookup resolved them; the event properties and distinct id are what each event carries back', async (t) => {
  const resolved: PersonProperty[] = []
  const lookup = { personProperty: (path: PropertyPath): PersonProperty => (resolved.push({ path, values: [{ text: 'pro', ids: ['u1'] }] }), resolved.at(-1)!) } as unknown as PersonLookup
  const source = { kind: 'EventsNode', event: 'purchase', math: 'hogql', math_hogql: "sum(if(person.properties.plan = 'pro', properties.price, 0) + person.properties.ltv.usd)" }
  const p = planMetric({ kind: 'ExperimentMetric', metric_type: 'mean', source }, noActions, lookup)
  t.same(resolved.map((r) => r.path), [['plan'], ['ltv', 'usd']], "each person property the expression reads, looked up once")
  t.match(p.sources[0], { kind: 'hogql', persons: resolved })
  t.same([valueProperties(p), valueFields(p)], [[['price']], ['distinct_id']], "the event's properties only, and its distinct id, by which its person's are read")
})

t.test("retention metrics are read as PostHog's retention query builder reads them: the start and completion steps, the window and the start handling", async (t) => {
  const retention = (over: Record<string, unknown>) =>
    planMetric(
      {
        kind: 'ExperimentMetric',
        metric_type: 'retention',
        start_event: { kind: 'EventsNode', event: 'signup' },
        completion_event: { kind: 'EventsNode', event: 'login', properties: [{ key: 'plan', value: 'pro', operator: 'exact', type: 'event' }] },
        retention_window_start: 1,
        retention_window_end: 7,
        retention_window_unit: 'day',
        start_handling: 'first_seen',
        ...over,
      },
      noActions,
    )
  t.match(retention({}), {
    type: 'retention',
    steps: [{ event: 'signup' }, { event: 'login', properties: [{ key: 'plan' }] }],
    sources: [],
    windowMs: null,
    retentionWindow: { start: 1, end: 7, unit: 'day', startHandling: 'first_seen' },
  })
  t.match(retention({ conversion_window: 2, conversion_window_unit: 'hour', start_handling: 'last_seen' }), { windowMs: 7_200_000, retentionWindow: { startHandling: 'last_seen' } })
  t.throws(() => retention({ retention_window_unit: 'fortnight' }), { code: 'invalid', detail: /^retention_window_unit must be one of second, minute, hour, day, week, month/ })
  t.throws(() => retention({ retention_window_end: 1.5 }), { code: 'invalid', detail: 'retention_window_end must be an integer.' })
  t.throws(() => retention({ retention_window_start: undefined }), { code: 'invalid', detail: 'retention_window_start must be an integer.' })
  t.throws(() => retention({ start_handling: 'any' }), { code: 'invalid', detail: 'start_handling must be first_seen or last_seen.' })
  t.throws(() => retention({ start_event: { kind: 'ExperimentDataWarehouseNode', table_name: 't' } }), { code: 'invalid', detail: /Data warehouse/ })
  // Started at the exposure (ExperimentExposureNode): the completion is the one step of the plan, and the
  // steps read put the exposure's own filter before it.
  const anchored = retention({ start_event: { kind: 'ExperimentExposureNode' } })
  t.match(anchored, { steps: [{ event: 'login' }], startsAtExposure: true, retentionWindow: { start: 1, end: 7, unit: 'day', startHandling: 'first_seen' } })
  t.equal(anchored.steps.length, 1)
  t.equal(retention({}).startsAtExposure, undefined)
  const exposure = { teamId: 1, event: '$feature_flag_called', after: 0, before: 1, properties: [{ key: '$feature_flag', operator: 'exact' as const, value: 'f' }] }
  t.same(metricSteps(anchored, exposure), [{ event: '$feature_flag_called', properties: exposure.properties }, anchored.steps[0]])
  t.same(metricSteps(retention({}), exposure), retention({}).steps, "a start event: the plan's steps")
})

t.test("a funnel's funnel_order_type is read as PostHog's StepOrderValue: ordered (also when absent or null), unordered, strict", async (t) => {
  const funnel = (order: unknown) =>
    planMetric({ kind: 'ExperimentMetric', metric_type: 'funnel', funnel_order_type: order, series: [{ kind: 'EventsNode', event: 'view' }, { kind: 'EventsNode', event: 'buy' }] }, noActions)
  t.match(funnel(undefined), { type: 'funnel', funnelOrder: 'ordered', steps: [{ event: 'view' }, { event: 'buy' }] })
  t.match(funnel(null), { funnelOrder: 'ordered' })
  t.match(funnel('unordered'), { funnelOrder: 'unordered' })
  t.match(funnel('strict'), { funnelOrder: 'strict' })
  t.throws(() => funnel('Strict'), { code: 'invalid', detail: 'funnel_order_type must be one of ordered, unordered, strict.' })
  t.throws(() => funnel(1), { code: 'invalid' })
})

t.test("a conversion window of 0 or less is none for means, ratios and retention, as PostHog's `> 0` test reads it; a funnel keeps it", async (t) => {
  t.match(mean({ conversion_window: 2, conversion_window_unit: 'hour' }), { windowMs: 7_200_000 })
  t.match(mean({ conversion_window: 0, conversion_window_unit: 'hour' }), { windowMs: null }, 'falsy: events up to the end')
  t.match(mean({ conversion_window: -3, conversion_window_unit: 'day' }), { windowMs: null })
  const ratio = planMetric({ kind: 'ExperimentMetric', metric_type: 'ratio', numerator: { kind: 'EventsNode', event: 'a' }, denominator: { kind: 'EventsNode', event: 'b' }, conversion_window: 0, conversion_window_unit: 'day' }, noActions)
  t.equal(ratio.windowMs, null)
  const funnel = planMetric({ kind: 'ExperimentMetric', metric_type: 'funnel', series: [{ kind: 'EventsNode', event: 'buy' }], conversion_window: 0, conversion_window_unit: 'day' }, noActions)
  t.equal(funnel.windowMs, 0, "aggregate_funnel_array is handed the window as set (`is not None`)")
})
