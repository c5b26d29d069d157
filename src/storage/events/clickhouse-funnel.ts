/**
 * FunnelQuery → one ClickHouse query built on `windowFunnel`, which every supported server has (18.16
 * included). 18.16's windowFunnel takes only DateTime or UInt32 timestamps and orders events of equal
 * time as they happen to arrive, so each event's time is passed as `tick × steps + step index`: UInt32
 * ticks since `after` (milliseconds while `steps × (range + window)` stays under ~46 days, coarser beyond,
 * the window rounded up to whole ticks), and within one tick an earlier step sorts first. Steps may then share a
 * timestamp, as in the SQLite store. Each person is counted under the breakdown value of their earliest
 * first-step event (argMinIf).
 */
import { compileClickHouseWhere, msExpr, propertyTextExpr } from './clickhouse-filters.js'
import { quote, type ServerFeatures } from './clickhouse-schema.js'
import { funnelEventNames, type FunnelQuery } from './types.js'

const UINT32_TICKS = 4_000_000_000

/** `team_id = … AND <conditions>` of one step, or of the breakdown value check. */
function condition(q: FunnelQuery, event: FunnelQuery['steps'][number]['event'] | undefined, properties: FunnelQuery['steps'][number]['properties'], f: ServerFeatures) {
  return compileClickHouseWhere({ teamId: q.teamId, event: event ?? undefined, properties }, f)
}

export function compileClickHouseFunnel(q: FunnelQuery, table: string, f: ServerFeatures): string {
  const n = q.steps.length
  const span = Math.max(1, Math.trunc(q.before) - Math.trunc(q.after))
  // Start + window must stay below 2^32 too: 18.16 adds them in UInt32 and wraps.
  const tick = Math.max(1, Math.ceil(((span + Math.max(0, q.windowMs)) * n) / UINT32_TICKS))
  // A later step k at most `windowTicks` ticks after the start: (Δticks × n + k) ≤ windowTicks × n + n − 1.
  const window = Math.max(1, Math.ceil(q.windowMs / tick)) * n + n - 1
  const ms = msExpr('timestamp', f)
  const after = Math.trunc(q.after)
  const inValues = condition(q, undefined, [{ key: q.breakdown, operator: 'exact', value: [...q.breakdownValues] }], f)
  const stepFlags = q.steps.map((step, i) => {
    const base = condition(q, step.event, step.properties, f)
    return i === 0 ? `(${base} AND ${inValues}) AS c0` : `(${base}) AS c${i}`
  })
  const names = funnelEventNames(q)
  const where = compileClickHouseWhere({ teamId: q.teamId, event: undefined, after: q.after, before: q.before }, f)
  const conds = q.steps.map((_, i) => `c${i}`).join(', ')
  const stepIndex = n === 1 ? '0' : `multiIf(${q.steps.map((_, i) => `c${i}, ${i}`).join(', ')}, 0)`
  const counts = q.steps.map((_, k) => `countIf(lvl >= ${k + 1}) AS n${k}`).join(', ')
  return `SELECT value, ${counts} FROM (
    SELECT person_id, argMinIf(v, ts, c0) AS value, windowFunnel(${window})(rt, ${conds}) AS lvl
    FROM (
      SELECT person_id, ${propertyTextExpr(q.breakdown, f)} AS v, ${ms} AS ts,
        ${stepFlags.join(', ')},
        toUInt32(intDiv(${ms} - ${after}, ${tick}) * ${n} + ${stepIndex}) AS rt
      FROM ${table} WHERE ${where}${names === null ? '' : ` AND event IN (${names.map(quote).join(', ')})`}
    )
    GROUP BY person_id
  ) WHERE lvl >= 1 GROUP BY value ORDER BY value`
}
