/**
 * The functions and aggregations HogQL here reads (hogql-math.ts says what each computes), and the rules of their
 * calls: how many arguments, which must be texts or literals, and the type of the value. hogql-parse.ts reads the
 * calls with them (and an aggregation call as the aggregation it is, mathOf); clickhouse-hogql.ts writes some by them.
 */
import { numberNode, type HogqlAggregation, type HogqlMath, type HogqlNode, type HogqlType, type Moment } from './hogql-math.js'
import { checkRegexCall, REGEX_FUNCTIONS } from './hogql-regex.js'
import { ARRAY_FUNCTIONS, arrayCall, isArray, refuseLooseArrays } from './hogql-arrays.js'
import { HogqlMathError } from './hogql-tokens.js'
import { isDatetime, markChoice } from './hogql-time-marks.js'
import { checkTextArguments, isTextFunction, TEXT_SPECS, textFunctionType } from './hogql-texts.js'
import { URL_SPECS } from './hogql-urls.js'
import { SUBSTRING_LIMIT } from './hogql-values.js'
import { QUANTILE_NAMES, quantileOf, type AggregationParameters } from './hogql-array-aggregations.js'
import type { RegexEngine } from './sqlite-actions.js'

/** The aggregations of a value where a condition holds (`sumIf(x, c)`), read as the aggregation of if(c, x, null). */
export const CONDITIONAL_AGGREGATIONS: ReadonlySet<string> = new Set(['sumif', 'avgif', 'minif', 'maxif', 'anyif', 'uniqif', 'uniqexactif', 'uniqhll12if', 'uniqthetaif', 'countdistinctif', 'grouparrayif', 'groupuniqarrayif', 'topkif', ...QUANTILE_NAMES.filter((name) => name.endsWith('if'))])
/** The covariances and the correlation: of two values. */
const PAIRED: ReadonlySet<string> = new Set(['covarpop', 'covarsamp', 'corr'])
/** The aggregations of moments (queries only: hogql-parse.ts), and their -If. */
export const MOMENTS: ReadonlySet<string> = new Set(['varpop', 'varsamp', 'stddevpop', 'stddevsamp', 'skewpop', 'skewsamp', 'kurtpop', 'kurtsamp', ...PAIRED].flatMap((name) => [name, `${name}if`]))
/** The aggregations of values in time whose value is an array (queries only: a column of the answer, or read by the functions of arrays over the groups), and their -If; quantiles' arrays are quantileOf's `many`. */
const ARRAYS: ReadonlySet<string> = new Set(['grouparray', 'grouparrayif', 'groupuniqarray', 'groupuniqarrayif', 'topk', 'topkif'])
/** Whether only HogQL queries read an aggregation (by its lower-case name): the moments' and the arrays'. */
export const queriesOnly = (name: string): boolean => MOMENTS.has(name) || ARRAYS.has(name) || quantileOf(name)?.many === true
/** Whether an aggregation keeps its values in time (groupArray, groupUniqArray, topK): an array of them (hogql-array-aggregations.ts's arrayOfValues). */
export const keepsValues = (math: HogqlMath | null | undefined): boolean => math?.aggregation === 'groupArray' || math?.aggregation === 'groupUniqArray' || math?.aggregation === 'topK'
/** Whether an aggregation's value is an array: of values in time (keepsValues), or quantiles'. */
export const givesArray = (math: HogqlMath | null | undefined): boolean => keepsValues(math) || math?.aggregation === 'quantiles'
/** The type of the items of an aggregation's array. */
export const itemType = (math: HogqlMath): 'number' | 'text' => (math.aggregation === 'quantiles' || math.expr.type === 'number' ? 'number' : 'text')
/** A pair's aggregation (PAIRED) reads its two values as one node, the array of them, so that what walks a column's expression reads both. */
export const isPair = (math: HogqlMath): boolean => PAIRED.has(math.aggregation.toLowerCase())
/** Whether an aggregation is one of the moments (MOMENTS' names as mathOf gives them). */
export const isMoment = (aggregation: string): aggregation is Moment => MOMENTS.has(aggregation.toLowerCase())
export const AGGREGATIONS = new Set<string>(['sum', 'avg', 'min', 'max', 'any', 'count', 'uniq', 'uniqexact', 'uniqhll12', 'uniqtheta', 'countdistinct', 'countif', 'argmin', 'argmax', 'anylast', ...CONDITIONAL_AGGREGATIONS, ...QUANTILE_NAMES, ...MOMENTS, ...ARRAYS])
const QUANTILES_READ = 'median, quantile(level), medianExact, medianExactLow, medianExactHigh, quantileExact(level), quantileExactLow(level), quantileExactHigh(level), quantileExactInclusive(level), quantileExactExclusive(level) and their -If'
const READ_AGGREGATIONS = `count, countIf, sum, sumIf, avg, avgIf, min, minIf, max, maxIf, any, anyIf, anyLast, argMin and argMax (of timestamp), uniq, uniqIf, uniqExact, uniqExactIf, uniqHLL12, uniqHLL12If, uniqTheta, uniqThetaIf, count(distinct …), countDistinct, countDistinctIf, ${QUANTILES_READ}, quantiles(level, …) and quantilesExact…(level, …) (arrays) and their -If, varPop, varSamp, stddevPop, stddevSamp, skewPop, skewSamp, kurtPop, kurtSamp, covarPop, covarSamp, corr, groupArray, groupUniqArray (each also with (n), at most n values), topK(n) and their -If`
const MATH_AGGREGATIONS = `sum, avg, min, max, any, anyLast, count, countIf, sumIf, avgIf, minIf, maxIf, anyIf, uniq, uniqIf, uniqExact, uniqExactIf, uniqHLL12, uniqHLL12If, uniqTheta, uniqThetaIf, countDistinct, countDistinctIf, ${QUANTILES_READ}`
/** The refusal of an aggregation that `use` (a query, or math and filters) does not read. */
export const unreadAggregation = (written: string, use: string): HogqlMathError =>
  new HogqlMathError(`The aggregation ${written}() is not supported in ${use} here; ${use === 'HogQL queries' ? READ_AGGREGATIONS : MATH_AGGREGATIONS} are.`)
/**
 * Aggregations read as others: uniqExact, countDistinct and ClickHouse's sketches uniqHLL12 and uniqTheta are uniq
 * (exact here, as uniq is); anyLast, "the last value
 * encountered" in an order ClickHouse does not fix, is the last in time where not null (argMax(x, timestamp)'s), as
 * any is the first.
 */
const RENAMED: Readonly<Record<string, HogqlAggregation>> = { uniqexact: 'uniq', uniqhll12: 'uniq', uniqtheta: 'uniq', countdistinct: 'uniq', anylast: 'last', grouparray: 'groupArray', groupuniqarray: 'groupUniqArray', topk: 'topK', varpop: 'varPop', varsamp: 'varSamp', stddevpop: 'stddevPop', stddevsamp: 'stddevSamp', skewpop: 'skewPop', skewsamp: 'skewSamp', kurtpop: 'kurtPop', kurtsamp: 'kurtSamp', covarpop: 'covarPop', covarsamp: 'covarSamp', corr: 'corr' }
/** HogQL's other aggregations, named in the refusal rather than read as unknown functions. */
export const OTHER_AGGREGATIONS = /^(median\w+|quantiles|quantile\w+|uniq\w*|any\w+|stddev\w*|var\w*|grouparray\w+|groupuniqarray\w+|topk|argm(in|ax)\w+)$/i
/** The aggregations that pick one event's value, the first in time (`any`, argMin's) or the last (argMax's), where it is not null. */
export const picksOne = (math: HogqlMath | null | undefined): boolean => math?.aggregation === 'any' || math?.aggregation === 'last'
/** A function's name, fewest arguments and most arguments. */
export type FunctionSpec = readonly [HogqlFunction, number, number]
export const FUNCTIONS = [
  ['toFloat', 1, 1],
  ['coalesce', 1, 64],
  ['ifNull', 2, 2],
  ['if', 3, 3],
  ['abs', 1, 1],
  ['floor', 1, 1],
  ['ceil', 1, 1],
  ['trunc', 1, 1],
  ['sign', 1, 1],
  ['sqrt', 1, 1],
  ['exp', 1, 1],
  ['log', 1, 1],
  ['log2', 1, 1],
  ['log10', 1, 1],
  ['pow', 2, 2],
  // `a % b` is modulo(a, b), as HogQL prints it.
  ['modulo', 2, 2],
  ['moduloOrZero', 2, 2],
  ['intDiv', 2, 2],
  ['intDivOrZero', 2, 2],
  ['isNull', 1, 1],
  ['isNotNull', 1, 1],
  ['lower', 1, 1],
  ['upper', 1, 1],
  ['length', 1, 1],
  ['empty', 1, 1],
  ['notEmpty', 1, 1],
  ['startsWith', 2, 2],
  ['endsWith', 2, 2],
  ['match', 2, 2],
  ['toString', 1, 1],
  ['toInt', 1, 1],
  ['concat', 2, 64],
  ['round', 1, 2],
  ['greatest', 2, 64],
  ['least', 2, 64],
  ['trim', 1, 1],
  ['trimLeft', 1, 1],
  ['trimRight', 1, 1],
  ['position', 2, 2],
  ['replaceAll', 3, 3],
  ['replaceOne', 3, 3],
  // As PostHog's HogQL maps it (functions/mapping.py): always with a length.
  ['substring', 3, 3],
  ['extract', 2, 2],
  ['replaceRegexpOne', 3, 3],
  ['replaceRegexpAll', 3, 3],
  // Arrays (hogql-arrays.ts); a literal holds up to 1000 items, as an IN list.
  ['array', 1, 1000],
  ['splitByChar', 2, 3],
  ['splitByString', 2, 3],
  ['arrayElement', 2, 2],
  ['has', 2, 2],
  ['indexOf', 2, 2],
  ['countEqual', 2, 2],
  ['hasAny', 2, 2],
  ['hasAll', 2, 2],
  ['arrayStringConcat', 1, 2],
  ['arraySort', 1, 1],
  ['arrayReverseSort', 1, 1],
  ['arrayReverse', 1, 1],
  ['arraySlice', 2, 3],
  ['arrayDistinct', 1, 1],
  // A lambda and an array (hogql-parse.ts reads them, not typedCall).
  ['arrayMap', 2, 2],
  ['arrayFilter', 2, 2],
  ['arraySum', 1, 2],
  ['arrayExists', 2, 2],
  ['arrayAll', 2, 2],
  ['arrayCount', 2, 2],
  ['arrayFirst', 2, 2],
  ['arrayLast', 2, 2],
  ...URL_SPECS,
  ...TEXT_SPECS,
] as const
export type HogqlFunction = (typeof FUNCTIONS)[number][0]
/** ClickHouse's other names of some (`power`, `ln`), read as the function they name. */
const SYNONYMS = [['power', 'pow'], ['ln', 'log']] as const
export const FUNCTION_BY_NAME = new Map<string, FunctionSpec>(FUNCTIONS.map((f) => [f[0].toLowerCase(), f]))
for (const [synonym, fn] of SYNONYMS) FUNCTION_BY_NAME.set(synonym, FUNCTION_BY_NAME.get(fn.toLowerCase())!)
/** PostHog's functions of its comparisons (HOGQL_COMPARISON_MAPPING), read as the operators. */
const COMPARISON_CALLS: Readonly<Record<string, '=' | '!=' | '<' | '>' | '<=' | '>='>> = { equals: '=', notEquals: '!=', less: '<', greater: '>', lessOrEquals: '<=', greaterOrEquals: '>=' }
const LIKE_CALLS = ['like', 'ilike', 'notLike', 'notILike']
/** Integer types' ranges, as accurateCastOrNull reads them: a value outside is NULL. */
const INT_RANGES: ReadonlyArray<readonly [string, number, number]> = [['Int8', -128, 127], ['Int16', -32768, 32767], ['Int32', -2147483648, 2147483647], ['UInt8', 0, 255], ['UInt16', 0, 65535], ['UInt32', 0, 4294967295]]
/**
 * ClickHouse's names of the casts PostHog reads (HOGQL_CLICKHOUSE_FUNCTIONS: its accurateCastOrNull aliases of the
 * integer and float types, and -OrNull, -OrZero of Int64 and Float64), as toInt's and toFloat's readings; a narrower
 * integer type's range is its value's, and -OrZero reads NULL as 0.
 */
const CASTS = new Map<string, { to: 'toInt' | 'toFloat'; range?: readonly [number, number]; orZero?: true }>([
  ...(['toInt64', 'toInt64OrNull'] as const).map((name) => [name, { to: 'toInt' }] as const),
  ...(['toIntOrZero', 'toInt64OrZero'] as const).map((name) => [name, { to: 'toInt', orZero: true }] as const),
  ...(['toFloat64', 'toFloatOrNull', 'toFloat64OrNull'] as const).map((name) => [name, { to: 'toFloat' }] as const),
  ...(['toFloatOrZero', 'toFloat64OrZero'] as const).map((name) => [name, { to: 'toFloat', orZero: true }] as const),
  ...INT_RANGES.map(([type, low, high]) => [`to${type}`, { to: 'toInt', range: [low, high] }] as const),
])
/** Functions read as others (Parser.#sugar): their names, in refusals. */
export const SUGAR = ['multiIf', 'nullIf', 'left', 'right', ...Object.keys(COMPARISON_CALLS), ...LIKE_CALLS, ...CASTS.keys()]

export const MAX_DEPTH = 64
export const MAX_IN_TERMS = 1000
export const tooDeep = () => new HogqlMathError(`The expression nests deeper than ${MAX_DEPTH} levels.`)

/**
 * `left = a or left = b …` (NULL-safe =s), as `left IN (a, b)` reads, or `tooLong` where the =s would repeat `left` past
 * MAX_IN_TERMS nodes: each repeats it, in the evaluation and in ClickHouse's SQL for a list not all of literals.
 */
export function equalsAny(left: HogqlNode, items: readonly HogqlNode[], tooLong: string): HogqlNode {
  if (items.length * size(left) > MAX_IN_TERMS) throw new HogqlMathError(tooLong)
  const equals = items.map((item): HogqlNode => ({ op: '=', type: 'number', args: [left, item] }))
  return equals.length === 1 ? equals[0] : { op: 'or', type: 'number', args: equals }
}

/** The nodes of an expression. */
export function size(node: HogqlNode): number {
  return 'args' in node ? node.args.reduce((n, a) => n + size(a), 1) : 1
}

/**
 * multiIf(c1, v1, c2, v2, …, else) as nested ifs, and nullIf(a, b) as if(a = b, null, a), ClickHouse's
 * definitions: the evaluation and the SQL of `if` and `=` then hold for them too; equals(a, b), like(a, b) … as their
 * operators. `depth`: the parser's nesting.
 */
export function sugarCall(fn: string, args: HogqlNode[], depth: number): HogqlNode {
  const call = (type: HogqlType, ...operands: HogqlNode[]): HogqlNode => markChoice({ op: 'call', fn: 'if', type, args: operands }, operands.slice(1))
  if (Object.hasOwn(COMPARISON_CALLS, fn) || LIKE_CALLS.includes(fn)) {
    if (args.length !== 2) throw new HogqlMathError(`${fn}() takes 2 arguments, got ${args.length}.`)
    if (Object.hasOwn(COMPARISON_CALLS, fn)) return { op: COMPARISON_CALLS[fn], type: 'number', args: [args[0], args[1]] }
    const node = likeNode(fn.toLowerCase().endsWith('ilike') ? 'ilike' : 'like', args[0], args[1])
    return fn.startsWith('not') ? { op: 'not', type: 'number', args: [node] } : node
  }
  if (fn === 'left' || fn === 'right') {
    // ClickHouse's: the first (last) n bytes, or all but the last (first) |n|.
    if (args.length !== 2) throw new HogqlMathError(`${fn}() takes 2 arguments, got ${args.length}.`)
    const n = (integerLiteral(args[1], [1 - SUBSTRING_LIMIT, SUBSTRING_LIMIT], `${fn}() takes its length as an integer literal from ${1 - SUBSTRING_LIMIT} to ${SUBSTRING_LIMIT}, as in ${fn}(x, 3).`) as { value: number }).value
    const [offset, length] = fn === 'left' ? [1, n] : n >= 0 ? [-n, n] : [1 - n, SUBSTRING_LIMIT]
    return typedCall(FUNCTION_BY_NAME.get('substring')!, [args[0], numberNode(offset), numberNode(length)])
  }
  const cast = CASTS.get(fn)
  if (cast !== undefined) {
    if (args.length !== 1) throw new HogqlMathError(`${fn}() takes 1 argument, got ${args.length}.`)
    const value = typedCall(FUNCTION_BY_NAME.get(cast.to.toLowerCase())!, args)
    if (cast.orZero) return typedCall(FUNCTION_BY_NAME.get('ifnull')!, [value, numberNode(0)])
    if (cast.range === undefined) return value
    // The value is read twice, as nullIf's first argument.
    if (size(args[0]) > MAX_IN_TERMS / 2) throw new HogqlMathError(`The argument of ${fn}() is too large here.`)
    return call('number', betweenNode(value, numberNode(cast.range[0]), numberNode(cast.range[1]), false), value, { op: 'null', type: 'null' })
  }
  if (fn === 'nullIf') {
    if (args.length !== 2) throw new HogqlMathError(`nullIf() takes 2 arguments, got ${args.length}.`)
    // Its first argument is read twice: nested nullIfs would double the expression at each level.
    if (size(args[0]) > MAX_IN_TERMS / 2) throw new HogqlMathError('The first argument of nullIf() is too large here.')
    const [a, b] = args
    return call(unify([a]), { op: '=', type: 'number', args: [a, b] }, { op: 'null', type: 'null' }, a)
  }
  if (args.length < 3 || args.length % 2 === 0) throw new HogqlMathError(`multiIf() takes conditions and values in pairs, then the value otherwise (an odd number, at least 3), got ${args.length}.`)
  if (depth + args.length / 2 > MAX_DEPTH) throw tooDeep()
  let otherwise = args[args.length - 1]
  for (let i = args.length - 3; i >= 0; i -= 2) otherwise = call(unify([args[i + 1], otherwise]), args[i], args[i + 1], otherwise)
  return otherwise
}

/**
 * `CASE [subject] WHEN c THEN r … ELSE e END` as PostHog's parser reads it: if or multiIf of the conditions, and with a
 * subject transform(subject, [whens], [thens], e), which finds a NULL among the WHENs as `=` does here. Without ELSE
 * PostHog's call has no value otherwise, which ClickHouse refuses: a 400 here.
 */
export function caseNode(subject: HogqlNode | null, pairs: HogqlNode[], otherwise: HogqlNode | null, depth: number): HogqlNode {
  if (pairs.length === 0) throw new HogqlMathError('CASE takes at least one WHEN … THEN … here.')
  if (otherwise === null) throw new HogqlMathError("CASE takes an ELSE here, as PostHog's HogQL (CASE WHEN c THEN a ELSE b END).")
  // The subject is read once for each WHEN, as nullIf's first argument twice.
  if (subject !== null && size(subject) * (pairs.length / 2) > MAX_IN_TERMS) throw new HogqlMathError("CASE's subject is too large here for its WHENs: it is read once for each.")
  const conditions = subject === null ? pairs : pairs.map((p, i): HogqlNode => (i % 2 === 0 ? { op: '=', type: 'number', args: [subject, p] } : p))
  return sugarCall('multiIf', [...conditions, otherwise], depth)
}

/**
 * `x [NOT] BETWEEN low AND high`: `low <= x AND x <= high` (NOT: `x < low OR x > high`), which PostHog's printer wraps
 * in ifNull(…, 0), as these comparisons read a NULL operand.
 */
export function betweenNode(x: HogqlNode, low: HogqlNode, high: HogqlNode, negated: boolean): HogqlNode {
  if (size(x) > MAX_IN_TERMS / 2) throw new HogqlMathError('The left side of BETWEEN is too large here: it is read twice.')
  const compare = (op: '<' | '>' | '<=' | '>=', bound: HogqlNode): HogqlNode => ({ op, type: 'number', args: [x, bound] })
  // Each comparison is 0 or 1, never NULL: their product is `and` and a sum not 0 `or`, without Kleene's logic, whose SQL
  // reads each operand thrice (18.16 expands the aliases of nested ones past its AST limit).
  if (!negated) return { op: '*', type: 'number', args: [compare('>=', low), compare('<=', high)] }
  return { op: '!=', type: 'number', args: [{ op: '+', type: 'number', args: [compare('<', low), compare('>', high)] }, numberNode(0)] }
}

/** The functions of texts, which refuse a number, and are null where an argument is (hogql-values.ts's textCall). */
export const TEXT_FUNCTIONS: ReadonlySet<HogqlFunction> = new Set(['lower', 'upper', 'length', 'empty', 'notEmpty', 'startsWith', 'endsWith', 'match', 'trim', 'trimLeft', 'trimRight', 'position', 'replaceAll', 'replaceOne', 'substring', 'extract', 'replaceRegexpOne', 'replaceRegexpAll', ...URL_SPECS.map(([fn]) => fn)])
/** The functions whose value is a text. */
const TO_TEXT: ReadonlySet<string> = new Set(['lower', 'upper', 'toString', 'concat', 'trim', 'trimLeft', 'trimRight', 'replaceAll', 'replaceOne', 'substring', 'extract', 'replaceRegexpOne', 'replaceRegexpAll', ...URL_SPECS.map(([fn]) => fn).filter((fn) => fn !== 'port')])
/**
 * Why a function is not read in `use`, or null where it is: math's evaluation has no regex engine (evaluateHogql),
 * and filters' readers check match()'s pattern only (hogqlPatterns), where a query's reader checks every regex
 * call's (QueryClock.regex).
 */
export function notReadIn(fn: HogqlFunction, use: string): string | null {
  if (use === 'HogQL math' && fn === 'match') return `${fn}() is read in HogQL filters only here, not in HogQL math.`
  if (use !== 'HogQL queries' && REGEX_FUNCTIONS.has(fn) && fn !== 'match') return `${fn}() is read in HogQL queries only here, not in ${use}.`
  return null
}

/** The type of a choice among operands (coalesce, if): text when every one that is not null is. */
export function unify(nodes: readonly HogqlNode[]): HogqlType {
  const types = nodes.map((n) => n.type).filter((t) => t !== 'null')
  if (types.length === 0) return 'null'
  return types.every((t) => t === 'text') ? 'text' : 'number'
}

/** An integer literal (`-1` too) from `min` to `max` as a number node, else the refusal `why`. */
export function integerLiteral(node: HogqlNode, [min, max]: readonly [number, number], why: string): HogqlNode {
  const negated = node.op === 'negate' && node.args[0].op === 'number'
  const value = node.op === 'number' ? node.value : negated ? -(node.args[0] as { value: number }).value : Number.NaN
  if (!Number.isInteger(value) || value < min || value > max) throw new HogqlMathError(why)
  return { op: 'number', type: 'number', value: value + 0 }
}

/**
 * The arguments of a call whose rules are more than a count: literals where the stores need them, in range. round's
 * places and substring's offset and length take no column (18.16 takes none for places; ClickHouse types a
 * column here Float64 or String, which substring refuses).
 */
function checkArguments(fn: HogqlFunction, args: HogqlNode[], regex: RegexEngine | undefined): void {
  if (TEXT_FUNCTIONS.has(fn) && (fn === 'substring' ? args.slice(0, 1) : args).some((a) => a.type === 'number')) throw new HogqlMathError(`${fn}() takes texts, not numbers.`)
  // Literals, so that the reader can check the stores run them before any query (hogqlPatterns, checkRegexCall).
  if (REGEX_FUNCTIONS.has(fn)) {
    if (args.slice(1).some((a) => a.op !== 'text')) throw new HogqlMathError(`${fn}() takes its pattern${args.length > 2 ? ' and replacement as text literals' : ' as a text literal'} ('…').`)
    const [pattern, replacement] = args.slice(1).map((a) => (a as { value: string }).value)
    if (regex !== undefined) checkRegexCall(fn, pattern, replacement, regex)
  }
  if (isTextFunction(fn)) checkTextArguments(fn, args, integerLiteral)
  if (fn === 'round' && args.length === 2) args[1] = integerLiteral(args[1], [-32768, 32767], 'round() takes its places as an integer literal from -32768 to 32767, as in round(x, 2).')
  if (fn === 'substring') {
    for (let i = 1; i < args.length; i++) args[i] = integerLiteral(args[i], [-SUBSTRING_LIMIT, SUBSTRING_LIMIT], `substring() takes its offset and length as integer literals from -${SUBSTRING_LIMIT} to ${SUBSTRING_LIMIT}, as in substring(x, 1, 3).`)
  }
  // 18.16 takes no other pattern or replacement ("must be constant").
  if ((fn === 'replaceAll' || fn === 'replaceOne') && (args[1].op !== 'text' || args[2].op !== 'text')) throw new HogqlMathError(`${fn}() takes its pattern and replacement as text literals ('…').`)
  if ((fn === 'extractURLParameter' || fn === 'cutURLParameter') && args[1].op !== 'text') throw new HogqlMathError(`${fn}() takes its parameter's name as a text literal ('…').`)
  // Where no name holds a delimiter, the first `name=` with one before it is a search of three texts (hogql-urls.ts).
  if (fn === 'cutURLParameter' && /[?#&]/.test((args[1] as { value: string }).value)) throw new HogqlMathError('cutURLParameter() takes a name without ?, # or & here.')
}

/** `left [i]like right`: texts, the pattern a literal (18.16 takes no other: "don't support non-constant needle argument"). */
export function likeNode(op: 'like' | 'ilike', left: HogqlNode, right: HogqlNode): HogqlNode {
  if (left.type === 'number' || right.type === 'number') throw new HogqlMathError(`${op.toUpperCase()} compares texts, not numbers.`)
  if (right.op !== 'text') throw new HogqlMathError(`${op.toUpperCase()} takes its pattern as a text literal ('…') here.`)
  return { op, type: 'number', args: [left, right] }
}

/** HogQL's `=~`, `=~*`, `!~`, `!~*` in `use`: match(left, right), the starred ones folding case (`(?i)` first), the `!` ones negated. */
export function regexOperator(op: string, left: HogqlNode, right: HogqlNode, use: string, regex: RegexEngine | undefined): HogqlNode {
  const unread = notReadIn('match', use)
  if (unread !== null) throw new HogqlMathError(unread)
  const pattern = op.endsWith('*') && right.op === 'text' ? { ...right, value: `(?i)${right.value}` } : right
  const node = typedCall(FUNCTION_BY_NAME.get('match')!, [left, pattern], regex)
  return op.startsWith('!') ? { op: 'not', type: 'number', args: [node] } : node
}

/**
 * A call of a function of the table with its arguments read: their count and what each function takes checked,
 * the node typed as ClickHouse types the call.
 */
export function typedCall([fn, fewest, most]: FunctionSpec, args: HogqlNode[], regex?: RegexEngine): HogqlNode {
  if (args.length < fewest || args.length > most) {
    throw new HogqlMathError(`${fn}() takes ${fewest === most ? fewest : `${fewest} to ${most}`} argument${most === 1 ? '' : 's'}, got ${args.length}.`)
  }
  if (ARRAY_FUNCTIONS.has(fn) || args.some(isArray)) return arrayCall(fn, args)
  checkArguments(fn, args, regex)
  const chooses = fn === 'coalesce' || fn === 'ifNull' || fn === 'greatest' || fn === 'least'
  const type: HogqlType = chooses ? unify(args) : fn === 'if' ? unify(args.slice(1)) : TO_TEXT.has(fn) ? 'text' : isTextFunction(fn) ? textFunctionType(fn) : 'number'
  const node: HogqlNode = { op: 'call', fn, type, args }
  return chooses || fn === 'if' ? markChoice(node, fn === 'if' ? args.slice(1) : args) : node
}

/** An aggregation call (Parser.aggregation) as the aggregation of an expression. */
export function mathOf(call: { name: string; args: HogqlNode[] } & AggregationParameters): HogqlMath {
  for (const arg of call.args) refuseLooseArrays(arg)
  if (call.name === 'argmin' || call.name === 'argmax') {
    const [value, by] = call.args
    const name = call.name === 'argmin' ? 'argMin' : 'argMax'
    if (call.args.length !== 2 || by.op !== 'field' || by.field !== 'timestamp') throw new HogqlMathError(`${name}() takes a value and timestamp here, as in ${name}(properties.plan, timestamp): the value of the ${call.name === 'argmin' ? 'first' : 'last'} event in time where it is not null.`)
    return { aggregation: call.name === 'argmin' ? 'any' : 'last', expr: value }
  }
  const conditional = CONDITIONAL_AGGREGATIONS.has(call.name) || (MOMENTS.has(call.name) && call.name.endsWith('if'))
  const pairOf = call.name.replace(/if$/, '')
  if (PAIRED.has(pairOf)) {
    // covarPopIf(x, y, c) is covarPop(if(c, x, null), if(c, y, null)), as the other -Ifs.
    const [x, y, c] = call.args
    if (call.args.length !== (conditional ? 3 : 2)) throw new HogqlMathError(`${call.name}() takes two values${conditional ? ' and a condition' : ''}, as in ${pairOf === 'corr' ? 'corr' : 'covarPop'}${conditional ? 'If' : ''}(properties.a, properties.b${conditional ? ", event = 'x'" : ''}), got ${call.args.length} arguments.`)
    const kept = (v: HogqlNode): HogqlNode => (conditional ? { op: 'call', fn: 'if', type: unify([v]), args: [c, v, { op: 'null', type: 'null' }] } : v)
    return { aggregation: RENAMED[pairOf], expr: { op: 'call', fn: 'array', type: 'number', args: [kept(x), kept(y)] } }
  }
  if (conditional && call.args.length !== 2) throw new HogqlMathError(`${call.name}() takes a value and a condition, as in sumIf(properties.amount, properties.plan = 'pro'), got ${call.args.length} arguments.`)
  if (!conditional && call.args.length > 1) throw new HogqlMathError(`${call.name}() takes one argument here, got ${call.args.length}.`)
  const expr = call.args[0] ?? { op: 'number', type: 'number', value: 1 }
  if (call.args.length === 0 && call.name !== 'count') throw new HogqlMathError(`${call.name}() needs an argument.`)
  const otherwise: HogqlNode = { op: 'null', type: 'null' }
  // countIf(c) counts the events where c holds: count(if(c, 1, null)); sumIf(x, c) sums x where c holds: sum(if(c, x,
  // null)), as ClickHouse's -If reads a null condition as false. uniqExact and count(distinct …) are uniq, exact.
  if (call.name === 'countif') return { aggregation: 'count', expr: { op: 'call', fn: 'if', type: 'number', args: [expr, { op: 'number', type: 'number', value: 1 }, otherwise] } }
  if (conditional) {
    // The aggregation without -If (countDistinctIf is uniq's) of if(c, x, null).
    const base = call.name.slice(0, -2)
    return mathOf({ ...call, name: base === 'countdistinct' ? 'uniq' : base, args: [markChoice({ op: 'call', fn: 'if', type: unify([expr]), args: [call.args[1], expr, otherwise] }, [expr])] })
  }
  const kind = call.kind === undefined ? {} : { kind: call.kind }
  if (call.levels !== undefined) return { aggregation: 'quantiles', expr, levels: call.levels, ...kind }
  if (call.level !== undefined) return { aggregation: 'quantile', expr, level: call.level, ...kind }
  const math: HogqlMath = { aggregation: RENAMED[call.name] ?? (call.name as HogqlAggregation), expr, ...(call.limit === undefined ? {} : { limit: call.limit }) }
  // ClickHouse's array of dates and times would be written as texts of their type: not read here.
  if (keepsValues(math) && isDatetime(expr)) throw new HogqlMathError(`${math.aggregation}() takes numbers or texts here, not dates and times: formatDateTime() writes them as texts.`)
  return math
}
