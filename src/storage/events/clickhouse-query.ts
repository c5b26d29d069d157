/**
 * A HogQL query's plan (hogql-query.ts) as one ClickHouse SELECT, computing what runHogqlQuery computes on the
 * embedded store: the columns' values through clickhouse-hogql.ts (the conversions of the evaluation there), each
 * aggregation over the contributions HogQL math adds (hogqlContributionSql: NULL adds nothing, and an aggregation
 * of nothing but NULLs is NULL, count and uniq 0), ORDER BY with NULLS LAST both ways.
 */
import type { ServerFeatures } from './clickhouse-schema.js'
import { msExpr, propertyPathExpr } from './clickhouse-filters.js'
import { isMoment, isPair, keepsValues, picksOne } from './hogql-functions.js'
import { emptyIsZero } from './hogql-array-aggregations.js'
import { hogqlConditionSql, hogqlContributionSql, hogqlValueSql, type FieldSql, type PropertySql } from './clickhouse-hogql.js'
import { personPropertySql } from './clickhouse-lookups.js'
import { distinctSql, lambdaSql, quantileSql, uniqKeysSql } from './clickhouse-hogql-calls.js'
import { isColumnRef, isSourceRef, type HogqlMath, type HogqlNode, type Moment } from './hogql-math.js'
import type { HogqlQueryPlan } from './hogql-query.js'

/** An aggregation over the contributions (a pair's: `[x, y]`); `name` unique in the query. */
function aggregateSql(math: HogqlMath, [contribution, second]: readonly string[], name: string): string {
  if (isMoment(math.aggregation)) return momentSql(math.aggregation, contribution, second, name)
  switch (math.aggregation) {
    case 'count':
      return `count(${contribution})`
    case 'uniq':
      // 18.16's uniqExact of nothing but NULLs is NULL, which HAVING would read as such.
      return `ifNull(uniqExact(${contribution}), 0)`
    case 'quantile':
    case 'quantiles': {
      // The values once, a lambda's (18.16's groupArray skips NULLs): the contribution written thrice, with the
      // aliases within it copied wherever they are named, took a quantile read in ORDER BY past 18.16's 2,000,000
      // elements of a query. quantiles' of none is the empty state's (quantilesOf): an array is never NULL.
      const values = `${name}_v`
      const each = (math.levels ?? [math.level ?? 0.5]).map((level, k) => quantileSql(values, level, `${name}_${k}`, math.kind))
      const none = math.levels === undefined ? 'NULL' : `[${each.map(() => (emptyIsZero(math.kind) ? 'toFloat64(0)' : 'nan')).join(', ')}]`
      return lambdaSql([values], [`groupArray(${contribution})`], `if(length(${values}) = 0, ${none}, ${math.levels === undefined ? each[0] : `[${each.join(', ')}]`})`)
    }
    default: {
      const fn = math.aggregation === 'sum' ? 'sum' : math.aggregation === 'avg' ? 'avg' : math.aggregation === 'min' ? 'min' : 'max'
      // Nullable, so that of no values it is NULL (-Null's result without a value) and the contribution stands once:
      // written twice, the aliases within it copied took a sum read in ORDER BY past 18.16's 2,000,000 elements.
      return `${fn}(toNullable(${contribution}))`
    }
  }
}

/**
 * An aggregation of the values in time (hogql-array-aggregations.ts's arrayOfValues) of `value`: those not NULL in
 * time, then by uuid's text, as the Node engine orders them (ClickHouse's own order is whichever it reads them in);
 * `s` names its lambdas' variables. Values are told apart as uniq tells them (uniqKeysSql; groupUniqArray's are
 * distinctSql's). arrayEnumerateUniq numbers each
 * value's events, 1 at its first; of the keys reversed, reversed back, 1 at its last, where the first counts them all.
 */
function valuesInTimeSql(math: HogqlMath, value: string, timestamp: string, s: string): string {
  const [p, a, all, keys, x, n, r, k, t] = ['p', 'a', 'all', 'keys', 'x', 'n', 'r', 'k', 't'].map((v) => `${s}${v}`)
  const inTime = `arrayMap(${p} -> tupleElement(${p}, 3), arraySort(groupArrayIf((${timestamp}, toString(uuid), assumeNotNull(${value} AS ${a})), isNotNull(${a}))))`
  const numbers = math.expr.type !== 'text'
  const counted = `arrayMap((${x}, ${n}, ${r}, ${k}) -> (${numbers ? `${x} + 0` : x}, ${n}, ${r}, ${k}), ${all}, arrayEnumerateUniq(${keys}), arrayReverse(arrayEnumerateUniq(arrayReverse(${keys}))), arrayEnumerate(${all}))`
  // topK's: at each value's last event its count and place, by count, then the place (the one that reached its count first).
  const top = `arrayMap(${t} -> tupleElement(${t}, 1), arraySort(${t} -> (-tupleElement(${t}, 2), tupleElement(${t}, 4)), arrayFilter(${t} -> tupleElement(${t}, 3) = 1, ${counted})))`
  const array = math.aggregation === 'groupArray' ? inTime : math.aggregation === 'groupUniqArray' ? distinctSql(inTime, numbers, `${s}u`) : lambdaSql([all], [inTime], lambdaSql([keys], [uniqKeysSql(all, numbers, x)], top))
  return math.limit === undefined ? array : `arraySlice(${array}, 1, ${math.limit})`
}

/**
 * hogql-query-run.ts's moment, spelled out (18.16's own functions are older ones): each row's `[1, x, x², x³, x⁴]` (a
 * pair's `[1, x, y, xy, x², y²]`, zeros where a value is NULL) summed by sumForEach, so that each contribution (KB
 * of SQL) stands once: a sum of each read them seven times, and 18.16 copies aliases into every place they are
 * named, which took a covariance of formatDateTime(…) past its 2,000,000 elements of a query.
 */
function momentSql(kind: Moment, x: string, y: string | undefined, name: string): string {
  const [nx, ny, vx, vy, m] = ['nx', 'ny', 'vx', 'vy', 'm'].map((s) => `${name}_${s}`)
  const terms = y === undefined ? ['1.', vx, `${vx} * ${vx}`, `${vx} * ${vx} * ${vx}`, `${vx} * ${vx} * ${vx} * ${vx}`] : ['1.', vx, vy, `${vx} * ${vy}`, `${vx} * ${vx}`, `${vy} * ${vy}`]
  const zeros = `[${terms.map(() => '0.').join(', ')}]`
  const [nulls, values] = y === undefined ? [[nx], [vx]] : [[nx, ny], [vx, vy]]
  const present = lambdaSql(values, nulls.map((v) => `assumeNotNull(${v})`), `[${terms.join(', ')}]`)
  const row = lambdaSql(nulls, y === undefined ? [x] : [x, y], `if(${nulls.map((v) => `isNull(${v})`).join(' OR ')}, ${zeros}, ${present})`)
  const [n, s1, s2, s3, s4, s5] = [1, 2, 3, 4, 5, 6].map((i) => `${m}[${i}]`)
  const sample = kind.endsWith('Samp')
  const v = `((${s2} - ${s1} * ${s1} / ${n}) / (${n}${sample ? ' - 1' : ''}))`
  const variance = `${sample ? `if(${n} <= 1, 0 / 0, ` : '('}if(${v} > 0, ${v}, 0))`
  // The third and fourth central moments, as Moments.h writes them (0 of one value); over the variance's power, NaN where it is not above 0.
  const central = (sql: string) => `if(${n} = 1, 0, ${sql})`
  const third = central(`(${s3} - (3 * ${s2} - 2 * ${s1} * ${s1} / ${n}) * ${s1} / ${n}) / ${n}`)
  const fourth = central(`(${s4} - (4 * ${s3} - (6 * ${s2} - 3 * ${s1} * ${s1} / ${n}) * ${s1} / ${n}) * ${s1} / ${n}) / ${n}`)
  const shape = (moment: string, power: string) => `if(${variance} > 0, ${moment} / pow(${variance}, ${power}), 0 / 0)`
  const value =
    kind === 'corr'
      ? `(${n} * ${s3} - ${s1} * ${s2}) / sqrt((${n} * ${s4} - ${s1} * ${s1}) * (${n} * ${s5} - ${s2} * ${s2}))`
      : kind === 'covarPop' || kind === 'covarSamp'
        ? `(${s3} - ${s1} * ${s2} / ${n}) / (${n}${sample ? ' - 1' : ''})`
        : kind === 'skewPop' || kind === 'skewSamp'
          ? shape(third, '1.5')
          : kind === 'kurtPop' || kind === 'kurtSamp'
            ? shape(fourth, '2')
            : kind === 'stddevPop' || kind === 'stddevSamp'
              ? `sqrt(${variance})`
              : variance
  return lambdaSql([m], [`sumForEach(${row})`], `if(${n} = 0, NULL, ${value})`)
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
    if (keepsValues(c.math)) return `${valuesInTimeSql(c.math!, hogqlValueSql(c.math!.expr, property, `qc${i}`, field), field('timestamp'), `_q${i}`)} AS col_${i}`
    if (c.math !== null && picksOne(c.math)) {
      // The first value in time (then by uuid's text) that is not null, as the Node engine's any (argMax's the last): NULL
      // of none (toNullable: of a value that is never NULL, argMinIf of no rows is its type's default, 0 or '').
      return `${c.math.aggregation === 'any' ? 'argMinIf' : 'argMaxIf'}(toNullable(${hogqlValueSql(c.math.expr, property, `qc${i}`, field)} AS _qa${i}), (${field('timestamp')}, toString(uuid)), isNotNull(_qa${i})) AS col_${i}`
    }
    if (c.math === null) return `${hogqlValueSql(c.expr, property, `qc${i}`, field)} AS col_${i}`
    const math = c.math
    // A pair's expression is the array of its two values (mathOf), each a contribution of its own.
    const values = isPair(math) ? (math.expr as HogqlNode & { op: 'call' }).args : [math.expr]
    const sql = aggregateSql(math, values.map((expr, j) => hogqlContributionSql({ ...math, expr }, property, j === 0 ? `qc${i}` : `qc${i}b`, field)), `_q${i}`)
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
