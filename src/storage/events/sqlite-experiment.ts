/**
 * ExperimentEventsQuery → SQL statements over events.db: the first exposure per entity and variant (GROUP BY;
 * for funnels every exposure event, which their walk reads too; in activation mode also each entity's
 * activations after its first exposure event), and the metric events of the exposed entities with one bit per
 * step they match. Joining each event to its entity's first exposure, windows and aggregation happen beside
 * them on the read thread (experiment-aggregate.ts), so only per-variant sums leave it.
 */
import { compileSqliteWhere, groupColumn, propertyPathText, propertyText, type SqlFragment } from './sqlite-filters.js'
import { exposureStep, metricEventNames } from './experiment-funnel.js'
import { BREAKDOWN_NULL_LABEL, DEFAULT_BOUNCE, MAX_EXPERIMENT_STEPS, SESSION_SPAN_MS, type DistinctKey, type EventFilter, type ExperimentBreakdown, type ExperimentEventsQuery, type SessionProperty } from './types.js'
import { sessionValue, type SessionSql } from './session-values.js'

/** What the exposures' statements read of a query. */
type ExposureSide = Pick<ExperimentEventsQuery, 'groupTypeIndex' | 'exposure' | 'variantProperty' | 'breakdowns'>

/** An event's person: its person id, or its distinct id when stored without one. */
const PERSON = `COALESCE(person_id, 'distinct:' || distinct_id)`

/** The entity of an event: its person, or a group key. */
export function sqliteEntity(q: Pick<ExperimentEventsQuery, 'groupTypeIndex'>): string {
  return q.groupTypeIndex === null ? PERSON : groupColumn(q.groupTypeIndex)
}

/** The text a distinct count reads from an event. */
function distinctKeyText(key: DistinctKey): SqlFragment {
  if (key === 'person') return { sql: PERSON, params: [] }
  if (key === '$session_id') return propertyText(key)
  return { sql: groupColumn(Number(key.slice('$group_'.length))), params: [] }
}

function exposureWhere(q: ExposureSide): SqlFragment {
  const where = compileSqliteWhere(q.exposure)
  const entity = sqliteEntity(q)
  return q.groupTypeIndex === null ? where : { sql: `${where.sql} AND ${entity} != ''`, params: where.params }
}

/** The first exposure per entity, variant and breakdown texts (`b0`…; missing or null: the null label). */
export function compileSqliteExposures(q: ExposureSide): SqlFragment {
  return exposuresSql(q, true)
}

/**
 * Every exposure event, ungrouped, with its uuid: `e, v, t, id, b0…`. Funnels read them once for both the first
 * exposures (exposuresByEntity takes these rows as it takes the grouped ones) and the exposures their walk reads
 * among the step events (withExposureEvents), where the metric events' query read them a second time.
 */
export function compileSqliteExposureEvents(q: ExperimentEventsQuery): SqlFragment {
  return exposuresSql(q, false)
}

/** An event property's text, or a person (group) property's as its distinct id's persons (its group) have it (NULL for others). */
function breakdownText(b: ExperimentBreakdown): SqlFragment {
  if (typeof b === 'string') return propertyText(b)
  if (b.values.length === 0) return { sql: 'NULL', params: [] }
  const column = b.groupTypeIndex === null ? 'distinct_id' : groupColumn(b.groupTypeIndex)
  return {
    sql: `CASE ${b.values.map(() => `WHEN ${column} IN (SELECT value FROM json_each(?)) THEN ?`).join(' ')} END`,
    params: b.values.flatMap((v) => [JSON.stringify(v.ids), v.text]),
  }
}

/** The breakdown texts as columns `b0…` (missing or null: the null label), and their names to group on. */
function breakdownColumns(q: ExposureSide): { columns: SqlFragment; names: string } {
  const breakdowns = q.breakdowns.map(breakdownText)
  return {
    columns: { sql: breakdowns.map((b, i) => `, IFNULL(${b.sql}, ?) AS b${i}`).join(''), params: breakdowns.flatMap((b) => [...b.params, BREAKDOWN_NULL_LABEL]) },
    names: breakdowns.map((_, i) => `, b${i}`).join(''),
  }
}

function exposuresSql(q: ExposureSide, grouped: boolean): SqlFragment {
  const where = exposureWhere(q)
  const variant = propertyText(q.variantProperty)
  const { columns, names } = breakdownColumns(q)
  const group = grouped ? ` GROUP BY e, v${names}` : ''
  return {
    sql: `SELECT ${sqliteEntity(q)} AS e, ${variant.sql} AS v, ${grouped ? 'MIN(timestamp) AS t' : 'timestamp AS t, uuid AS id'}${columns.sql} FROM events WHERE ${where.sql}${group}`,
    params: [...variant.params, ...columns.params, ...where.params],
  }
}

/**
 * Activation mode's exposures: per entity and breakdown texts, the first activation event at or after the
 * entity's first exposure event (`e, t, b0…`; experiment-activation.ts takes each entity's earliest).
 */
export function compileSqliteActivations(q: ExperimentEventsQuery & { activation: EventFilter }): SqlFragment {
  const flags = exposureWhere(q)
  const where = compileSqliteWhere(q.activation)
  const entity = sqliteEntity(q)
  const { columns, names } = breakdownColumns(q)
  return {
    sql: `SELECT ${entity} AS e, MIN(timestamp) AS t${columns.sql} FROM events
      JOIN (SELECT ${entity} AS x_e, MIN(timestamp) AS x_first FROM events WHERE ${flags.sql} GROUP BY x_e) ON ${entity} = x_e
      WHERE ${where.sql} AND timestamp >= x_first GROUP BY e${names}`,
    params: [...columns.params, ...flags.params, ...where.params],
  }
}

/**
 * The metric events of `entities` (the exposed ones, read first), oldest first (then by uuid), each with its
 * steps' bits; with `withIds` each event's uuid after its bits (`e, t, m, id, k0…, v0…`), which
 * withExposureEvents merges by; with `withExposures` the exposure step's events too (an activation-mode funnel's
 * activations), with EXPOSURE_BIT. The entities come as one JSON array rather than a subquery over the exposure
 * events, which read them a second time with the exposure's property filter (≈0.13 s of CPU for 120,000).
 */
export function compileSqliteMetricEvents(q: ExperimentEventsQuery, entities: Iterable<string>, { withIds = false, withExposures = false } = {}): SqlFragment {
  const m = q.metric
  const entity = sqliteEntity(q)
  const steps = m.steps.map((step, i) => ({ bit: i, where: compileSqliteWhere({ teamId: q.teamId, event: step.event ?? undefined, properties: step.properties }) }))
  // EXPOSURE_BIT is the bit past every step's: an activation-mode funnel's step 0 is the activation event, read here.
  if (withExposures) steps.push({ bit: MAX_EXPERIMENT_STEPS, where: compileSqliteWhere(exposureStep(q)) })
  // A condition on a missing property is NULL, which would make the whole mask NULL: it is no match.
  const mask = steps.map(({ bit, where }) => `(IFNULL((${where.sql}), 0) << ${bit})`).join(' | ')
  const values = [...m.valueProperties.map(propertyPathText), ...(m.valueFields ?? []).map((field) => ({ sql: field === 'event' ? 'event' : 'distinct_id', params: [] }))]
  const keys = m.distinctKeys.map(distinctKeyText)
  const names = metricEventNames(q, withExposures)
  const sql = `SELECT e, t, m${withIds ? ', uuid' : ''}${keys.map((_, i) => `, k${i}`).join('')}${values.map((_, i) => `, v${i}`).join('')} FROM (
    SELECT ${entity} AS e, timestamp AS t, (${mask}) AS m${keys.map((k, i) => `, ${k.sql} AS k${i}`).join('')}${values.map((v, i) => `, ${v.sql} AS v${i}`).join('')}, uuid
    FROM events WHERE team_id = ? AND timestamp >= ? AND timestamp < ?
      ${names === null ? '' : `AND event IN (${names.map(() => '?').join(', ')})`}
      AND ${entity} IN (SELECT value FROM json_each(?))
  ) WHERE m != 0 ORDER BY t, uuid`
  return {
    sql,
    params: [...steps.flatMap((s) => s.where.params), ...keys.flatMap((k) => k.params), ...values.flatMap((v) => v.params), q.teamId, m.after, m.before, ...(names ?? []), JSON.stringify([...entities])],
  }
}

/**
 * The value of `property` (SessionMath) for each of `sessions`, from their events of any kind within
 * SESSION_SPAN_MS of the metric's range: `s, v`.
 */
export function compileSqliteSessionValues(q: Pick<ExperimentEventsQuery, 'teamId' | 'metric' | 'bounce'>, property: SessionProperty, sessions: Iterable<string>): SqlFragment {
  const where = compileSqliteWhere({ teamId: q.teamId, after: q.metric.after - SESSION_SPAN_MS, before: q.metric.before + SESSION_SPAN_MS })
  const session = distinctKeyText('$session_id')
  // Read only where it counts: a JSON read a row is most of this statement's time.
  const url = property === '$num_uniq_urls' ? `CASE json_type(properties, '$."$current_url"') WHEN 'text' THEN json_extract(properties, '$."$current_url"') END` : 'NULL'
  return {
    sql: `SELECT s, ${sessionValue(property, q.bounce ?? DEFAULT_BOUNCE, SESSION_SQL)} AS v FROM (SELECT ${session.sql} AS s, timestamp, event, uuid, ${url} AS url FROM ${where.from} WHERE ${where.sql})
      WHERE s IN (SELECT value FROM json_each(?)) GROUP BY s`,
    params: [...session.params, ...where.params, JSON.stringify([...sessions])],
  }
}

/** Each session property's value over a session's rows (`timestamp`, `event`, `uuid`, `url`). */
const SESSION_SQL: SessionSql = {
  seconds: 'MAX(timestamp) / 1000 - MIN(timestamp) / 1000',
  distinctOf: (...events) => `COUNT(DISTINCT CASE WHEN event IN (${events.map((e) => `'${e}'`).join(', ')}) THEN uuid END)`,
  uniqueUrls: `COUNT(DISTINCT NULLIF(url, ''))`,
  oneIf: (condition) => `CASE WHEN ${condition} THEN 1 ELSE 0 END`,
}
