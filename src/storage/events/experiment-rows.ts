/**
 * The embedded store's side of experiment-aggregate.ts: from the rows its read thread reads (each exposure, each
 * metric event with its step bits, property texts and distinct keys) to the per-variant sums, all of it on that
 * thread (sqlite.ts). ClickHouse computes the per-entity part in SQL instead (clickhouse-experiment.ts) and
 * shares only the summers.
 */
import {
  BreakdownSummer,
  compareText,
  compareTexts,
  cupedLookback,
  entityValue,
  MULTIPLE_VARIANT_KEY,
  type Exposure,
  type MultipleVariantHandling,
} from './experiment-aggregate.js'
import { funnelReached, readsExposures } from './experiment-funnel.js'
import { evaluateHogql, hogqlContribution, hogqlFields, hogqlProperties, pathIndex, uniquePaths, type HogqlField, type HogqlNode, type PropertyPath } from './hogql-math.js'
import { hogqlQuantile, hogqlToFloat } from './hogql-values.js'
import { isMoment } from './hogql-functions.js'
import { retentionOutcome } from './experiment-retention.js'
import { EXPOSURE_BIT, EXPOSURE_BUCKET_MS, type DistinctKey, type ExposureCount, type ExperimentAggregation, type ExperimentEventsQuery, type ExperimentSums, type ExposureRow, type MetricEventRow, type PersonProperty, type SessionMath, type SessionProperty, type SourceMath } from './types.js'

/**
 * Each entity's variant, first exposure and breakdown group (`get_experiment_exposure_query`): the variant of
 * the earliest exposure (the smaller name on a tie), and the breakdown texts of the earliest (the smaller
 * texts on a tie), as ClickHouse's argMin over (time, value) picks them. With `maturedBy` (the aggregation's),
 * only the entities first exposed by then: PostHog's maturity HAVING on its exposures.
 */
export function exposuresByEntity(rows: readonly ExposureRow[], handling: MultipleVariantHandling, maturedBy: number | null = null): Map<string, Exposure> {
  const seen = new Map<string, { variants: Set<string>; first: number; firstVariant: string; breakdown: string[] }>()
  for (const [entity, variant, first, breakdown] of rows) {
    const e = seen.get(entity)
    if (!e) seen.set(entity, { variants: new Set([variant]), first, firstVariant: variant, breakdown })
    else {
      e.variants.add(variant)
      if (first < e.first || (first === e.first && compareText(variant, e.firstVariant) < 0)) e.firstVariant = variant
      if (first < e.first || (first === e.first && compareTexts(breakdown, e.breakdown) < 0)) e.breakdown = breakdown
      e.first = Math.min(e.first, first)
    }
  }
  const out = new Map<string, Exposure>()
  for (const [entity, e] of seen) {
    if (maturedBy !== null && e.first > maturedBy) continue
    const variant = handling === 'first_seen' || e.variants.size === 1 ? e.firstVariant : MULTIPLE_VARIANT_KEY
    out.set(entity, { variant, first: e.first, breakdown: e.breakdown })
  }
  return out
}

/** First exposures per variant and quarter hour (ExperimentExposuresQuery's answer). */
export function countExposures(exposures: Iterable<Exposure>): ExposureCount[] {
  const counts = new Map<string, ExposureCount>()
  for (const { variant, first } of exposures) {
    const at = Math.floor(first / EXPOSURE_BUCKET_MS) * EXPOSURE_BUCKET_MS
    const key = `${at} ${variant}`
    const c = counts.get(key)
    if (c) c.count++
    else counts.set(key, { variant, at, count: 1 })
  }
  return [...counts.values()]
}

/**
 * The texts of a metric event that carries none (a funnel's, an exposure's), one array for every such row: two
 * empty arrays a row were ≈19 MB of the read thread's heap for 295,000 rows.
 */
export const NO_TEXTS: ReadonlyArray<string | null> = Object.freeze([])

/** An exposure event a funnel's walk reads among the metric events: [entity, ms, uuid]. */
export type ExposureEvent = readonly [string, number, string]

/** Whether (t, id) comes before (u, other) in the stores' event order: time, then uuid (SQLite's byte order). */
const precedes = (t: number, id: string, u: number, other: string): boolean => t < u || (t === u && compareText(id, other) < 0)

/** Exposure events in that order, in place: from one event name they come nearly so. */
export function sortExposureEvents(events: ExposureEvent[]): ExposureEvent[] {
  return events.sort((a, b) => a[1] - b[1] || compareText(a[2], b[2]))
}

/**
 * The metric events (each with its uuid) and the exposure events as one stream in the stores' event order, the
 * exposures with EXPOSURE_BIT and no texts (the walk reads only time and bits); an event that is both is one row
 * with both. What the metric events' query gave when it read the exposures among them, with the exposures read
 * once (compileSqliteExposureEvents). Both inputs in that order; the metric events are streamed.
 */
export function* withExposureEvents(events: Iterable<readonly [MetricEventRow, string]>, exposures: readonly ExposureEvent[]): Generator<MetricEventRow> {
  let i = 0
  for (const [row, id] of events) {
    for (; i < exposures.length && precedes(exposures[i][1], exposures[i][2], row[1], id); i++) yield [exposures[i][0], exposures[i][1], EXPOSURE_BIT, NO_TEXTS, NO_TEXTS]
    if (i < exposures.length && exposures[i][2] === id) {
      row[2] |= EXPOSURE_BIT
      i++
    }
    yield row
  }
  for (; i < exposures.length; i++) yield [exposures[i][0], exposures[i][1], EXPOSURE_BIT, NO_TEXTS, NO_TEXTS]
}

/** A person id that is no person: PostHog's distinct counts leave the zero UUID out, as they do empty texts. */
const NO_PERSON = '00000000-0000-0000-0000-000000000000'

/** Whether a distinct count counts a key's text (`get_source_aggregation_expr`: not null, not empty, no zero UUID). */
export function countsAsDistinct(key: DistinctKey, text: string | null): text is string {
  return text !== null && text !== '' && !(key === 'person' && text === NO_PERSON)
}

class SourceAggregate {
  count = 0
  sum = 0
  min = Number.POSITIVE_INFINITY
  max = Number.NEGATIVE_INFINITY
  keys = new Set<string>()
  /** Every value, for a quantile only. */
  values: number[] | null = null
  /** HogQL's any(): the value of the earliest event, the least of the earliest's (clickhouse-experiment.ts, sourceExpr). */
  first: { at: number; value: number } | null = null

  add(value: number, key: string | null, at: number): void {
    if (this.first === null || at < this.first.at || (at === this.first.at && value < this.first.value)) this.first = { at, value }
    this.count++
    this.sum += value
    this.min = Math.min(this.min, value)
    this.max = Math.max(this.max, value)
    if (key !== null) this.keys.add(key)
    this.values?.push(value)
  }

  result(math: SourceMath): number {
    // HogQL's any() is no `any` source (whether there was an event): the value it picked, 0 for none.
    if (math.kind === 'hogql' && math.hogql.aggregation === 'any') return this.first?.value ?? 0
    // HogQL math: its aggregation over the values events added (`count` counts them); session math over the sessions'.
    const aggregation = math.kind === 'hogql' ? math.hogql.aggregation : math.kind === 'session' ? math.aggregation : math.kind
    // argMax reads timestamp, which experiments' math has not; the moments and arrays are read in queries only (hogql-parse.ts).
    if (aggregation === 'last' || isMoment(aggregation) || aggregation === 'groupArray' || aggregation === 'groupUniqArray' || aggregation === 'topK' || aggregation === 'quantiles') throw new Error(`${aggregation}() is no aggregation of experiments here`)
    switch (aggregation) {
      case 'count':
        return this.count
      case 'distinct':
      case 'uniq':
        return this.keys.size
      case 'quantile':
        return math.kind === 'hogql' ? hogqlQuantile(this.values ?? [], math.hogql.level ?? 0.5, math.hogql.kind) : hogqlQuantile(this.values ?? [], 0.5)
      case 'any':
        return this.count === 0 ? 0 : 1
      case 'sum':
        return this.sum
      case 'avg':
        return this.count === 0 ? 0 : this.sum / this.count
      case 'min':
        return this.count === 0 ? 0 : this.min
      case 'max':
        return this.count === 0 ? 0 : this.max
    }
  }
}

/** The event properties (paths, for HogQL's `properties.a.b`) the sources read from each event, in order, each once. */
export function sourceProperties(sources: readonly SourceMath[]): PropertyPath[] {
  return uniquePaths(sources.flatMap((m): PropertyPath[] => ('property' in m ? [[m.property]] : m.kind === 'hogql' ? hogqlProperties(m.hogql.expr, 'event') : [])))
}

/** The event fields (`event`, `distinct_id`) the sources' HogQL reads, in order, each once. */
export function sourceFields(sources: readonly SourceMath[]): HogqlField[] {
  return [...new Set(sources.flatMap((m) => (m.kind === 'hogql' ? hogqlSourceFields(m.hogql.expr) : [])))]
}

/** An expression's fields, and `distinct_id` where it reads person properties: the SQLite store looks them up by it (personReader). */
function hogqlSourceFields(expr: HogqlNode): HogqlField[] {
  const fields = hogqlFields(expr)
  return hogqlProperties(expr, 'person').length > 0 ? [...fields, 'distinct_id'] : fields
}

/**
 * A person property's text for an event's distinct id (null: no person, or one without it), from the properties
 * as resolved before the read (PersonProperty): one map a property, built once rather than searched on every row.
 */
export function personReader(persons: readonly PersonProperty[]): (path: PropertyPath, distinctId: string) => string | null {
  const at = pathIndex(persons.map((p) => p.path))
  const byId = persons.map((p) => new Map(p.values.flatMap((v) => v.ids.map((id) => [id, v.text] as const))))
  return (path, distinctId) => byId[at(path)]?.get(distinctId) ?? null
}

/**
 * What one event adds to a source's aggregate, from its property texts (in `valueProperties`' order, then the
 * fields' in `valueFields`', the person's properties by its distinct id): a property's number (0 when it is none), a
 * HogQL expression's contribution (null: nothing; a text: the key HogQL's uniq counts), else 1.
 */
function eventValue(math: SourceMath, valueProperties: readonly PropertyPath[], valueFields: readonly HogqlField[]): (values: ReadonlyArray<string | null>) => number | string | null {
  const at = pathIndex(valueProperties)
  if (math.kind === 'hogql') {
    // Each field's column, found once rather than on every row.
    const columns = new Map(valueFields.map((name, i) => [name, valueProperties.length + i]))
    const column = (name: HogqlField) => {
      const c = columns.get(name)
      if (c === undefined) throw new Error(`the rows carry no ${name} (valueFields)`)
      return c
    }
    const field = (values: ReadonlyArray<string | null>) => (name: HogqlField) => values[column(name)] ?? ''
    const person = personReader(math.persons ?? [])
    return (values) => {
      const fields = field(values)
      const property = (path: PropertyPath, ofPerson: boolean) => (ofPerson ? person(path, fields('distinct_id')) : (values[at(path)] ?? null))
      return hogqlContribution(math.hogql, evaluateHogql(math.hogql.expr, property, null, fields))
    }
  }
  const i = 'property' in math ? at([math.property]) : -1
  return i < 0 ? () => 1 : (values) => hogqlToFloat(values[i] ?? null) ?? 0
}

/** The events that count for an entity: at or after its first exposure, within the conversion window. */
function inWindow(t: number, exposure: Exposure, windowMs: number | null): boolean {
  return t >= exposure.first && (windowMs === null || t < exposure.first + windowMs)
}

/** CUPED's pre-exposure window (`build_cuped_pre_window_predicate`): the lookback before first exposure. */
function inPreWindow(t: number, exposure: Exposure, lookbackMs: number): boolean {
  return t >= exposure.first - lookbackMs && t < exposure.first
}

/**
 * A session property mean (SessionMath): per exposed entity, the first time of its metric events in each session;
 * the sessions first seen in its window add their values (`values` reads those of the sessions named).
 */
function aggregateSessions(
  a: ExperimentAggregation,
  math: SessionMath,
  breakdowns: number,
  sessionKey: number,
  variants: readonly string[],
  exposures: ReadonlyMap<string, Exposure>,
  events: Iterable<MetricEventRow>,
  values: SessionValues,
): ExperimentSums {
  const firsts = new Map<string, Map<string, number>>()
  for (const [entity, t, mask, , keys] of events) {
    const session = keys[sessionKey] ?? null
    if ((mask & 1) === 0 || !exposures.has(entity) || !countsAsDistinct('$session_id', session)) continue
    let sessions = firsts.get(entity)
    if (!sessions) firsts.set(entity, (sessions = new Map()))
    const seen = sessions.get(session)
    if (seen === undefined || t < seen) sessions.set(session, t)
  }
  const valueOf = values(math.sessionProperty, new Set([...firsts.values()].flatMap((sessions) => [...sessions.keys()])))
  const summer = new BreakdownSummer(a, variants, 1, breakdowns)
  for (const [entity, e] of exposures) {
    const agg = new SourceAggregate()
    for (const [session, t] of firsts.get(entity) ?? []) {
      if (!inWindow(t, e, a.windowMs)) continue
      const v = valueOf.get(session) ?? 0
      agg.add(v, String(v), t)
    }
    // PostHog's inner join of the exposures and the sessions: an entity without one is not counted.
    if (agg.count > 0) summer.group(e.breakdown).addValue(e.variant, entityValue(a, agg.result(math)), 0, 0)
  }
  return summer.result()
}

/** The values of a session property (SessionMath) of the sessions named, by session id; a session without events is absent. */
export type SessionValues = (property: SessionProperty, sessions: ReadonlySet<string>) => ReadonlyMap<string, number>

/** Retention (experiment-retention.ts): each exposed entity's events from its first exposure on, in order. */
function aggregateRetention(
  a: ExperimentAggregation,
  steps: number,
  breakdowns: number,
  variants: readonly string[],
  exposures: ReadonlyMap<string, Exposure>,
  events: Iterable<MetricEventRow>,
): ExperimentSums {
  const window = a.retention
  if (!window) throw new RangeError('a retention aggregation needs its window')
  const byEntity = new Map<string, Array<[number, number]>>()
  for (const [entity, t, mask] of events) {
    const exposure = exposures.get(entity)
    if (!exposure || t < exposure.first) continue
    const list = byEntity.get(entity)
    if (list) list.push([t, mask])
    else byEntity.set(entity, [[t, mask]])
  }
  const summer = new BreakdownSummer(a, variants, steps, breakdowns)
  for (const [entity, e] of exposures) {
    summer.group(e.breakdown).addRetention(e.variant, retentionOutcome(window, a.windowMs, e.first, byEntity.get(entity) ?? []))
  }
  return summer.result()
}

/**
 * Per-variant (and per breakdown group) statistics from the rows, in the order of `variants`; variants nobody
 * was exposed to answer zeros. `values` names the properties whose texts each event row carries, in order, and
 * the fields after them; `distinctKeys` the keys whose texts it carries for distinct counts.
 */
export function aggregateVariants(
  a: ExperimentAggregation,
  steps: number,
  breakdowns: number,
  values: Pick<ExperimentEventsQuery['metric'], 'valueProperties' | 'valueFields'>,
  distinctKeys: readonly DistinctKey[],
  variants: readonly string[],
  exposures: ReadonlyMap<string, Exposure>,
  events: Iterable<MetricEventRow>,
  sessionValues: SessionValues = () => new Map(),
): ExperimentSums {
  if (a.type === 'retention') return aggregateRetention(a, steps, breakdowns, variants, exposures, events)
  const [first] = a.sources
  if (first?.kind === 'session') return aggregateSessions(a, first, breakdowns, distinctKeys.indexOf('$session_id'), variants, exposures, events, sessionValues)
  const lookback = cupedLookback(a)
  // Funnels apply the window in their walk, from each exposure (experiment-funnel.ts).
  const windowMs = readsExposures(a) ? null : a.windowMs
  const byEntity = new Map<string, MetricEventRow[]>()
  for (const row of events) {
    const exposure = exposures.get(row[0])
    if (!exposure || !(inWindow(row[1], exposure, windowMs) || (lookback !== null && inPreWindow(row[1], exposure, lookback)))) continue
    const list = byEntity.get(row[0])
    if (list) list.push(row)
    else byEntity.set(row[0], [row])
  }
  /** An entity's events after exposure, and with CUPED those of its lookback before. */
  const split = (rows: readonly MetricEventRow[], e: Exposure) =>
    lookback === null ? { post: rows, pre: [] } : { post: rows.filter((r) => r[1] >= e.first), pre: rows.filter((r) => r[1] < e.first) }
  const summer = new BreakdownSummer(a, variants, steps, breakdowns)

  if (a.type === 'funnel') {
    const last = 1 << (steps - 1)
    for (const [entity, e] of exposures) {
      const { post, pre } = split(byEntity.get(entity) ?? [], e)
      // CUPED's funnel covariate (`build_funnel_covariate_value_expr`): the last step's event in the lookback.
      const covariate = pre.some((r) => (r[2] & last) !== 0) ? 1 : 0
      summer.group(e.breakdown).addFunnel(
        e.variant,
        funnelReached(
          a,
          post.map((r) => [r[1], r[2]]),
          steps,
        ),
        covariate,
      )
    }
    return summer.result()
  }

  const valueOf = a.sources.map((math) => eventValue(math, values.valueProperties, values.valueFields ?? []))
  const perSource = (rows: readonly MetricEventRow[], index: number): number => {
    const math = a.sources[index]
    const agg = new SourceAggregate()
    if (math.kind === 'hogql' && math.hogql.aggregation === 'quantile') agg.values = []
    const value = valueOf[index]
    const keyIndex = math.kind === 'distinct' ? distinctKeys.indexOf(math.key) : -1
    for (const [, at, mask, values, keys] of rows) {
      if ((mask & (1 << index)) === 0) continue
      const v = value(values)
      if (v === null) continue
      if (typeof v === 'string') {
        agg.add(1, v, at)
        continue
      }
      const key = keyIndex < 0 ? null : (keys[keyIndex] ?? null)
      agg.add(v, math.kind === 'distinct' && countsAsDistinct(math.key, key) ? key : null, at)
    }
    return agg.result(math)
  }
  for (const [entity, e] of exposures) {
    const { post, pre } = split(byEntity.get(entity) ?? [], e)
    // CUPED's mean covariate: the same aggregate over the lookback's events.
    const covariate = lookback === null ? 0 : perSource(pre, 0)
    summer.group(e.breakdown).addValue(e.variant, entityValue(a, perSource(post, 0)), a.type === 'ratio' ? perSource(post, 1) : 0, covariate)
  }
  return summer.result()
}
