/**
 * ExperimentEventsQuery → two ClickHouse queries, as sqlite-experiment.ts: the first exposure per entity and
 * variant, and the metric events of the exposed entities with one bit per step they match. Functions every
 * supported server has (18.16 included); times come back as text (Int64 in JSON) and are read as numbers.
 */
import { compileClickHouseWhere, groupColumn, msExpr, propertyTextExpr } from './clickhouse-filters.js'
import type { ServerFeatures } from './clickhouse-schema.js'
import { funnelEventNames, type ExperimentEventsQuery } from './types.js'

function entity(q: ExperimentEventsQuery): string {
  return q.groupTypeIndex === null ? 'toString(person_id)' : groupColumn(q.groupTypeIndex)
}

function exposureWhere(q: ExperimentEventsQuery, f: ServerFeatures): string {
  const where = compileClickHouseWhere(q.exposure, f)
  return q.groupTypeIndex === null ? where : `${where} AND ${entity(q)} != ''`
}

export function compileClickHouseExposures(q: ExperimentEventsQuery, table: string, f: ServerFeatures): string {
  return `SELECT x_entity AS e, x_variant AS v, toString(min(x_ms)) AS t FROM (
    SELECT ${entity(q)} AS x_entity, ${propertyTextExpr(q.variantProperty, f)} AS x_variant, ${msExpr('timestamp', f)} AS x_ms
    FROM ${table} WHERE ${exposureWhere(q, f)}
  ) GROUP BY x_entity, x_variant`
}

export function compileClickHouseMetricEvents(q: ExperimentEventsQuery, table: string, f: ServerFeatures): string {
  const m = q.metric
  const mask = m.steps
    .map((step, i) => `ifNull(toUInt32(${compileClickHouseWhere({ teamId: q.teamId, event: step.event ?? undefined, properties: step.properties }, f)}), 0) * ${2 ** i}`)
    .join(' + ')
  const names = funnelEventNames(m)
  const where = compileClickHouseWhere({ teamId: q.teamId, after: m.after, before: m.before, event: names ?? undefined }, f)
  const values = m.valueProperties.map((key, i) => `, ${propertyTextExpr(key, f)} AS v${i}`).join('')
  const session = m.session ? propertyTextExpr('$session_id', f) : 'NULL'
  return `SELECT e, toString(x_ms) AS t, m, s${m.valueProperties.map((_, i) => `, v${i}`).join('')} FROM (
    SELECT ${entity(q)} AS e, ${msExpr('timestamp', f)} AS x_ms, (${mask}) AS m, ${session} AS s${values}, uuid
    FROM ${table}
    WHERE ${where} AND ${entity(q)} IN (SELECT ${entity(q)} FROM ${table} WHERE ${exposureWhere(q, f)})
  ) WHERE m != 0 ORDER BY x_ms, uuid`
}

