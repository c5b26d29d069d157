/**
 * FunnelQuery → the ClickHouse query reading each person's events of the funnel as one array, oldest first
 * (then by uuid as text, SQLite's order), each with its steps' bits (legacyStepBit) and its breakdown value; the
 * store walks them with LegacyFunnelCounter (legacy-funnel.ts), as the SQLite store walks its rows. ClickHouse's
 * windowFunnel, used here before, let one event count for two steps and ordered an instant's events otherwise.
 */
import { compileClickHouseWhere, msExpr, propertyTextExpr } from './clickhouse-filters.js'
import type { ServerFeatures } from './clickhouse-schema.js'
import { legacyStepBit } from './legacy-funnel.js'
import { funnelEventNames, type FunnelQuery } from './types.js'

/** Rows `{ p, ev }`: a person's events as `[ms, uuid, bits, breakdown text]`, sorted. */
export function compileClickHouseFunnel(q: FunnelQuery, table: string, f: ServerFeatures): string {
  const inValues = compileClickHouseWhere({ teamId: q.teamId, properties: [{ key: q.breakdown, operator: 'exact', value: [...q.breakdownValues] }] }, f)
  const bits = q.steps.map((step, k) => {
    const where = compileClickHouseWhere({ teamId: q.teamId, event: step.event ?? undefined, properties: step.properties }, f)
    return `ifNull(toUInt32(${k === 0 ? `(${where}) AND (${inValues})` : where}), 0) * ${legacyStepBit(k)}`
  })
  const names = funnelEventNames(q)
  const where = compileClickHouseWhere({ teamId: q.teamId, event: names ?? undefined, after: q.after, before: q.before }, f)
  return `SELECT p, arraySort(groupArray((ts, u, m, v))) AS ev FROM (
      SELECT toString(person_id) AS p, ${msExpr('timestamp', f)} AS ts, toString(uuid) AS u, (${bits.join(' + ')}) AS m,
        ifNull(${propertyTextExpr(q.breakdown, f)}, '') AS v
      FROM ${table} WHERE ${where}
    ) WHERE m != 0 GROUP BY p`
}
