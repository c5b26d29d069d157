/**
 * ExperimentVariantsQuery → one ClickHouse query that aggregates per entity (and, where nothing needs every
 * entity's value, per variant) in SQL, so what comes back is a few numbers per entity or per variant rather
 * than every metric event. Functions every supported server has (18.16 included: argMin over a tuple,
 * arraySort of tuples, ALL LEFT JOIN … USING); times come back as text (Int64 in JSON) and are read as numbers.
 */
import { compileClickHouseWhere, groupColumn, msExpr, propertyPathExpr, propertyTextExpr, stringPropertyExpr } from './clickhouse-filters.js'
import { hogqlContributionSql } from './clickhouse-hogql.js'
import { personPropertySql } from './clickhouse-lookups.js'
import { quantileSql } from './clickhouse-hogql-calls.js'
import { pathIndex } from './hogql-math.js'
import { textNumberSql } from './numbers.js'
import { quote, type ServerFeatures } from './clickhouse-schema.js'
import { BreakdownSummer, cupedLookback, experimentSteps, MULTIPLE_VARIANT_KEY, needsAllValues } from './experiment-aggregate.js'
import { exposureStep, funnelReached, metricEventNames, readsExposures } from './experiment-funnel.js'
import { retentionOutcome } from './experiment-retention.js'
import { BREAKDOWN_NULL_LABEL, EXPOSURE_BIT, EXPOSURE_BUCKET_MS, type DistinctKey, type ExperimentAggregation, type ExperimentBreakdown, type ExperimentEventsQuery, type ExperimentExposuresQuery, type ExperimentSums, type ExperimentVariantsQuery, SESSION_SPAN_MS, type SessionMath, type SessionProperty, DEFAULT_BOUNCE } from './types.js'
import { sessionValue, type SessionSql } from './session-values.js'

const PERSON = 'toString(person_id)'

function entity(q: Pick<ExperimentEventsQuery, 'groupTypeIndex'>): string {
  return q.groupTypeIndex === null ? PERSON : groupColumn(q.groupTypeIndex)
}

/** The text a distinct count reads from an event, and what of it is no key (empty; a person's zero UUID). */
function distinctKeyExpr(key: DistinctKey, f: ServerFeatures): { expr: string; none: string[] } {
  if (key === 'person') return { expr: PERSON, none: ["''", quote('00000000-0000-0000-0000-000000000000')] }
  if (key === '$session_id') return { expr: `ifNull(${propertyTextExpr(key, f)}, '')`, none: ["''"] }
  return { expr: groupColumn(Number(key.slice('$group_'.length))), none: ["''"] }
}

function exposureWhere(q: Pick<ExperimentEventsQuery, 'groupTypeIndex' | 'exposure'>, f: ServerFeatures): string {
  const where = compileClickHouseWhere(q.exposure, f)
  return q.groupTypeIndex === null ? where : `${where} AND ${entity(q)} != ''`
}

/**
 * Each entity's first exposure event: `e`, its time (`x_first`) and variant (`x_variant`: with `exclude`,
 * `$multiple` for several), and with `texts` the breakdown texts of its earliest exposure (`x_b0`…).
 */
function firstExposures(q: ExperimentExposuresQuery & Pick<ExperimentEventsQuery, 'breakdowns'>, table: string, f: ServerFeatures, texts: boolean): string {
  const variant = propertyTextExpr(q.variantProperty, f)
  // The variant of the earliest exposure, the smaller name on a tie (as experiment-aggregate.ts).
  const first = 'argMin(x_v, (x_ms, x_v))'
  const chosen = q.multipleVariantHandling === 'first_seen' ? first : `if(uniqExact(x_v) > 1, ${quote(MULTIPLE_VARIANT_KEY)}, ${first})`
  const { raw, order, columns } = breakdownTexts(q, f)
  return `SELECT x_entity AS e, min(x_ms) AS x_first, ${chosen} AS x_variant${texts ? raw.map((r, i) => `, argMin(${r}, ${order}) AS x_b${i}`).join('') : ''} FROM (
      SELECT ${entity(q)} AS x_entity, assumeNotNull(${variant}) AS x_v, ${msExpr('timestamp', f)} AS x_ms${texts ? columns : ''}
      FROM ${table} WHERE ${exposureWhere(q, f)} AND isNotNull(${variant})
    ) GROUP BY x_entity`
}

/** An event property's text, or a person (group) property's as its distinct id's persons (its group) have it (NULL for others). */
function breakdownText(b: ExperimentBreakdown, f: ServerFeatures): string {
  if (typeof b === 'string') return propertyTextExpr(b, f)
  const column = b.groupTypeIndex === null ? 'distinct_id' : groupColumn(b.groupTypeIndex)
  const cases = b.values.flatMap((v) => (v.ids.length === 0 ? [] : [`${column} IN (${v.ids.map(quote).join(', ')})`, quote(v.text)]))
  return cases.length === 0 ? 'CAST(NULL AS Nullable(String))' : `multiIf(${cases.join(', ')}, NULL)`
}

/** The breakdowns' texts as columns (`x_rb0`…), and the order that picks every one from the same earliest row: time, then the texts. */
function breakdownTexts(q: Pick<ExperimentEventsQuery, 'breakdowns'>, f: ServerFeatures): { raw: string[]; order: string; columns: string } {
  const raw = q.breakdowns.map((_, i) => `x_rb${i}`)
  return {
    raw,
    order: `(x_ms${raw.map((r) => `, ${r}`).join('')})`,
    columns: q.breakdowns.map((b, i) => `, ifNull(${breakdownText(b, f)}, ${quote(BREAKDOWN_NULL_LABEL)}) AS ${raw[i]}`).join(''),
  }
}

/** First exposures per variant (`$multiple` too) and quarter hour: ExperimentExposuresQuery's answer. */
export function compileClickHouseExposureCounts(q: ExperimentExposuresQuery, table: string, f: ServerFeatures): string {
  return `SELECT x_variant AS variant, intDiv(x_first, ${EXPOSURE_BUCKET_MS}) * ${EXPOSURE_BUCKET_MS} AS at, count() AS n
    FROM (${firstExposures({ ...q, breakdowns: [] }, table, f, false)}) GROUP BY variant, at`
}

/**
 * Each exposed entity of the variants counted: its first exposure, variant (`$multiple` left out) and the
 * breakdown texts of its first exposure (`x_b0`…); with `maturedBy`, only those first exposed by then.
 */
function exposuresPerEntity(q: ExperimentVariantsQuery, table: string, f: ServerFeatures): string {
  const { raw, order, columns } = breakdownTexts(q, f)
  const maturedBy = q.aggregation.maturedBy ?? null
  const matured = maturedBy === null ? '' : ` AND x_first <= ${Math.trunc(maturedBy)}`
  const activation = q.activation ?? null
  const flags = `${firstExposures(q, table, f, activation === null)} HAVING x_variant IN (${q.variants.map(quote).join(', ')})`
  if (activation === null) return `${flags}${matured}`
  // Activation mode: the first activation event at or after the entity's first exposure event is its exposure
  // (time and breakdowns), the exposure events still giving its variant (`_build_activation_exposure_select_query`).
  return `SELECT e, min(x_ms) AS x_first, any(a_variant) AS x_variant${raw.map((r, i) => `, argMin(${r}, ${order}) AS x_b${i}`).join('')} FROM (
      SELECT ${entity(q)} AS e, ${msExpr('timestamp', f)} AS x_ms${columns} FROM ${table} WHERE ${compileClickHouseWhere(activation, f)}
    ) ALL INNER JOIN (SELECT e, x_first AS a_flag_first, x_variant AS a_variant FROM (${flags})) USING e
    WHERE x_ms >= a_flag_first GROUP BY e HAVING 1${matured}`
}

/**
 * The metric events of exposed entities: step bits (and EXPOSURE_BIT on the exposures, for funnels, whose
 * walk reads them), and what the sources read (numbers, distinct keys, order).
 */
function metricEvents(q: ExperimentVariantsQuery, table: string, f: ServerFeatures): string {
  const m = q.metric
  const withExposures = readsExposures(q.aggregation)
  const conditions = m.steps.map((step, i) => [compileClickHouseWhere({ teamId: q.teamId, event: step.event ?? undefined, properties: step.properties }, f), 2 ** i] as const)
  if (withExposures) conditions.push([compileClickHouseWhere(exposureStep(q), f), EXPOSURE_BIT])
  const mask = conditions.map(([where, bit]) => `ifNull(toUInt32(${where}), 0) * ${bit}`).join(' + ')
  const names = metricEventNames(q, withExposures)
  const where = compileClickHouseWhere({ teamId: q.teamId, after: m.after, before: m.before, event: names ?? undefined }, f)
  // HogQL's toFloat: a number, else 0 once coalesced; infinities are no number (as Number.isFinite in Node).
  // Only the properties a source's math reads as a number (a HogQL source reads its own in its column).
  const numbered = new Set(q.aggregation.sources.flatMap((math) => ('property' in math ? [math.property] : [])))
  const xs = m.valueProperties.flatMap(([key, ...nested], i) => (nested.length === 0 && numbered.has(key) ? [[key, i] as const] : []))
  const numbers = xs.map(([key, i]) => {
    const n = `ifNull(${textNumberSql(propertyTextExpr(key, f))}, 0)`
    return `, if(isFinite(${n}), ${n}, 0) AS x${i}`
  })
  const keys = m.distinctKeys.map((key, i) => `, ${distinctKeyExpr(key, f).expr} AS k${i}`)
  // HogQL math: what each event adds to source i's aggregate (`h<i>`, NULL: nothing).
  const hogql = q.aggregation.sources.flatMap((math, i) =>
    math.kind === 'hogql' ? [`, ${hogqlContributionSql(math.hogql, (path, person) => (person ? personPropertySql(math.persons ?? [], path) : propertyPathExpr(path, f)), `h${i}`)} AS h${i}`] : [],
  )
  const ordered = q.aggregation.type === 'funnel' || q.aggregation.type === 'retention'
  const columns = [
    ...xs.map(([, i]) => `x${i}`),
    ...m.distinctKeys.map((_, i) => `k${i}`),
    ...q.aggregation.sources.flatMap((math, i) => (math.kind === 'hogql' ? [`h${i}`] : [])),
    ...(ordered ? ['u'] : []),
  ]
  return `SELECT e, x_ms AS t, m${columns.map((c) => `, ${c}`).join('')} FROM (
      SELECT ${entity(q)} AS e, ${msExpr('timestamp', f)} AS x_ms, (${mask}) AS m${numbers.join('')}${keys.join('')}${hogql.join('')}
        ${ordered ? ', toString(uuid) AS u' : ''}
      FROM ${table}
      WHERE ${where} AND ${entity(q)} IN (SELECT ${entity(q)} FROM ${table} WHERE ${exposureWhere(q, f)})
    ) WHERE m != 0`
}

/** One source's per-entity aggregate over its step's events in the window (`c`), 0 without any. */
function sourceExpr(q: ExperimentVariantsQuery, index: number, c: string, f: ServerFeatures): string {
  const math = q.aggregation.sources[index]
  if (math.kind === 'hogql') {
    // Over the events that added a value (`h<index>` not NULL), as PostHog's aggregation skips NULLs.
    const h = `h${index}`
    const added = `${c} AND isNotNull(${h})`
    const x = `ifNull(${h}, 0)`
    switch (math.hogql.aggregation) {
      case 'count':
        return `toFloat64(countIf(${added}))`
      case 'uniq':
        // `h` is the value's key, a text (hogqlContributionSql).
        return `toFloat64(uniqExactIf(ifNull(${h}, ''), ${added}))`
      case 'quantile':
        return quantileSql(`groupArrayIf(${x}, ${added})`, math.hogql.level ?? 0.5, `_q${index}`, math.hogql.kind)
      case 'sum':
        return `sumIf(${x}, ${added})`
      case 'avg':
        return `if(countIf(${added}) = 0, 0, sumIf(${x}, ${added}) / countIf(${added}))`
      case 'any':
        // ClickHouse's any() takes the first value it meets, which is no order it promises: here the earliest
        // event's (`t`), the least value of the earliest's, as experiment-rows.ts picks it.
        return `if(countIf(${added}) = 0, 0, argMinIf(${x}, (t, ${x}), ${added}))`
      default:
        return `if(countIf(${added}) = 0, 0, ${math.hogql.aggregation}If(${x}, ${added}))`
    }
  }
  const x = 'property' in math ? `x${pathIndex(q.metric.valueProperties)([math.property])}` : '1'
  switch (math.kind) {
    case 'count':
      return `toFloat64(countIf(${c}))`
    case 'any':
      return `toFloat64(countIf(${c}) > 0)`
    case 'distinct': {
      const k = `k${q.metric.distinctKeys.indexOf(math.key)}`
      return `toFloat64(uniqExactIf(${k}, ${c}${distinctKeyExpr(math.key, f).none.map((v) => ` AND ${k} != ${v}`).join('')}))`
    }
    case 'sum':
      return `sumIf(${x}, ${c})`
    case 'avg':
      return `if(countIf(${c}) = 0, 0, sumIf(${x}, ${c}) / countIf(${c}))`
    case 'min':
    case 'max':
      return `if(countIf(${c}) = 0, 0, ${math.kind}If(${x}, ${c}))`
    case 'session':
      throw new RangeError('a session source is read per session (sessionsPerEntity)')
  }
}

/**
 * A session property mean (SessionMath), PostHog's three layers: each exposed entity's sessions among its
 * metric events with the first time it was seen in each (`st`), those first seen in its window joined (INNER,
 * so an entity without one has no row) to their values, and the entity's aggregate of them (`a`).
 */
function sessionsPerEntity(q: ExperimentVariantsQuery, math: SessionMath, joined: string, texts: readonly string[], group: string, reached: (value: string) => string, table: string, f: ServerFeatures): string {
  const session = distinctKeyExpr('$session_id', f).expr
  const k = `k${q.metric.distinctKeys.indexOf('$session_id')}`
  const spanned = compileClickHouseWhere({ teamId: q.teamId, after: q.metric.after - SESSION_SPAN_MS, before: q.metric.before + SESSION_SPAN_MS }, f)
  // Every session of the range, not only the metric's: reading which those are would read the events again.
  const rows = `SELECT ${session} AS s, ${msExpr('timestamp', f)} AS s_ms, event AS s_event, uuid AS s_uuid, ${stringPropertyExpr('$current_url', f)} AS s_url FROM ${table} WHERE ${spanned}`
  const values = `SELECT s, ${sessionValue(math.sessionProperty, q.bounce ?? DEFAULT_BOUNCE, SESSION_SQL)} AS d FROM (${rows}) WHERE s != '' GROUP BY s`
  const kept = texts.map((x) => `, ${x}`).join('')
  const sessions = `SELECT e, x_variant${kept}, ${k} AS s, min(t) AS st, any(x_first) AS xf FROM ${joined} WHERE bitAnd(m, 1) != 0 AND ${k} != '' GROUP BY e, x_variant${kept}, s`
  const window = q.aggregation.windowMs
  const inWindow = `st >= xf${window === null ? '' : ` AND st < xf + ${Math.trunc(window)}`}`
  const value = math.aggregation === 'distinct' ? 'toFloat64(uniqExact(d))' : `toFloat64(${math.aggregation}(d))`
  return `SELECT x_variant AS variant${group}, ${reached(value)} AS a FROM (
      SELECT e, x_variant${kept}, d FROM (${sessions}) ALL INNER JOIN (${values}) USING s WHERE ${inWindow}
    ) GROUP BY e, x_variant${kept}`
}

/** Each session property's value over a session's rows (`s_ms`, `s_event`, `s_uuid`, `s_url`), as the SQLite store's. */
const SESSION_SQL: SessionSql = {
  seconds: 'intDiv(max(s_ms), 1000) - intDiv(min(s_ms), 1000)',
  distinctOf: (...events) => `uniqExactIf(s_uuid, s_event IN (${events.map((e) => `'${e}'`).join(', ')}))`,
  uniqueUrls: `uniqExactIf(s_url, s_url != '')`,
  oneIf: (condition) => `if(${condition}, 1, 0)`,
}

/**
 * An ExperimentVariantsQuery as one query, PostHog's shape: each exposed entity's first exposure and variant,
 * its metric events joined on (ALL LEFT JOIN, so entities without events count with 0), the conversion
 * window applied, one row per entity. Means without winsorisation and ratios are added up per variant (and
 * breakdown group) here too (`perVariant`: rows `variant, n, sum, sum_squares[, denominator sums]`); winsorised
 * means answer each entity's value (`variant, a`), the bounds being quantiles Node takes as the SQLite store
 * does, and funnels each entity's events in order as [ms, step bits] (`variant, f`), walked in Node
 * (experiment-funnel.ts), as are a retention metric's with the first exposure (`variant, xf, f`). With breakdowns every row also carries its group's texts (`g`); with CUPED the
 * per-variant rows carry the covariate's sums (`cs, css, cp`) and the per-entity rows the covariate (`c`).
 */
export function compileClickHouseExperiment(q: ExperimentVariantsQuery, table: string, f: ServerFeatures): { sql: string; perVariant: boolean } {
  const a = q.aggregation
  const inWindow = `t >= x_first${a.windowMs === null ? '' : ` AND t < x_first + ${Math.trunc(a.windowMs)}`}`
  const joined = `(${exposuresPerEntity(q, table, f)}) ALL LEFT JOIN (${metricEvents(q, table, f)}) USING e`
  // The breakdown group: an array of the texts (`g`), grouped on beside the entity and variant.
  const texts = q.breakdowns.map((_, i) => `x_b${i}`)
  const group = texts.length === 0 ? '' : `, [${texts.join(', ')}] AS g`
  const byEntity = `GROUP BY e, x_variant${texts.map((x) => `, ${x}`).join('')}`
  // CUPED: the covariate (`c`) over each entity's events in the lookback before its first exposure.
  const lookback = cupedLookback(a)
  const pre = lookback === null ? null : `t >= x_first - ${Math.trunc(lookback)} AND t < x_first`
  if (a.type === 'retention') {
    // Each entity's events from its first exposure on, in order, with that exposure (`x`): retentionOutcome
    // (experiment-retention.ts) reads them in Node as on SQLite, the zone's calendar arithmetic included.
    const events = `arraySort(groupArrayIf((t, u, m), m != 0 AND t >= x_first))`
    return {
      sql: `SELECT x_variant AS variant${group}, any(x_first) AS xf, arrayMap(x -> (tupleElement(x, 1), tupleElement(x, 3)), ${events}) AS f FROM ${joined} ${byEntity}`,
      perVariant: false,
    }
  }
  if (a.type === 'funnel') {
    // Funnels apply the window in their walk, from each exposure (experiment-funnel.ts).
    const events = `arraySort(groupArrayIf((t, u, m), m != 0 AND t >= x_first))`
    // The last step's event in the lookback (`build_funnel_covariate_value_expr`).
    const covariate = pre === null ? '' : `, toFloat64(countIf(bitAnd(m, ${2 ** (q.metric.steps.length - 1)}) != 0 AND ${pre}) > 0) AS c`
    return {
      sql: `SELECT x_variant AS variant${group}, arrayMap(x -> (tupleElement(x, 1), tupleElement(x, 3)), ${events}) AS f${covariate} FROM ${joined} ${byEntity}`,
      perVariant: false,
    }
  }
  const bit = (i: number) => `bitAnd(m, ${2 ** i}) != 0 AND ${inWindow}`
  // A mean's threshold (entityValue in experiment-aggregate.ts): whether each entity reached it.
  const reached = (value: string) => (a.type === 'mean' && a.threshold !== undefined && a.threshold !== null ? `toFloat64(${value} >= ${a.threshold})` : value)
  const [first] = a.sources
  let perEntity: string
  if (first?.kind === 'session') perEntity = sessionsPerEntity(q, first, joined, texts, group, reached, table, f)
  else {
    const values = a.sources.map((_, i) => `${sourceExpr(q, i, bit(i), f)} AS ${i === 0 ? 'a' : 'b'}`)
    values[0] = `${reached(sourceExpr(q, 0, bit(0), f))} AS a`
    if (pre !== null) values.push(`${sourceExpr(q, 0, `bitAnd(m, 1) != 0 AND ${pre}`, f)} AS c`)
    perEntity = `SELECT x_variant AS variant${group}, ${values.join(', ')} FROM ${joined} ${byEntity}`
  }
  if (needsAllValues(a)) return { sql: perEntity, perVariant: false }
  const ratio = a.type === 'ratio' ? ', sum(b) AS ds, sum(b * b) AS dss, sum(a * b) AS p' : ''
  const cuped = pre === null ? '' : ', sum(c) AS cs, sum(c * c) AS css, sum(a * c) AS cp'
  const g = texts.length === 0 ? '' : ', g'
  return { sql: `SELECT variant${g}, count() AS n, sum(a) AS s, sum(a * a) AS ss${ratio}${cuped} FROM (${perEntity}) GROUP BY variant${g}`, perVariant: true }
}

/** A row of compileClickHouseExperiment: per variant (n … p), or per entity (a, or a funnel's f). */
export interface ChExperimentRow {
  variant: string
  /** The breakdown group's texts, with breakdowns. */
  g?: string[]
  n?: string
  s?: number
  ss?: number
  ds?: number
  dss?: number
  p?: number
  a?: number
  f?: Array<[string, number]>
  /** A retention entity's first exposure (ms). */
  xf?: string | number
  /** With CUPED: an entity's covariate, or a variant's covariate sums. */
  c?: number
  cs?: number
  css?: number
  cp?: number
}

/** Adds up the rows of compileClickHouseExperiment's query into per-variant (and per breakdown group) sums. */
export class ExperimentRowSummer {
  readonly #a: ExperimentAggregation
  readonly #steps: number
  readonly #perVariant: boolean
  readonly #groups: BreakdownSummer

  constructor(query: ExperimentVariantsQuery, perVariant: boolean) {
    this.#a = query.aggregation
    this.#steps = experimentSteps(query)
    this.#perVariant = perVariant
    this.#groups = new BreakdownSummer(this.#a, query.variants, this.#steps, query.breakdowns.length)
  }

  add(r: ChExperimentRow): void {
    const a = this.#a
    const summer = this.#groups.group(r.g ?? [])
    if (this.#perVariant) {
      const ratio = a.type === 'ratio' ? { denominator_sum: r.ds!, denominator_sum_squares: r.dss!, numerator_denominator_sum_product: r.p! } : {}
      const cuped = r.cs === undefined ? {} : { covariate_sum: r.cs, covariate_sum_squares: r.css!, covariate_sum_product: r.cp! }
      summer.addSums(r.variant, { number_of_samples: Number(r.n), sum: r.s!, sum_squares: r.ss!, ...ratio, ...cuped })
    } else if (a.type === 'retention') {
      const events = r.f!.map(([t, m]) => [Number(t), m] as const)
      summer.addRetention(r.variant, retentionOutcome(a.retention!, a.windowMs, Number(r.xf), events))
    } else if (a.type === 'funnel') {
      const events = r.f!.map(([t, m]) => [Number(t), Number(m)] as const)
      summer.addFunnel(r.variant, funnelReached(a, events, this.#steps), r.c ?? 0)
    } else summer.addValue(r.variant, r.a!, 0, r.c ?? 0)
  }

  result(): ExperimentSums {
    return this.#groups.result()
  }
}
