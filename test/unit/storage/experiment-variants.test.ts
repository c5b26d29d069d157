/**
 * An experiment metric's per-variant sums are aggregated where each store reads its events: SQLite in Node
 * beside its reads, ClickHouse in SQL (per entity, and per variant where nothing needs every value). Both must
 * give the same sums for the same events: every source math, windows, winsorisation, ratios, funnels (of each
 * order) with steps sharing a millisecond, both multiple-variant handlings and group entities, and each of them broken
 * down by the exposure's properties (a text, a number, an empty text, missing and null; a person's later
 * exposure with another value, and two at the same millisecond), retention metrics' outcomes, and only the
 * entities first exposed by a cutoff (`only_count_matured_users`), means of each session property, and HogQL
 * math on person properties.
 */
import { randomUUID } from 'node:crypto'
import t from 'tap'
import { offsetChanges } from '../../../src/common/time-zones.js'
import type { BounceRule, EventRow, ExperimentVariantsQuery, PersonProperty, RetentionWindow, SessionMath, SessionProperty, SourceMath } from '../../../src/storage/events/index.js'
import { quantileExact } from '../../../src/storage/events/experiment-aggregate.js'
import { parseHogqlMath } from '../../../src/storage/events/hogql-math.js'
import { sourceFields, sourceProperties } from '../../../src/storage/events/experiment-rows.js'
import { clickhouseUnavailableReason } from '../../helpers/clickhouse.js'
import { bothEventStores } from '../../helpers/event-stores.js'

const TEAM = 4
const T0 = Date.parse('2024-06-01T00:00:00Z')
const VARIANTS = ['control', 'test']
const person = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`

/**
 * 60 persons (a few exposed to both variants, a few never), their events before and after exposure. Amounts
 * are multiples of 0.5, so sums are exact whatever order each store adds them in.
 */
function rows(): EventRow[] {
  const out: EventRow[] = []
  const add = (n: number, event: string, at: number, properties: Record<string, unknown>) =>
    out.push({
      uuid: randomUUID(),
      team_id: TEAM,
      event,
      distinct_id: `d-${n}`,
      person_id: person(n),
      properties: JSON.stringify(properties),
      timestamp: at,
      created_at: at,
      groups: [`org-${n % 7}`, '', '', '', ''],
      elements_chain: '',
    })
  const browsers: unknown[] = ['Chrome', 'Safari', 42, undefined, null, '']
  for (let n = 0; n < 60; n++) {
    const exposed = T0 + n * 60_000
    const variant = VARIANTS[n % 2]
    const call = (at: number, v: string, more: Record<string, unknown>) => add(n, '$feature_flag_called', at, { $feature_flag: 'f', $feature_flag_response: v, ...more })
    const browser = browsers[n % 6] === undefined ? {} : { $browser: browsers[n % 6] }
    if (n % 10 !== 9) call(exposed, variant, { ...browser, plan: n % 3 === 0 ? 'pro' : 'free' })
    // The other variant, later (n % 12 = 0) or earlier than the first call, with another browser.
    if (n % 6 === 0) call(exposed + (n % 12 === 0 ? 5000 : -5000), VARIANTS[(n + 1) % 2], { $browser: 'Edge' })
    // Two exposures in one millisecond: the smaller text is the group on both stores.
    if (n === 19) for (const b of ['Zeta', 'Alpha']) call(exposed, variant, { $browser: b, plan: b })
    add(n, 'clicked', exposed - 1000, { amount: 100, $session_id: 'before' })
    for (let c = 0; c < n % 5; c++) add(n, 'clicked', exposed + 1000 * (c + 1) * (n % 3), { amount: (n % 4) * 2.5, $session_id: `s${c % 2}` })
    if (n % 3 === 0) add(n, 'viewed', exposed + 2000, { amount: n % 7 === 0 ? 'n/a' : n })
    // A purchase in the same millisecond as the view for some: the step order falls back on the uuid.
    if (n % 4 !== 3) add(n, 'purchased', exposed + (n % 5 === 0 ? 2000 : 9000), { amount: n % 8 })
    // Sessions (session durations): browsing in a session of its own that a pageview 2.5 s before exposure
    // opened and the last browse n % 4 + 1 s later closes, and for n % 5 = 0 one more session, whose first
    // browse came before exposure (not counted) though it browsed after too.
    // Inside those sessions, for the other session properties: a second pageview (n % 4 = 0), an autocapture on the
    // first pageview's URL (n % 5 = 1), a screen (n % 6 = 1) and a scroll 9 s after exposure, which makes the
    // session 12 s long (n % 8 = 1); the first pageview's URL is a number for n % 7 = 0 and empty for n % 7 = 1,
    // neither of which counts as a URL.
    if (n % 3 !== 2) {
      const own = { $session_id: `p${n}-a` }
      add(n, '$pageview', exposed - 2500, { ...own, $current_url: n % 7 === 0 ? 42 : n % 7 === 1 ? '' : 'https://a.test/1' })
      if (n % 4 === 0) add(n, '$pageview', exposed + 100, { ...own, $current_url: 'https://a.test/2' })
      if (n % 5 === 1) add(n, '$autocapture', exposed + 200, { ...own, $current_url: 'https://a.test/1' })
      if (n % 6 === 1) add(n, '$screen', exposed + 300, own)
      if (n % 8 === 1) add(n, 'scrolled', exposed + 9000, own)
      for (let b = 0; b <= n % 3; b++) add(n, 'browsed', exposed + 500 + b * 1000 * ((n % 4) + 1), own)
    }
    if (n % 5 === 0) for (const at of [exposed - 300, exposed + 40_000]) add(n, 'browsed', at, { $session_id: `p${n}-b` })
  }
  return out
}

function query(over: Partial<ExperimentVariantsQuery['aggregation']>, more: Partial<ExperimentVariantsQuery> = {}): ExperimentVariantsQuery {
  const sources: SourceMath[] = over.sources ? [...over.sources] : [{ kind: 'count' }]
  const type = over.type ?? 'mean'
  const steps = type === 'funnel' ? [{ event: 'clicked' }, { event: 'viewed' }, { event: 'purchased' }] : type === 'ratio' ? [{ event: 'purchased' }, { event: 'clicked' }] : [{ event: 'clicked' }]
  const props = sourceProperties(sources)
  return {
    teamId: TEAM,
    groupTypeIndex: null,
    exposure: { teamId: TEAM, event: '$feature_flag_called', after: T0, before: T0 + 3_600_000, properties: [{ key: '$feature_flag_response', operator: 'exact', value: VARIANTS }] },
    variantProperty: '$feature_flag_response',
    breakdowns: [],
    metric: { after: T0, before: T0 + 7_200_000, steps, valueProperties: props, valueFields: sourceFields(sources), distinctKeys: [...new Set(sources.flatMap((s) => (s.kind === 'distinct' ? [s.key] : [])))] },
    variants: VARIANTS,
    multipleVariantHandling: 'exclude',
    aggregation: { type, sources, windowMs: null, lowerPercentile: null, upperPercentile: null, ignoreZeros: false, ...over },
    ...more,
  }
}

/** A query with CUPED's lookback of 1.5 s, its metric events read from that long before the start. */
function cuped(q: ExperimentVariantsQuery, steps?: ExperimentVariantsQuery['metric']['steps']): ExperimentVariantsQuery {
  const lookback = 1500
  return { ...q, metric: { ...q.metric, after: q.metric.after - lookback, steps: steps ?? q.metric.steps }, aggregation: { ...q.aggregation, cupedLookbackMs: lookback } }
}

/** A retention query from `start` to `completion` events, its window's bounds and zone as the runner gives them. */
function retention(start: string, completion: string, window: Partial<RetentionWindow>, more: Partial<ExperimentVariantsQuery> = {}, windowMs: number | null = null): ExperimentVariantsQuery {
  const q = query({ type: 'retention', sources: [], windowMs }, more)
  const w: RetentionWindow = { startHandling: 'first_seen', unit: 'second', start: 1, end: 5, startBefore: T0 + 7_200_000, completionBefore: T0 + 7_200_000, maturedBy: null, offsets: [[T0 - 86_400_000, 0]], ...window }
  return { ...q, metric: { ...q.metric, steps: [{ event: start }, { event: completion }] }, aggregation: { ...q.aggregation, retention: w } }
}
/**
 * A retention query starting at each entity's first exposure (ExperimentExposureNode): the exposure's filter is
 * the start step, first seen, as the runner's metricSteps puts it.
 */
function fromExposure(completion: string, window: Partial<RetentionWindow>, more: Partial<ExperimentVariantsQuery> = {}): ExperimentVariantsQuery {
  const q = retention('', completion, window, more)
  return { ...q, metric: { ...q.metric, steps: [{ event: q.exposure.event ?? null, properties: q.exposure.properties }, { event: completion }] } }
}
const hogql = (text: string): SourceMath => ({ kind: 'hogql', hogql: parseHogqlMath(text) })
/**
 * Person properties as the runner resolves them for HogQL math (PersonProperty): every third person pro, the
 * others free; an ltv of n / 2, which persons n % 5 = 4 lack; a person with ids of no events among them.
 */
const PERSON_PROPERTIES: PersonProperty[] = [
  { path: ['plan'], values: ['pro', 'free'].map((text, r) => ({ text, ids: Array.from({ length: 60 }, (_, n) => n).filter((n) => (n % 3 === 0) === (r === 0)).map((n) => `d-${n}`) })) },
  { path: ['ltv'], values: [...Array.from({ length: 60 }, (_, n) => n).filter((n) => n % 5 !== 4).map((n) => ({ text: String(n / 2), ids: [`d-${n}`] })), { text: '7', ids: ['nobody'] }] },
]
const personHogql = (text: string): SourceMath => ({ kind: 'hogql', hogql: parseHogqlMath(text), persons: PERSON_PROPERTIES })
/** The views (amount `n/a` for n % 7 = 0: no number) as the metric's one step. */
const views = (source: SourceMath, more: Partial<ExperimentVariantsQuery> = {}) =>
  query({ sources: [source] }, { ...more, metric: { ...query({ sources: [source] }).metric, steps: [{ event: 'viewed' }] } })
/**
 * The exposure narrowed to distinct ids (or, `excluded`, to the others), 30,000 that sent nothing among them:
 * ≈400 KB of text in ClickHouse's query.
 */
function manyIds(excluded = false): Partial<ExperimentVariantsQuery> {
  const q = query({})
  const ids = [...Array.from({ length: 30_000 }, (_, i) => `nobody-${i}`), ...Array.from({ length: 40 }, (_, n) => `d-${n}`)]
  return { exposure: { ...q.exposure, properties: [...q.exposure.properties!, { distinctIds: ids, excluded }] } }
}

/** A mean of a session property (SessionMath) over the sessions of `event` (browsing: one session per person). */
const sessions = (aggregation: SessionMath['aggregation'], over: Partial<ExperimentVariantsQuery['aggregation']> = {}, more: Partial<ExperimentVariantsQuery> = {}, event = 'browsed', property: SessionProperty = '$session_duration') =>
  query({ sources: [{ kind: 'session', sessionProperty: property, aggregation }], ...over }, { ...more, metric: { ...query({}).metric, steps: [{ event }], distinctKeys: ['$session_id'] } })
const ofSessions = (property: SessionProperty, aggregation: SessionMath['aggregation'], over: Partial<ExperimentVariantsQuery['aggregation']> = {}) => sessions(aggregation, over, {}, 'browsed', property)

/** A person property's groups as the runner resolves them: gold for n % 3 = 0, basic for n % 3 = 1, the rest no value. */
const TIER = { groupTypeIndex: null, values: [0, 1].map((r) => ({ text: r === 0 ? 'gold' : 'basic', ids: Array.from({ length: 20 }, (_, k) => `d-${3 * k + r}`) })) }
/** A group property's, as the runner resolves them: the organisations (type 0) 0 and 3 large, 1 small, the rest no value. */
const SIZE = { groupTypeIndex: 0, values: [{ text: 'large', ids: ['org-0', 'org-3'] }, { text: 'small', ids: ['org-1'] }] }

/** only_count_matured_users' cutoff on first exposures: person 31 (test, exposed once) is first exposed on the dot. */
const MATURED_BY = T0 + 31 * 60_000
/** A zone 65 s behind UTC: its day starts between person 1's click (+1 s) and purchase (+9 s). */
const SKEWED: RetentionWindow['offsets'] = [[T0 - 86_400_000, -65_000]]

const CASES: Array<[string, ExperimentVariantsQuery]> = [
  ['count', query({})],
  ['sum', query({ sources: [{ kind: 'sum', property: 'amount' }] })],
  ['avg', query({ sources: [{ kind: 'avg', property: 'amount' }] })],
  ['min', query({ sources: [{ kind: 'min', property: 'amount' }] })],
  ['max', query({ sources: [{ kind: 'max', property: 'amount' }] })],
  ['unique sessions', query({ sources: [{ kind: 'distinct', key: '$session_id' }] })],
  ['dau', query({ sources: [{ kind: 'distinct', key: 'person' }] })],
  ['unique groups', query({ sources: [{ kind: 'distinct', key: '$group_0' }] })],
  ['unique groups of type 0 (whether any event)', query({ sources: [{ kind: 'any' }] })],
  ['dau of group entities', query({ sources: [{ kind: 'distinct', key: 'person' }] }, { groupTypeIndex: 0, multipleVariantHandling: 'first_seen' })],
  ['a ratio of purchasers to sessions by a breakdown', query({ type: 'ratio', sources: [{ kind: 'distinct', key: 'person' }, { kind: 'distinct', key: '$session_id' }] }, { breakdowns: ['$browser'] })],
  ['a conversion window', query({ windowMs: 2500 })],
  ['a threshold', query({ sources: [{ kind: 'sum', property: 'amount' }], threshold: 5 })],
  ['a threshold of a count by a breakdown', query({ threshold: 2 }, { breakdowns: ['$browser'] })],
  ['winsorised', query({ sources: [{ kind: 'sum', property: 'amount' }], lowerPercentile: 0.1, upperPercentile: 0.9 })],
  ['winsorised ignoring zeros', query({ upperPercentile: 0.75, ignoreZeros: true })],
  ['a ratio', query({ type: 'ratio', sources: [{ kind: 'sum', property: 'amount' }, { kind: 'count' }] })],
  ['a funnel', query({ type: 'funnel', sources: [] })],
  ['a funnel with a window', query({ type: 'funnel', sources: [], windowMs: 9500 })],
  ['first seen', query({}, { multipleVariantHandling: 'first_seen' })],
  // Every organisation has persons of both variants: counted under the first seen.
  ['group entities', query({ sources: [{ kind: 'sum', property: 'amount' }] }, { groupTypeIndex: 0, multipleVariantHandling: 'first_seen' })],
  ['a breakdown', query({}, { breakdowns: ['$browser'] })],
  ['a breakdown, winsorised in each group', query({ sources: [{ kind: 'sum', property: 'amount' }], lowerPercentile: 0.1, upperPercentile: 0.9 }, { breakdowns: ['$browser'] })],
  ['a ratio by two breakdowns', query({ type: 'ratio', sources: [{ kind: 'sum', property: 'amount' }, { kind: 'count' }] }, { breakdowns: ['$browser', 'plan'] })],
  ['a funnel by a breakdown', query({ type: 'funnel', sources: [] }, { breakdowns: ['$browser'] })],
  // Ordered funnels walk each entity's exposures with its steps' events too (experiment-funnel.ts): a later call
  // (n % 6 = 0 under first seen) starts a chain of its own, a view and a purchase share a millisecond for some
  // (n % 15 = 0), and with a 9 s window n % 5 ≠ 0 purchase exactly at its end.
  ['an ordered funnel, first seen', query({ type: 'funnel', sources: [], funnelOrder: 'ordered' }, { multipleVariantHandling: 'first_seen' })],
  ['an ordered funnel whose 9 s window ends on a purchase, by a breakdown', query({ type: 'funnel', sources: [], windowMs: 9000 }, { breakdowns: ['$browser'] })],
  ['an ordered funnel of the flag call with a window of 0 (n = 19: two calls in one millisecond)', query({ type: 'funnel', sources: [], windowMs: 0 }, { metric: { ...query({}).metric, steps: [{ event: '$feature_flag_called' }] } })],
  ['an ordered funnel of group entities with a window', query({ type: 'funnel', sources: [], windowMs: 9500 }, { groupTypeIndex: 0, multipleVariantHandling: 'first_seen' })],
  // Unordered and strict funnels walk each entity's exposures with its steps' events (experiment-funnel.ts).
  ['an unordered funnel', query({ type: 'funnel', sources: [], funnelOrder: 'unordered' })],
  ['an unordered funnel with a window, by a breakdown', query({ type: 'funnel', sources: [], funnelOrder: 'unordered', windowMs: 9500 }, { breakdowns: ['$browser'] })],
  ['a strict funnel (a view and a purchase in one millisecond for some)', query({ type: 'funnel', sources: [], funnelOrder: 'strict' })],
  // First seen: a later exposure to the other variant (n % 12 = 0) between a view and a purchase breaks the chain.
  ['a strict funnel with a window, first seen', query({ type: 'funnel', sources: [], funnelOrder: 'strict', windowMs: 9500 }, { multipleVariantHandling: 'first_seen' })],
  ['a strict funnel of group entities', query({ type: 'funnel', sources: [], funnelOrder: 'strict' }, { groupTypeIndex: 0, multipleVariantHandling: 'first_seen' })],
  ['CUPED on a strict funnel of two clicks', cuped(query({ type: 'funnel', sources: [], funnelOrder: 'strict' }), [{ event: 'clicked' }, { event: 'clicked' }])],
  ['first seen by a breakdown', query({}, { multipleVariantHandling: 'first_seen', breakdowns: ['$browser'] })],
  // CUPED: the metric events are read from the lookback before the experiment's start, as the runner asks.
  ['CUPED on a sum', cuped(query({ sources: [{ kind: 'sum', property: 'amount' }] }))],
  ['CUPED on unique sessions with a window', cuped(query({ sources: [{ kind: 'distinct', key: '$session_id' }], windowMs: 2500 }))],
  ['CUPED on a winsorised count', cuped(query({ upperPercentile: 0.75, lowerPercentile: 0.2 }))],
  ['CUPED on a funnel of two clicks', cuped(query({ type: 'funnel', sources: [] }), [{ event: 'clicked' }, { event: 'clicked' }])],
  ['CUPED on a one-step funnel by a breakdown', cuped(query({ type: 'funnel', sources: [] }, { breakdowns: ['$browser'] }), [{ event: 'clicked' }])],
  ['CUPED on group entities by a breakdown', cuped(query({ sources: [{ kind: 'count' }] }, { groupTypeIndex: 0, multipleVariantHandling: 'first_seen', breakdowns: ['plan'] }))],
  // Retention: the outcome is computed in Node on both stores from each entity's events in the same order.
  ['retention from a click to a purchase, 1–10 s', retention('clicked', 'purchased', { end: 10 })],
  ['retention from the last click, within a conversion window', retention('clicked', 'purchased', { startHandling: 'last_seen', start: 0, end: 8 }, {}, 2500)],
  ['retention of a click repeated (never itself), same-millisecond clicks', retention('clicked', 'clicked', { start: 0, end: 3 })],
  ['retention of the last of repeated clicks', retention('clicked', 'clicked', { start: 0, end: 3, startHandling: 'last_seen' })],
  ['retention on the same day of a zone, by a breakdown', retention('clicked', 'purchased', { unit: 'day', start: 0, end: 0, offsets: SKEWED }, { breakdowns: ['$browser'] })],
  ['retention within the same hour of a real zone', retention('clicked', 'purchased', { unit: 'hour', start: 0, end: 0, offsets: offsetChanges('Asia/Kolkata', T0 - 86_400_000, T0 + 86_400_000) })],
  ['retention within a minute, starts and completions cut by the end', retention('clicked', 'purchased', { unit: 'minute', start: 0, end: 1, startBefore: T0 + 1_800_000, completionBefore: T0 + 1_805_000 })],
  ['retention of group entities, first seen', retention('clicked', 'purchased', { end: 10 }, { groupTypeIndex: 0, multipleVariantHandling: 'first_seen' })],
  // Anchored on the exposure: every exposed entity counts; its first exposure's event is never its completion,
  // another call is (5 s after for n % 6 = 0 with first seen, two more in the same millisecond for n = 19).
  ['retention from the exposure to a purchase, 1–5 s', fromExposure('purchased', { end: 5 })],
  ['retention from the exposure to another flag call, first seen', fromExposure('$feature_flag_called', { start: 0, end: 10 }, { multipleVariantHandling: 'first_seen' })],
  ['retention from the exposure on the same day of a zone, by a breakdown', fromExposure('clicked', { unit: 'day', start: 0, end: 0, offsets: SKEWED }, { breakdowns: ['$browser'] })],
  ['retention from the exposure of group entities', fromExposure('purchased', { end: 10 }, { groupTypeIndex: 0, multipleVariantHandling: 'first_seen' })],
  ['group entities by a breakdown', query({ sources: [{ kind: 'sum', property: 'amount' }] }, { groupTypeIndex: 0, multipleVariantHandling: 'first_seen', breakdowns: ['plan'] })],
  // only_count_matured_users: the entities first exposed by the cutoff (persons 0–31 of 60), left out of everything else.
  ['matured users: a mean with a window', query({ windowMs: 2500, maturedBy: MATURED_BY })],
  ['matured users: a funnel by a breakdown', query({ type: 'funnel', sources: [], windowMs: 9500, maturedBy: MATURED_BY }, { breakdowns: ['$browser'] })],
  ['matured users: a ratio', query({ type: 'ratio', sources: [{ kind: 'sum', property: 'amount' }, { kind: 'count' }], windowMs: 9500, maturedBy: MATURED_BY })],
  ['matured users: winsorised, the bounds theirs', query({ sources: [{ kind: 'sum', property: 'amount' }], upperPercentile: 0.8, windowMs: 9500, maturedBy: MATURED_BY })],
  ['matured users: CUPED', cuped(query({ sources: [{ kind: 'sum', property: 'amount' }], windowMs: 9500, maturedBy: MATURED_BY }))],
  ['matured users: group entities, first seen', query({ windowMs: 9500, maturedBy: MATURED_BY }, { groupTypeIndex: 0, multipleVariantHandling: 'first_seen' })],
  // HogQL math: an expression evaluated per event (in Node on SQLite, in SQL on ClickHouse), then aggregated.
  ['HogQL math: a sum of an expression', query({ sources: [hogql('sum(properties.amount * 2 + 1)')] })],
  ["HogQL math: a sum of an if over a text, by a breakdown", query({ sources: [hogql("sum(if(properties.$session_id = 's1', properties.amount, -1))")] }, { breakdowns: ['$browser'] })],
  ['HogQL math: an avg (each person clicks one amount: exact in any order)', query({ sources: [hogql('avg(properties.amount + 0.5)')] })],
  ['HogQL math: a count of the views with a number (n/a: none)', views(hogql('count(toFloat(properties.amount))'))],
  ['HogQL math: a max over the views, n/a left out', views(hogql('max(properties.amount / 2)'))],
  ['HogQL math: a ratio of two expressions, winsorised', query({ type: 'ratio', sources: [hogql('sum(properties.amount)'), hogql('count(properties.$session_id)')], upperPercentile: 0.9 })],
  ['HogQL math: CUPED on a sum', cuped(query({ sources: [hogql('sum(coalesce(properties.amount, 0) + 1)')] }))],
  ['HogQL math: distinct values and a countIf', query({ type: 'ratio', sources: [hogql('uniq(properties.amount)'), hogql('countIf(properties.amount > 5)')] })],
  ['HogQL math: a quantile and a median of the amounts, winsorised', query({ type: 'ratio', sources: [hogql('quantile(0.9)(properties.amount * 3)'), hogql('median(properties.amount)')], upperPercentile: 0.9 })],
  // The clicks of one person differ by their session (s0, s1): the quantile falls between two of them.
  ['HogQL math: a quantile over the clicks', query({ sources: [hogql("quantile(0.3)(properties.amount + toFloat(replaceAll(properties.$session_id, 's', '')))")] })],
  // The clicks of n % 3 = 0 share a millisecond and differ by their session: any() takes the least of their values.
  ["HogQL math: any() takes the earliest event's value, the least of those of its millisecond", query({ sources: [hogql("any(properties.amount * 10 + toFloat(replaceAll(properties.$session_id, 's', '')))")] })],
  ["HogQL math: sumIf of the larger purchases over avgIf of one session's clicks, 0 for a person without", query({ type: 'ratio', sources: [hogql('sumIf(properties.amount + 1, properties.amount > 3)'), hogql("avgIf(properties.amount * 3, properties.$session_id = 's0')")] })],
  ['HogQL math: minIf and maxIf where a condition holds, 0 where it never does', query({ type: 'ratio', sources: [hogql('minIf(properties.amount + 1, properties.amount >= 2)'), hogql("maxIf(properties.amount, toFloat(replaceAll(properties.$session_id, 's', '')) < 1)")] })],
  ['HogQL math: the distinct sessions of each clicker', query({ sources: [hogql('count(distinct properties.$session_id)')] })],
  ["HogQL math: the event's fields", query({ type: 'ratio', sources: [hogql("sum(if(event = 'purchased', properties.amount, 0))"), hogql("avg(length(distinct_id) + (event = 'clicked'))")] })],
  ["HogQL math on person properties: the clicks' amounts where the person (not the event) is pro", query({ sources: [personHogql("avg(if(person.properties.plan = 'pro', properties.amount, 0))")] })],
  ["HogQL math on person properties: each click's person's ltv by a person breakdown, a person without one adding nothing", query({ sources: [personHogql('sum(person.properties.ltv)')] }, { breakdowns: [TIER] })],
  ["HogQL math on person properties: the distinct plans over the non-pro persons' ltv times the amount, winsorised", query({ type: 'ratio', sources: [personHogql('count(distinct person.properties.plan)'), personHogql("maxIf(person.properties.ltv * properties.amount, person.properties.plan != 'pro')")], upperPercentile: 0.9 })],
  ['a metric of the events of two organisations', query({ sources: [{ kind: 'sum', property: 'amount' }] }, { metric: { ...query({ sources: [{ kind: 'sum', property: 'amount' }] }).metric, steps: [{ event: 'clicked', properties: [{ groupTypeIndex: 0, groupKeys: ['org-0', 'org-3'] }] }] } })],
  ['an exposure of all organisations but two', query({}, { exposure: { ...query({}).exposure, properties: [...query({}).exposure.properties!, { groupTypeIndex: 0, groupKeys: ['org-0', 'org-3'], excluded: true }] } })],
  ['session durations: a sum', sessions('sum')],
  ['session durations: an avg within a 2 s window, by a breakdown', sessions('avg', { windowMs: 2000 }, { breakdowns: ['$browser'] })],
  ['session durations: the distinct ones of the clicks, whose sessions other persons share', sessions('distinct', {}, {}, 'clicked')],
  ['session durations: a max, winsorised', sessions('max', { upperPercentile: 0.9 })],
  ['session pageviews: a sum', ofSessions('$pageview_count', 'sum')],
  ['session autocaptures: an avg', ofSessions('$autocapture_count', 'avg')],
  ['session screens: a max within a 2 s window', ofSessions('$screen_count', 'max', { windowMs: 2000 })],
  ['session URLs: a sum', ofSessions('$num_uniq_urls', 'sum')],
  ['session bounces: an avg', ofSessions('$is_bounce', 'avg')],
  ['session bounces: the distinct values', ofSessions('$is_bounce', 'distinct')],
  ['session bounces of one pageview, screen or autocapture under 4.5 s: an avg', { ...ofSessions('$is_bounce', 'avg'), bounce: { seconds: 4.5, mode: 'uniq_page_screen_autocaptures' } }],
  ['session durations: a min, reached 2 s, of group entities', sessions('min', { threshold: 2 }, { groupTypeIndex: 0, multipleVariantHandling: 'first_seen' })],
  ['a person property breakdown', query({ sources: [{ kind: 'sum', property: 'amount' }] }, { breakdowns: [TIER] })],
  ['a funnel by a person and an event property', query({ type: 'funnel', sources: [] }, { breakdowns: [TIER, '$browser'] })],
  ['a group property breakdown', query({ sources: [{ kind: 'sum', property: 'amount' }] }, { breakdowns: [SIZE] })],
  ['group entities, first seen, by their own property and a person property', query({ sources: [{ kind: 'sum', property: 'amount' }] }, { groupTypeIndex: 0, multipleVariantHandling: 'first_seen', breakdowns: [SIZE, TIER] })],
  ['an exposure narrowed to 30,040 distinct ids', query({ sources: [{ kind: 'sum', property: 'amount' }] }, manyIds())],
  ['an exposure of all but 30,040 distinct ids', query({ sources: [{ kind: 'sum', property: 'amount' }] }, manyIds(true))],
]

t.test('both stores give the same per-variant sums', { skip: clickhouseUnavailableReason() ?? false }, async (t) => {
  const fixture = rows()
  const { sqlite, clickhouse: store, ch } = await bothEventStores(t, fixture, 'skylark_experiment_variants')

  const excluded = (await sqlite.experimentVariants(query({}))).variants
  t.equal(excluded[0].number_of_samples + excluded[1].number_of_samples, 45, 'the fixture exposes 45 persons to one variant only')
  for (const [name, q] of CASES) {
    const expected = await sqlite.experimentVariants(q)
    t.ok(
      expected.variants.some((v) => v.sum !== 0),
      `${name}: the fixture gives something to add up`,
    )
    if (q.breakdowns.length > 0) t.ok(expected.breakdowns!.length > 2, `${name}: the fixture gives several groups`)
    if (q.aggregation.retention) t.ok(expected.variants.some((v) => v.sum < v.number_of_samples), `${name}: the fixture gives some not retained`)
    if (q.aggregation.cupedLookbackMs) t.ok(expected.variants.some((v) => v.covariate_sum! > 0 && v.covariate_sum_product !== 0), `${name}: the fixture gives covariates`)
    t.same(await store.experimentVariants(q), expected, name)
  }
  // A person property reads as its distinct id's person has it: the pro persons' plan is their distinct ids'.
  const pro = PERSON_PROPERTIES[0].values[0].ids.map((id) => `'${id}'`).join(', ')
  for (const [name, s] of [['SQLite', sqlite], ['ClickHouse', store]] as const) {
    const byPerson = await s.experimentVariants(query({ sources: [personHogql("sum(if(person.properties.plan = 'pro', properties.amount, 0))")] }))
    const byId = await s.experimentVariants(query({ sources: [hogql(`sum(if(distinct_id in (${pro}), properties.amount, 0))`)] }))
    t.same(byPerson, byId, `${name}: person.properties.plan is the plan of the event's distinct id's person`)
  }
  // The orders differ on these events: the sums are not the ordered funnel's.
  const firstSeen = { multipleVariantHandling: 'first_seen' } as const
  const ordered = (await sqlite.experimentVariants(query({ type: 'funnel', sources: [] }, firstSeen))).variants
  for (const order of ['unordered', 'strict'] as const) {
    const other = (await sqlite.experimentVariants(query({ type: 'funnel', sources: [], funnelOrder: order }, firstSeen))).variants
    t.notSame(other.map((v) => v.step_counts), ordered.map((v) => v.step_counts), `${order} is not ordered here`)
  }
  // By hand: with a window of 0 a flag call completes the one-step funnel of flag calls only beside another
  // call of its millisecond (n = 19, test); every other person's calls are seconds apart.
  const instant = query({ type: 'funnel', sources: [], windowMs: 0 }, { metric: { ...query({}).metric, steps: [{ event: '$feature_flag_called' }] } })
  for (const [name, s] of [['SQLite', sqlite], ['ClickHouse', store]] as const) {
    t.same((await s.experimentVariants(instant)).variants.map((v) => v.sum), [0, 1], `${name}: a window of 0 keeps one millisecond`)
  }
  // By hand: 40 persons browse in a session of their own (n % 3 != 2), each lasting from its pageview 2.5 s
  // before exposure to its last browse (or its scroll, n % 8 = 1); the second sessions of n % 5 = 0 began before
  // exposure; n % 10 = 9 is never exposed but n = 19 (its two same-millisecond calls), n % 6 = 0 to both: 27
  // persons left. Each property's per-variant sum over them follows the fixture's comments.
  const counted = Array.from({ length: 60 }, (_, n) => n).filter((n) => n % 3 !== 2 && (n % 10 !== 9 || n === 19) && n % 6 !== 0)
  const sumOf = (value: (n: number) => number) =>
    VARIANTS.map((v, i) => {
      const ns = counted.filter((n) => n % 2 === i)
      return [v, ns.length, ns.reduce((sum, n) => sum + value(n), 0)]
    })
  const pageviews = (n: number) => (n % 4 === 0 ? 2 : 1)
  const own = (n: number) => 3 + (n % 3) * ((n % 4) + 1)
  const seconds = (n: number) => (n % 8 === 1 ? 12 : own(n))
  const byHand: Array<[SessionProperty, (n: number) => number]> = [
    ['$session_duration', seconds],
    ['$pageview_count', pageviews],
    ['$autocapture_count', (n) => Number(n % 5 === 1)],
    ['$screen_count', (n) => Number(n % 6 === 1)],
    ['$num_uniq_urls', (n) => Number(n % 7 > 1 || n % 5 === 1) + Number(n % 4 === 0)],
    ['$is_bounce', (n) => Number(pageviews(n) === 1 && n % 5 !== 1 && seconds(n) < 10)],
  ]
  // The project's bounce rule: its duration, and whether screens and autocaptures count as the pageview does.
  const engaged = (n: number) => pageviews(n) + Number(n % 5 === 1) + Number(n % 6 === 1)
  const bounces: Array<[BounceRule, (n: number) => number]> = [
    [{ seconds: 5, mode: 'count_pageviews' }, (n) => Number(pageviews(n) === 1 && n % 5 !== 1 && seconds(n) < 5)],
    [{ seconds: 10, mode: 'uniq_urls' }, (n) => Number(pageviews(n) === 1 && n % 5 !== 1 && seconds(n) < 10)],
    [{ seconds: 10, mode: 'uniq_page_screen_autocaptures' }, (n) => Number(engaged(n) === 1 && seconds(n) < 10)],
    [{ seconds: 4.5, mode: 'uniq_page_screen_autocaptures' }, (n) => Number(engaged(n) === 1 && seconds(n) < 4.5)],
  ]
  for (const [name, s] of [['SQLite', sqlite], ['ClickHouse', store]] as const) {
    for (const [property, value] of byHand) {
      const got = (await s.experimentVariants(ofSessions(property, 'sum'))).variants
      t.same(got.map((v) => [v.key, v.number_of_samples, v.sum]), sumOf(value), `${name}: ${property}, each session once, only persons with one counted`)
    }
    for (const [bounce, value] of bounces) {
      const got = (await s.experimentVariants({ ...ofSessions('$is_bounce', 'sum'), bounce })).variants
      t.same(got.map((v) => [v.key, v.number_of_samples, v.sum]), sumOf(value), `${name}: $is_bounce under ${bounce.seconds} s, ${bounce.mode}`)
    }
  }
  t.not(sumOf(bounces[2][1])[1][2], sumOf(byHand[5][1])[1][2], 'screens and autocaptures change which sessions bounce here')
  t.not(sumOf(bounces[0][1])[1][2], sumOf(byHand[5][1])[1][2], 'and so does the duration')
  const utc = retention('clicked', 'purchased', { unit: 'day', start: 0, end: 0 })
  const skewed = retention('clicked', 'purchased', { unit: 'day', start: 0, end: 0, offsets: SKEWED })
  t.equal((await store.experimentVariants(skewed)).variants[1].sum, (await store.experimentVariants(utc)).variants[1].sum - 1, "the zone's day is the day compared")
  // By hand: under first seen 25 persons are control and 30 test (n % 12 = 6 move to test, n = 19 is exposed by
  // its two same-millisecond calls); another call within 10 s have n % 6 = 0 (5 in each) and n = 19 (test).
  const calls = (await store.experimentVariants(fromExposure('$feature_flag_called', { start: 0, end: 10 }, { multipleVariantHandling: 'first_seen' }))).variants
  t.same(
    calls.map((v) => [v.key, v.number_of_samples, v.sum, v.denominator_sum]),
    [
      ['control', 25, 5, 25],
      ['test', 30, 6, 30],
    ],
    'every exposed person counts, the exposure never its own completion',
  )
  // By hand, on both stores: person 31 counts with the cutoff on its first exposure, not 1 ms short of it; person 30
  // (first seen: test, 5 s before its control call) counts from its first exposure, not its later one.
  for (const [name, s] of [['SQLite', sqlite], ['ClickHouse', store]] as const) {
    const samples = async (maturedBy: number, more: Partial<ExperimentVariantsQuery> = {}) =>
      (await s.experimentVariants(query({ windowMs: 9500, maturedBy }, more))).variants.map((v) => v.number_of_samples)
    t.same(await samples(MATURED_BY), [10, 14], `${name}: persons 0–31 exposed to one variant (not 9 and 29, never exposed, nor n % 6 = 0, exposed to both), 31 on the dot`)
    t.same(await samples(MATURED_BY - 1), [10, 13], `${name}: 1 ms short, person 31 is not counted`)
    const firstSeen = { multipleVariantHandling: 'first_seen' } as const
    t.same(await samples(T0 + 30 * 60_000 - 5000, firstSeen), [13, 16], `${name}: first seen (6 and 18 moved to test), person 30 on the dot of its first exposure`)
    t.same(await samples(T0 + 30 * 60_000 - 5001, firstSeen), [13, 15], `${name}: first seen, 1 ms short`)
  }
  // The exposures tab's counts: each entity once, at its first exposure's quarter hour, under its variant.
  for (const more of [{}, { multipleVariantHandling: 'first_seen' as const }, { groupTypeIndex: 0 }, manyIds(), manyIds(true)]) {
    const q = { ...query({}), ...more }
    const order = (rows: Array<{ variant: string; at: number; count: number }>) => [...rows].sort((a, b) => a.at - b.at || a.variant.localeCompare(b.variant))
    const counts = order(await sqlite.experimentExposures(q))
    t.same(order(await store.experimentExposures(q)), counts, `exposure counts alike: ${JSON.stringify(Object.keys(more))}`)
    if (Object.keys(more).length === 0) {
      const total = (variant: string) => counts.filter((c) => c.variant === variant).reduce((a, c) => a + c.count, 0)
      t.same([total('control'), total('test'), total('$multiple')], [excluded[0].number_of_samples, excluded[1].number_of_samples, 10], "each variant's exposed persons, and the 10 with n % 6 = 0 exposed to both")
      t.ok(counts.every((c) => c.at % 900_000 === 0), 'quarter hours')
    }
  }
  const groups = (await sqlite.experimentVariants(query({}, { breakdowns: ['$browser'] }))).breakdowns!
  t.same(
    groups.map((g) => g.values[0]),
    ['', '$$_posthog_breakdown_null_$$', '42', 'Alpha', 'Safari'],
    'groups in text order: an empty text its own, null and missing one group, a number as its text, the smaller of two same-millisecond texts; Chrome (n % 6 = 0, every one exposed to both variants) none',
  )

  // The bounds are computed in Node on both stores: they must be the ones ClickHouse's quantileExact gives.
  const sets = [[1, 2, 3, 4], [0, 10], [7, 7, 1, 0, 0, 3.5, 12, 2], [...Array(37)].map((_, i) => (i * 7919) % 101)]
  for (const values of sets) {
    for (const level of [0, 0.05, 0.1, 0.25, 0.5, 0.75, 0.8, 0.9, 0.95, 0.99, 1]) {
      const text = await ch.query(`SELECT quantileExact(${level})(x) FROM (SELECT arrayJoin([${values.map((v) => `toFloat64(${v})`).join(',')}]) AS x)`)
      t.equal(quantileExact(values, level), Number(text.trim()), `quantileExact(${level}) of ${values.length} values`)
    }
  }
})
