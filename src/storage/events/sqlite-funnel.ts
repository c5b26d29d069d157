/**
 * FunnelQuery → one SQL statement over events.db. Each person's candidate events are read once into a
 * materialised table with one flag per step; each first-step event starts a chain, and step k of a chain
 * is the earliest step-k event at or after step k − 1 and within the window of the chain's start
 * (a join SQLite serves with an automatic index on the person column). A person reaches step k when
 * any of their chains does, and is counted under the breakdown value of their earliest first-step event.
 */
import { compileSqliteWhere, propertyText, type SqlFragment } from './sqlite-filters.js'
import { funnelEventNames, type FunnelQuery } from './types.js'

const marks = (n: number) => Array.from({ length: n }, () => '?').join(', ')

export function compileSqliteFunnel(q: FunnelQuery): SqlFragment {
  const params: unknown[] = []
  const steps = q.steps.map((step) => compileSqliteWhere({ teamId: q.teamId, event: step.event ?? undefined, properties: step.properties }))
  const value = propertyText(q.breakdown)
  const names = funnelEventNames(q)

  const flags = steps.map((step, i) => `(${step.sql}) AS c${i}`).join(', ')
  params.push(...value.params, ...steps.flatMap((s) => s.params))
  let sql = `WITH ev AS MATERIALIZED (
    SELECT COALESCE(person_id, 'distinct:' || distinct_id) AS p, timestamp AS t, ${value.sql} AS v, ${flags}
    FROM events WHERE team_id = ? AND ${names === null ? '1' : `event IN (${marks(names.length)})`} AND timestamp >= ? AND timestamp < ?
  ),
  s0 AS MATERIALIZED (SELECT p, t AS start, t FROM ev WHERE c0 AND v IN (${marks(q.breakdownValues.length)}))`
  params.push(q.teamId, ...(names ?? []), q.after, q.before, ...q.breakdownValues)

  for (let k = 1; k < q.steps.length; k++) {
    sql += `,
  s${k} AS MATERIALIZED (
    SELECT s.p, s.start, MIN(e.t) AS t FROM s${k - 1} s JOIN ev e
      ON e.p = s.p AND e.c${k} AND e.t >= s.t AND e.t <= s.start + ?
    GROUP BY s.p, s.start
  )`
    params.push(q.windowMs)
  }

  const reached = q.steps.map((_, k) => `SELECT DISTINCT p, ${k + 1} AS k FROM s${k}`).join(' UNION ALL ')
  sql += `,
  lv AS (SELECT p, MAX(k) AS lvl FROM (${reached}) GROUP BY p),
  firsts AS (
    SELECT p, v FROM (
      SELECT p, v, ROW_NUMBER() OVER (PARTITION BY p ORDER BY t, v) AS rn
      FROM ev WHERE c0 AND v IN (${marks(q.breakdownValues.length)})
    ) WHERE rn = 1
  )
  SELECT f.v AS value, ${q.steps.map((_, k) => `SUM(lv.lvl >= ${k + 1}) AS n${k}`).join(', ')}
  FROM firsts f JOIN lv ON lv.p = f.p GROUP BY f.v ORDER BY f.v`
  params.push(...q.breakdownValues)
  return { sql, params }
}
