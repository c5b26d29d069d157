/**
 * ClickHouse's parametric aggregations (`quantile(0.9)(x)`, `quantiles(0.5, 0.9)(x)`, `topK(5)(x)`,
 * `groupArray(10)(x)`): the parameters the parser reads, and what the aggregations whose value is an array compute in
 * Node (hogql-query-run.ts reads them; clickhouse-query.ts writes the same in 18.16's SQL).
 */
import type { HogqlMath, HogqlValue } from './hogql-math.js'
import { HogqlMathError, type Token } from './hogql-tokens.js'
import { distinctValues, hogqlQuantile, uniqKey, type QuantileKind } from './hogql-values.js'

/**
 * The quantiles, by lower-case name: quantile(level) and median (its 0.5), quantiles(level, …) (an array, queries
 * only), and ClickHouse's exact kinds (hogql-values.ts's QuantileKind) of each, with their -If.
 */
const QUANTILES: ReadonlyMap<string, { kind?: QuantileKind; median: boolean; many: boolean }> = new Map(
  ([['', undefined], ['exact', 'exact'], ['exactlow', 'exactLow'], ['exacthigh', 'exactHigh'], ['exactinclusive', 'exactInclusive'], ['exactexclusive', 'exactExclusive']] as const).flatMap(([suffix, kind]) =>
    [`quantile${suffix}`, `quantiles${suffix}`, ...(suffix.includes('clusive') ? [] : [`median${suffix}`])].flatMap((name) =>
      [name, `${name}if`].map((key) => [key, { kind, median: name.startsWith('median'), many: name.startsWith('quantiles') }] as const),
    ),
  ),
)
export const quantileOf = (name: string) => QUANTILES.get(name)
export const QUANTILE_NAMES: readonly string[] = [...QUANTILES.keys()]

/** The aggregations of values in time that keep at most n where written (`groupArray(10)(x)`), and topK, which must. */
const LIMITED: ReadonlySet<string> = new Set(['grouparray', 'grouparrayif', 'groupuniqarray', 'groupuniqarrayif', 'topk', 'topkif'])
/** topK's largest count (ClickHouse's TOP_K_MAX_SIZE). */
const TOP_K_MAX = 0xffffff

export interface AggregationParameters {
  /** quantile's level, 0–1 (median: 0.5), and its exact kind if any (quantileExact …, of quantiles too). */
  level?: number
  kind?: QuantileKind
  /** quantiles' levels, in the order written. */
  levels?: number[]
  /** How many values an array keeps at most: topK's count, groupArray(n)'s. */
  limit?: number
}

/** The numbers of `(…)` at tokens[at], and where the `(` after them is (-1: none follows); null where it holds anything else. */
function numbersAt(tokens: readonly Token[], at: number): { values: number[]; next: number } | null {
  const values: number[] = []
  for (let j = at + 1; ; j += 2) {
    const [value, punct] = [tokens[j], tokens[j + 1]]
    if (value?.kind !== 'number' || punct?.kind !== 'punct' || (punct.value !== ')' && punct.value !== ',')) return null
    values.push(value.value)
    if (punct.value === ')') return { values, next: tokens[j + 2]?.kind === 'punct' && tokens[j + 2].value === '(' ? j + 2 : -1 }
  }
}

/**
 * The parameters of the aggregation `name` (lower case; `written` as written) whose `(` is tokens[at], and where its
 * arguments' `(` is. quantile's level, quantiles' levels and topK's count are required (PostHog's min_params); an
 * array of values in time may keep at most n.
 */
export function aggregationParameters(name: string, written: string, tokens: readonly Token[], at: number): AggregationParameters & { at: number } {
  const quantile = quantileOf(name)
  if (quantile?.median) return { level: 0.5, kind: quantile.kind, at }
  if (quantile === undefined && !LIMITED.has(name)) return { at }
  const read = numbersAt(tokens, at)
  if (quantile !== undefined) {
    const { many, kind } = quantile
    // ClickHouse's exclusive quantile refuses the ends, where it would not interpolate.
    const ends = kind === 'exactExclusive' ? 'above 0 and below 1' : 'from 0 to 1'
    const inRange = (v: number) => (kind === 'exactExclusive' ? v > 0 && v < 1 : v >= 0 && v <= 1)
    const example = `${written}(${many ? '0.5, 0.9' : '0.9'})(properties.amount)`
    if (read === null || (!many && read.values.length !== 1) || !read.values.every(inRange)) throw new HogqlMathError(`${written}() takes its ${many ? 'levels as numbers' : 'level as a number'} ${ends}, as in ${example}.`)
    if (read.next < 0) throw new HogqlMathError(`${written}(${many ? 'levels' : 'level'}) takes the expression after its ${many ? 'levels' : 'level'}, as in ${example}.`)
    return { ...(many ? { levels: read.values } : { level: read.values[0] }), kind, at: read.next }
  }
  const topK = name.startsWith('topk')
  const example = topK ? `${written}(5)(properties.$browser)` : `${written}(10)(event)`
  if (read === null || read.next < 0) {
    if (topK) throw new HogqlMathError(`${written}(n) takes how many values it keeps before the expression, as in ${example}.`)
    return { at }
  }
  const max = topK ? TOP_K_MAX : Number.MAX_SAFE_INTEGER
  const [n] = read.values
  if (read.values.length !== 1 || !Number.isInteger(n) || n < 1 || n > max) throw new HogqlMathError(`${written}(n) keeps at most n values, n a whole number from 1 to ${max}, as in ${example}.`)
  return { limit: n, at: read.next }
}

/**
 * The array of `values` (those not null, in time) an aggregation of values in time gives: groupArray's, the first n
 * where it keeps n; groupUniqArray's, the first of each, told apart as uniq tells values (-0 is 0, NaN one value);
 * topK's, the values by their counts, and of equal counts the one that reached its count first (its last event the
 * earlier), as ClickHouse's Space-Saving counters order them when they read the events in time (exact here; its
 * own are approximate past 3n values), a number read as x + 0.
 */
export function arrayOfValues(math: HogqlMath, values: readonly HogqlValue[]): HogqlValue[] {
  if (math.aggregation === 'groupArray') return values.slice(0, math.limit)
  if (math.aggregation === 'groupUniqArray') return distinctValues(values).slice(0, math.limit)
  const counts = new Map<string | null, { value: HogqlValue; n: number; last: number }>()
  values.forEach((value, i) => {
    const key = uniqKey(value)
    const seen = counts.get(key)
    if (seen === undefined) counts.set(key, { value, n: 1, last: i })
    else Object.assign(seen, { n: seen.n + 1, last: i })
  })
  return [...counts.values()].sort((a, b) => b.n - a.n || a.last - b.last).slice(0, math.limit).map((c) => (typeof c.value === 'number' ? c.value + 0 : c.value))
}

/**
 * quantiles' array: each level's quantile of the values, as quantile computes it. Of none, as ClickHouse's
 * quantiles give an empty state (an array is never NULL): NaN for those that interpolate, 0 (the type's default)
 * for quantilesExact, -Low and -High (QuantileExact.h's getMany).
 */
export function quantilesOf(math: HogqlMath, values: number[]): number[] {
  if (values.length === 0) return math.levels!.map(() => (emptyIsZero(math.kind) ? 0 : Number.NaN))
  return math.levels!.map((level) => hogqlQuantile(values, level, math.kind))
}

/** Whether quantiles of the kind give 0 of no values (NaN otherwise). */
export const emptyIsZero = (kind: QuantileKind | undefined): boolean => kind === 'exact' || kind === 'exactLow' || kind === 'exactHigh'
