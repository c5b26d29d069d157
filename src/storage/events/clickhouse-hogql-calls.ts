/**
 * HogQL's calls whose ClickHouse SQL is written out rather than the server's function of the same name, as 18.16
 * computes that differently from current servers or not at all (clickhouse-hogql.ts's Compiler calls them with its
 * operands' SQL). A value read more than once is a lambda's parameter (`arrayMap(v -> …, [x])[1]`): 18.16 copies an
 * alias's SQL wherever the alias is read, and nested calls would grow the query past its limit.
 */
import { INT64_END, INT64_MIN, roundScaleSql, type QuantileKind } from './hogql-values.js'
import type { HogqlNode } from './hogql-math.js'
import type { ValueSql } from './hogql-arrays.js'

export const NULL_NUMBER = 'CAST(NULL AS Nullable(Float64))'
export const NULL_TEXT = 'CAST(NULL AS Nullable(String))'

/** A number as a Float64 literal of its value. */
export function literal(value: number): string {
  // `-0` is the integer 0 to ClickHouse; `-0.` the double, which toString writes as hogqlText does.
  if (Object.is(value, -0)) return 'toFloat64(-0.)'
  if (Number.isFinite(value)) return `toFloat64(${String(value)})`
  // A literal too large for a double reads as infinity in HogQL too; a constant expression may be NaN.
  return Number.isNaN(value) ? 'toFloat64(0 / 0)' : `toFloat64(${value > 0 ? '' : '-'}1e308 * 10)`
}

/** `body` with `names` bound to `values` (SQL each): a lambda's parameters, read as often as `body` reads them at no cost. */
export const lambdaSql = (names: readonly string[], values: readonly string[], body: string): string =>
  `arrayMap(${names.length === 1 ? names[0] : `(${names.join(', ')})`} -> ${body}, ${values.map((v) => `[${v}]`).join(', ')})[1]`

/** The keys uniq tells an array's items apart by (hogql-values.ts's uniqKey): a number's toString(x + 0) (-0 is 0, NaN one value), a text itself. */
export const uniqKeysSql = (array: string, numbers: boolean, x: string): string => (numbers ? `arrayMap(${x} -> toString(${x} + 0), ${array})` : array)

/**
 * distinctValues: an array's items that are not NULL, the first of each as uniq tells them, where arrayEnumerateUniq
 * of their keys is 1 (18.16's arrayDistinct keeps both zeros and every NaN); `s` names its variables.
 */
export const distinctSql = (array: string, numbers: boolean, s: string): string =>
  lambdaSql([s], [array], `arrayFilter((${s}x, ${s}n) -> ${s}n = 1 AND isNotNull(${s}x), ${s}, arrayEnumerateUniq(${uniqKeysSql(s, numbers, `${s}x`)}))`)

/**
 * hogqlRound (hogql-values.ts): the scaling as ClickHouse's round does it; the rounding is round()'s with a tie that
 * it took away from zero (18.16 does; current servers take ties to even) taken to the even neighbour, trunc(v).
 * `v`: a name unique in the query.
 */
export function roundSql(x: string, places: number, v: string): string {
  const scale = `toFloat64(${roundScaleSql(places)})`
  const nearest = `if(abs(${v} - round(${v})) = 0.5 AND round(${v}) - 2 * floor(round(${v}) / 2) = 1, trunc(${v}), round(${v}))`
  const scaled = places === 0 ? x : `${x} ${places > 0 ? '*' : '/'} ${scale}`
  const rounded = lambdaSql([v], [scaled], nearest)
  return places === 0 ? rounded : `(${rounded} ${places > 0 ? '/' : '*'} ${scale})`
}

/**
 * numberCall's definitions (hogql-values.ts) of sign, modulo, intDiv and their -OrZero, of the operands' SQL: 18.16's
 * modulo and intDiv of Float64 fail the query for a zero divisor, and it has no sign. `[a, b]`: names unique in the query.
 */
export function numberCallSql(fn: 'sign' | 'modulo' | 'moduloOrZero' | 'intDiv' | 'intDivOrZero', values: readonly string[], [a, b]: readonly [string, string]): string {
  const [quotient, remainder] = [`trunc(${a} / ${b})`, `${a} - trunc(${a} / ${b}) * ${b}`]
  // NULL of a NULL operand before the test of the divisor (18.16's if is NULL for a NULL condition).
  const orZero = (sql: string) => `if(isNull(${a}) OR isNull(${b}), CAST(NULL AS Nullable(Float64)), if(ifNull(${b} = 0, 0), toFloat64(0), ${sql}))`
  const bodies = {
    sign: `toFloat64(${a} > 0) - toFloat64(${a} < 0)`,
    modulo: remainder,
    moduloOrZero: orZero(remainder),
    intDiv: quotient,
    intDivOrZero: orZero(quotient),
  }
  return lambdaSql([a, b].slice(0, values.length), values, bodies[fn])
}

/**
 * hogqlSubstring: ClickHouse's substring where 18.16 computes it as current servers do. A negative length is cut
 * from the end first (reverse() is of bytes; 18.16 cuts one byte too few after a positive offset), the offset then
 * counted within what is left; an offset 0 is an empty slice (18.16 refuses it), NULL for a NULL text.
 */
export function substringSql(text: string, offset: number, length: number): string {
  const empty = `substring(${text}, 1, 0)`
  if (offset === 0) return empty
  if (length >= 0) return `substring(${text}, ${offset}, ${length})`
  const cut = `reverse(substring(reverse(${text}), ${1 - length}))`
  if (offset > 0) return `substring(${cut}, ${offset})`
  return offset - length < 0 ? `substring(${cut}, ${offset - length})` : empty
}

/** numberInt: 18.16 has no accurateCastOrNull, and its toInt64 wraps what is out of range. */
export function numberIntSql(x: string, bind: (sql: string) => [string, string]): string {
  const [def, name] = bind(x)
  return `if(ifNull(isFinite(${def}) AND ${name} >= toFloat64(${INT64_MIN}) AND ${name} < toFloat64(${INT64_END}), 0), trunc(${name}) + 0, ${NULL_NUMBER})`
}

/** textInt: the digits' count and text bound the value, as toInt64OrNull wraps past Int64 on 18.16. `[def, t]`: the text's SQL, defined and named. */
export function textIntSql([def, t]: readonly [string, string]): string {
  const digits = `replaceRegexpOne(${t}, '^[+-]?0*', '')`
  const bound = `if(startsWith(${t}, '-'), '9223372036854775808', '9223372036854775807')`
  const fits = `match(${def}, '^[+-]?[0-9]+$') AND (length(${digits}) < 19 OR (length(${digits}) = 19 AND ${digits} <= ${bound}))`
  return `if(ifNull(${fits}, 0), toFloat64(toInt64OrNull(${t})), ${NULL_NUMBER})`
}

/**
 * hogqlQuantile of `values` (an array expression), exactly: ClickHouse's own quantile samples past 8,192 values and
 * differs by version; 0 for none. An exact kind reads the first `m` of the sorted values, those that are no NaN
 * (arraySort puts NaNs last). `s` names the lambda's sorted values, unique in the query.
 */
export function quantileSql(values: string, level: number, s: string, kind?: QuantileKind): string {
  const at = (i: string) => `${s}[toUInt64(${i}) + 1]`
  const l = `toFloat64(${String(level)})`
  if (kind === undefined) {
    const i = `(least(toFloat64(length(${s}) - 1), ${l} * (length(${s}) - 1)))`
    const interpolated = `if(floor(${i}) + 1 = length(${s}), ${at(`floor(${i})`)}, ${at(`floor(${i})`)} * (floor(${i}) + 1 - ${i}) + ${at(`floor(${i}) + 1`)} * (${i} - floor(${i})))`
    return lambdaSql([s], [`arraySort(${values})`], `if(length(${s}) = 0, toFloat64(0), ${interpolated})`)
  }
  const [m, h] = [`${s}_m`, `${s}_h`]
  let picked: string
  if (kind === 'exactInclusive' || kind === 'exactExclusive') {
    const k = `floor(${h})`
    const interpolated = `if(${k} >= ${m}, ${at(`${m} - 1`)}, if(${k} < 1, ${at('0')}, ${at(`${k} - 1`)} + (${h} - ${k}) * (${at(k)} - ${at(`${k} - 1`)})))`
    picked = lambdaSql([h], [kind === 'exactInclusive' ? `${l} * (${m} - 1) + 1` : `${l} * (${m} + 1)`], interpolated)
  } else if (kind === 'exactLow' && level === 0.5) picked = at(`intDiv(${m} + 1, 2) - 1`)
  else picked = at(level < 1 ? `floor(${l} * ${m})` : `${m} - 1`)
  const exact = lambdaSql([m], [`arrayCount(v -> NOT isNaN(v), ${s})`], `if(${m} = 0, nan, toFloat64(${picked}))`)
  return lambdaSql([s], [`arraySort(${values})`], `if(length(${s}) = 0, toFloat64(0), ${exact})`)
}

/**
 * `x in (…)` of literals as the parser reads it (`=`s of one left side joined by or), as one IN: n terms of
 * clickhouse-hogql.ts's `#logical` are ≈130 bytes each, and ClickHouse refuses a query over 256 KiB. Texts compare with a text x,
 * numbers as numbers; a list of both, or of other items, is left to `#logical`. 0 for a null x, as the `=`s are,
 * unless a last `isNull(x)` says the set holds NULL (fillInSet's transform_null_in).
 */
export function inListSql(nodes: readonly HogqlNode[], sql: Pick<ValueSql, 'compile' | 'number'>): string | null {
  const first = nodes[0]
  if (first?.op !== '=') return null
  const left = first.args[0]
  const same = JSON.stringify(left)
  const last = nodes[nodes.length - 1]
  const ofNull = last.op === 'call' && last.fn === 'isNull' && JSON.stringify(last.args[0]) === same
  const items = (ofNull ? nodes.slice(0, -1) : nodes).map((n) => (n.op === '=' && JSON.stringify(n.args[0]) === same ? n.args[1] : null))
  const texts = left.type === 'text' && items.every((i) => i?.op === 'text')
  if (!texts && !items.every((i) => i?.op === 'number')) return null
  // x compiled twice, not bound: a property's text is already `(… AS name)`, and 18.16 keeps only the outer
  // of two aliases on one expression ("Unknown identifier" where the inner one is named later).
  const x = () => (texts ? sql.compile(left) : sql.number(left))
  const list = items.map((i) => sql.compile(i!)).join(', ')
  return `if(isNull(${x()}), toFloat64(${ofNull ? 1 : 0}), toFloat64(has([${list}], assumeNotNull(${x()}))))`
}
