/**
 * A HogQL query's plan (hogql-query.ts) as one ClickHouse SELECT, computing what runHogqlQuery computes on the
 * embedded store: the columns' values through clickhouse-hogql.ts (the conversions of the evaluation there), each
 * aggregation over the contributions HogQL math adds (hogqlContributionSql: NULL adds nothing, and an aggregation
 * of nothing but NULLs is NULL, count and uniq 0), ORDER BY with NULLS LAST both ways.
 */
import type { ServerFeatures } from './clickhouse-schema.js'
import { msExpr, propertyPathExpr } from './clickhouse-filters.js'
import { picksOne } from './hogql-functions.js'
import { hogqlConditionSql, hogqlContributionSql, hogqlValueSql, type FieldSql, type PropertySql } from './clickhouse-hogql.js'
import { personPropertySql } from './clickhouse-lookups.js'
import { quantileSql } from './hogql-values.js'
import { isColumnRef, isSourceRef, type HogqlMath } from './hogql-math.js'
import type { HogqlQueryPlan } from './hogql-query.js'

/** An aggregation over the contributions; `name` unique in the query. */
function aggregateSql(math: HogqlMath, contribution: string, name: string): string {
  switch (math.aggregation) {
    case 'count':
      return `count(${contribution})`
    case 'uniq':
      // 18.16's uniqExact of nothing but NULLs is NULL, which HAVING would read as such.
      return `ifNull(uniqExact(${contribution}), 0)`
    case 'quantile':
      return `if(count(${contribution}) = 0, NULL, ${quantileSql(`groupArrayIf(assumeNotNull(${contribution}), isNotNull(${contribution}))`, math.level ?? 0.5, name)})`
    case 'varPop':
    case 'varSamp':
    case 'stddevPop':
    case 'stddevSamp': {
      // hogql-query-run.ts's spread, spelled out: 18.16's own (Welford's steps, untrimmed) answer otherwise at the edges.
      const sample = math.aggregation.endsWith('Samp')
      const n = `count(${contribution})`
      const v = `(sum(${contribution} * ${contribution}) - sum(${contribution}) * sum(${contribution}) / ${n}) / (${n}${sample ? ' - 1' : ''})`
      const variance = `${sample ? `if(${n} <= 1, 0 / 0, ` : '('}arrayMap(${name} -> if(${name} > 0, ${name}, 0), [${v}])[1])`
      return `if(${n} = 0, NULL, ${math.aggregation.startsWith('stddev') ? `sqrt(${variance})` : variance})`
    }
    default: {
      const fn = math.aggregation === 'sum' ? 'sum' : math.aggregation === 'avg' ? 'avg' : math.aggregation === 'min' ? 'min' : 'max'
      return `if(count(${contribution}) = 0, NULL, ${fn}(${contribution}))`
    }
  }
}

/**
 * The SELECT, `table` the events (FINAL) and `where` the project's events in the innermost plan's time bounds.
 * Columns are `col_<i>`; a GROUP BY or ORDER BY expression that is no column is read as a hidden one. A query of a
 * subquery reads it renamed, its columns `sub_<i>`, as they are fields of this query, not its own columns.
 */
export function hogqlQuerySql(plan: HogqlQueryPlan, table: string, where: string, f: ServerFeatures): string {
  const source = plan.source
  const from =
    source === null
      ? `${table} WHERE ${where}`
      : // materialize: 18.16 refuses a constant column from a subquery within some functions ("Nullable(Float64)
        // cannot be inside Nullable column"). ignore(every column): 18.16 drops the columns an outer query does not
        // read, and a subquery that aggregates without GROUP BY whose aggregations are all dropped gives a row per
        // event (`SELECT count() FROM (SELECT 1 AS k, count() FROM …)` counted the events).
        `(SELECT ${source.columns.slice(0, source.shown).map((_, i) => `materialize(col_${i}) AS sub_${i}`).join(', ')} FROM (${hogqlQuerySql(source, table, where, f)}) WHERE ignore(${source.columns.slice(0, source.shown).map((_, i) => `sub_${i}`).join(', ')}) = 0) WHERE 1`
  const property: PropertySql = (path, person) => (person ? personPropertySql(plan.persons, path) : propertyPathExpr(path, f))
  const field: FieldSql = (name) => {
    if (isColumnRef(name)) return name
    if (isSourceRef(name)) return `toNullable(${name})`
    if (name === 'timestamp' || name === 'created_at') return `toNullable(toFloat64(${msExpr(name, f)}))`
    return name === 'uuid' || name === 'person_id' ? `toNullable(toString(${name}))` : `toNullable(\`${name}\`)`
  }
  const select = plan.columns.map((c, i) => {
    if (c.math !== null && picksOne(c.math)) {
      // The first value in time (then by uuid's text) that is not null, as the Node engine's any (argMax's the last): NULL
      // of none (toNullable: of a value that is never NULL, argMinIf of no rows is its type's default, 0 or '').
      return `${c.math.aggregation === 'any' ? 'argMinIf' : 'argMaxIf'}(toNullable(${hogqlValueSql(c.math.expr, property, `qc${i}`, field)} AS _qa${i}), (${field('timestamp')}, toString(uuid)), isNotNull(_qa${i})) AS col_${i}`
    }
    const sql = c.math === null ? hogqlValueSql(c.expr, property, `qc${i}`, field) : aggregateSql(c.math, hogqlContributionSql(c.math, property, `qc${i}`, field), `_q${i}`)
    return `${sql} AS col_${i}`
  })
  // A key is every column of its expression (two columns of one are both grouped by, as ClickHouse asks), or a hidden one.
  const columnsOf = (expr: unknown) => plan.columns.flatMap((c, i) => (c.math === null && JSON.stringify(c.expr) === JSON.stringify(expr) ? [`col_${i}`] : []))
  const groupBy = [
    ...new Set(
      plan.groupBy.flatMap((g, i) => {
        const named = columnsOf(g)
        if (named.length > 0) return named
        select.push(`${hogqlValueSql(g, property, `qg${i}`, field)} AS grp_${i}`)
        return [`grp_${i}`]
      }),
    ),
  ]
  const orderBy = plan.orderBy.map((o, i) => {
    let name = `col_${o.column}`
    if (o.column === null) {
      select.push(`${hogqlValueSql(o.expr, property, `qo${i}`, field)} AS ord_${i}`)
      name = `ord_${i}`
    }
    return `${name} ${o.desc ? 'DESC' : 'ASC'} NULLS ${o.nullsFirst ? 'FIRST' : 'LAST'}`
  })
  const condition = plan.where === null ? '' : ` AND ${hogqlConditionSql(plan.where, property, 'qw', field)}`
  // count() > 0: 18.16 drops constant keys from GROUP BY, and then answers a row for no events.
  const having = [...(groupBy.length > 0 ? ['count() > 0'] : []), ...(plan.having === null ? [] : [hogqlConditionSql(plan.having, property, 'qh', field)])]
  return (
    `SELECT ${plan.distinct ? 'DISTINCT ' : ''}${select.join(', ')} FROM ${from}${condition}` +
    (groupBy.length > 0 ? ` GROUP BY ${groupBy.join(', ')}` : '') +
    (having.length > 0 ? ` HAVING ${having.join(' AND ')}` : '') +
    (orderBy.length > 0 ? ` ORDER BY ${orderBy.join(', ')}` : '') +
    (plan.limitBy === null ? '' : ` LIMIT ${plan.limitBy.n} BY ${plan.limitBy.columns.map((i) => `col_${i}`).join(', ')}`) +
    (Number.isFinite(plan.fetch) ? ` LIMIT ${plan.fetch}` : '')
  )
}
