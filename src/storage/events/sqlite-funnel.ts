/**
 * FunnelQuery → the statement reading each person's events of the funnel from events.db, in person order and
 * oldest first (then by uuid), each with its steps' bits (legacyStepBit) and its breakdown value; the store walks
 * them with LegacyFunnelCounter (legacy-funnel.ts), as the ClickHouse store walks the arrays it reads.
 */
import { legacyStepBit } from './legacy-funnel.js'
import { compileSqliteWhere, propertyText, type SqlFragment } from './sqlite-filters.js'
import { funnelEventNames, type FunnelQuery } from './types.js'

const marks = (n: number) => Array.from({ length: n }, () => '?').join(', ')

/** Rows `p, t, m, v`: person, ms, steps' bits (never 0), breakdown text. */
export function compileSqliteFunnel(q: FunnelQuery): SqlFragment {
  const steps = q.steps.map((step) => compileSqliteWhere({ teamId: q.teamId, event: step.event ?? undefined, properties: step.properties }))
  const value = propertyText(q.breakdown)
  const names = funnelEventNames(q)
  // A condition on a missing property is NULL, which would make the whole mask NULL: it is no match.
  const bits = steps.map((_, k) => `(IFNULL(c${k}${k === 0 ? ` AND v IN (${marks(q.breakdownValues.length)})` : ''}, 0) * ${legacyStepBit(k)})`)
  const sql = `SELECT p, t, m, v FROM (
    SELECT p, t, id, v, ${bits.join(' | ')} AS m FROM (
      SELECT COALESCE(person_id, 'distinct:' || distinct_id) AS p, timestamp AS t, uuid AS id, ${value.sql} AS v, ${steps.map((step, k) => `(${step.sql}) AS c${k}`).join(', ')}
      FROM events WHERE team_id = ? AND ${names === null ? '1' : `event IN (${marks(names.length)})`} AND timestamp >= ? AND timestamp < ?
    )
  ) WHERE m != 0 ORDER BY p, t, id`
  const params = [...q.breakdownValues, ...value.params, ...steps.flatMap((s) => s.params), q.teamId, ...(names ?? []), q.after, q.before]
  return { sql, params }
}
