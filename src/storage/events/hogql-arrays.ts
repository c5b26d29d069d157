/**
 * HogQL's arrays (in queries, filters and math), as values the functions of arrays read: literals (`['a', 'b']`,
 * `array(…)`) and splitByChar and splitByString of a text, and over a query's groups a group's array (groupArray's, topK's, quantiles' …: a field node
 * with `array`, hogql-query-columns.ts's arrayColumn, whose value the run gives), and arraySort, arrayReverseSort,
 * arrayReverse, arrayDistinct, arraySlice, arrayMap and arrayFilter of any of them, read by `arr[i]` (arrayElement), has, indexOf, countEqual, hasAny and
 * hasAll (of two), length, empty, notEmpty, arrayStringConcat, arraySum, and with a lambda arrayExists, arrayAll,
 * arrayCount, arrayFirst and arrayLast (LAMBDA_FUNCTIONS). An array is never a value of its own here (a column, an operand, another function's argument:
 * refuseLooseArrays), so the rest of the evaluation (hogql-math.ts) and of the SQL (clickhouse-hogql.ts) never meets
 * one; each reader's value is computed here. ClickHouse's rules, each checked on 18.16: an index counts from 1, or
 * from the end when negative (0 is refused), and one out of range gives the items' default ('' or 0), NULL where
 * they are Nullable; splitByChar's separator is one byte, splitByString's not empty; a split of NULL is refused there
 * (no Nullable array), and reads as a split of '' here, as PostHog's printer makes it (`ifNull(arg, '')`); has and
 * indexOf find no NULL in a split or a literal of literals (18.16 finds its type's default; its SQL asks isNull
 * first), and find NULL among Nullable items (searchOfItems).
 */
import { equalsAny, integerLiteral, MAX_IN_TERMS, type HogqlFunction } from './hogql-functions.js'
import { numberNode, type HogqlNode, type HogqlType, type HogqlValue } from './hogql-math.js'
import { HogqlMathError } from './hogql-tokens.js'
import { isDatetime } from './hogql-time-marks.js'
import { compareValues, distinctValues, hogqlTextSql, joinedText, TEXT_CALLS } from './hogql-values.js'
import { distinctSql, lambdaSql } from './clickhouse-hogql-calls.js'

const MAKERS: ReadonlySet<string> = new Set(['array', 'splitByChar', 'splitByString'])
/** The functions of an array whose value is an array (its items sorted, reversed, sliced, distinct, mapped or filtered), read as arrays are. */
const REMAKERS: ReadonlySet<string> = new Set(['arraySort', 'arrayReverseSort', 'arrayReverse', 'arraySlice', 'arrayDistinct', 'arrayMap', 'arrayFilter'])
/** The functions of an array, which they read as their first argument. */
const READERS: ReadonlySet<string> = new Set(['arrayElement', 'has', 'indexOf', 'countEqual', 'hasAny', 'hasAll', 'length', 'empty', 'notEmpty', 'arrayStringConcat', 'arraySum', 'arrayExists', 'arrayAll', 'arrayCount', 'arrayFirst', 'arrayLast'])
/**
 * The functions of an array written with a lambda first (`fn(x -> body, arr)`; arraySum's optional), whose node's
 * arguments are the array, the lambda's variable (a `scalar` with `item`, given each item in turn) and its body:
 * arrayMap's items and arraySum's terms are the body's values, the others test each item by the body as a condition
 * (a number: neither NULL nor 0).
 */
export const LAMBDA_FUNCTIONS: ReadonlySet<string> = new Set(['arrayMap', 'arrayFilter', 'arraySum', 'arrayExists', 'arrayAll', 'arrayCount', 'arrayFirst', 'arrayLast'])
/** Whether a node is a call with a lambda (LAMBDA_FUNCTIONS): its array, variable and body. */
export const isLambdaCall = (node: HogqlNode): boolean => node.op === 'call' && LAMBDA_FUNCTIONS.has(node.fn) && node.args.length === 3
/** The readers of two arrays: whether the first holds any, or all, of the second's items. */
const PAIRS: ReadonlySet<string> = new Set(['hasAny', 'hasAll'])
/** The functions that take only arrays first (length, empty and notEmpty take texts too). */
export const ARRAY_FUNCTIONS: ReadonlySet<string> = new Set([...MAKERS, ...REMAKERS, ...PAIRS, ...LAMBDA_FUNCTIONS, 'arrayElement', 'has', 'indexOf', 'countEqual', 'arrayStringConcat'])
const READ_BY = "arr[i] (arrayElement), has, indexOf, countEqual, hasAny, hasAll, length, empty, notEmpty, arrayStringConcat, arraySum, arrayExists, arrayAll, arrayCount, arrayFirst and arrayLast (of an array, or of arraySort, arrayReverseSort, arrayReverse, arrayDistinct, arraySlice, arrayMap or arrayFilter of one), as in splitByChar('/', properties.$pathname)[2]"
/** The most items indexOf reads of a literal with Nullable items (searchOfItems): each nests an if. */
const MAX_NESTED = 32
/** The largest index magnitude read: its arithmetic stays exact in doubles. */
const MAX_INDEX = 1e15

type Call = HogqlNode & { op: 'call' }
/** A group's column whose value is an array (groupArray's, hogql-query-columns.ts's arrayColumn): its items never NULL. */
type ColumnArray = HogqlNode & { op: 'field'; array: true }
type ArrayNode = Call | ColumnArray
/** How clickhouse-hogql.ts writes a value of either type. */
export interface ValueSql {
  number(node: HogqlNode): string
  text(node: HogqlNode): string
  compile(node: HogqlNode): string
  /** A name unique in the query. */
  fresh(): string
  /** `x -> body`: a lambda of the item's variable (a fresh name, which its node compiles to), its body's SQL by `body`. */
  lambda(item: HogqlNode, body: () => string): string
}

export const isArray = (node: HogqlNode): node is ArrayNode => (node.op === 'call' && (MAKERS.has(node.fn) || REMAKERS.has(node.fn))) || (node.op === 'field' && node.array === true)
/** Whether a call reads an array (its value is computed here). */
export const readsArray = (node: Call): boolean => READERS.has(node.fn) && node.args[0] !== undefined && isArray(node.args[0])
/** The array a call takes as its first argument: a reader's, or a function's that remakes it. */
const takesArray = (node: Call): boolean => readsArray(node) || (REMAKERS.has(node.fn) && isArray(node.args[0]))

const literalItem = (n: HogqlNode): boolean => n.op === 'number' || n.op === 'text' || (n.op === 'negate' && n.args[0].op === 'number')
/**
 * Whether an array's items are Nullable to ClickHouse: a literal's that are not all literals (a split's never are), an
 * arrayMap's whose body may be NULL (neverNull), and another remade one's as its array's.
 */
function nullableItems(arr: ArrayNode): boolean {
  if (arr.op !== 'call') return false
  if (arr.fn === 'arrayMap') return !neverNull(arr.args[2])
  return REMAKERS.has(arr.fn) ? nullableItems(arr.args[0] as ArrayNode) : arr.fn === 'array' && !arr.args.every(literalItem)
}

/**
 * Whether a node is never NULL, as far as its shape tells: literals, comparisons (NULL-safe), concat, isNull, the
 * readers of arrays that count or test, a variable of items never NULL, and what reads only such nodes the same type.
 */
function neverNull(n: HogqlNode): boolean {
  const all = (args: readonly HogqlNode[], type = n.type) => args.every((a) => a.type === type && neverNull(a))
  if (n.op === 'number' || n.op === 'text' || n.op === 'like' || n.op === 'ilike' || ['=', '!=', '<', '<=', '>', '>='].includes(n.op)) return true
  if (n.op === 'scalar') return n.item?.nullable === false
  if (n.op === 'negate' || n.op === 'not' || n.op === 'and' || n.op === 'or' || n.op === '+' || n.op === '-' || n.op === '*' || n.op === '/') return all(n.args, 'number')
  if (n.op !== 'call') return false
  if (readsArray(n)) return !['arrayElement', 'arrayFirst', 'arrayLast'].includes(n.fn) || !nullableItems(n.args[0] as ArrayNode)
  if (n.fn === 'concat' || n.fn === 'isNull' || n.fn === 'isNotNull') return true
  if (n.fn === 'coalesce' || n.fn === 'ifNull') return n.args.some((a) => all([a]))
  if (n.fn === 'if') return all(n.args.slice(1))
  return (n.fn === 'toString' || TEXT_CALLS.has(n.fn)) && n.args.every((a) => neverNull(a))
}
const textLiteral = (node: HogqlNode | undefined): string | null => (node?.op === 'text' ? node.value : null)

/** `[a, b, …]` (or array(a, b, …)): items all texts or all numbers, NULLs among them. */
export function arrayLiteral(items: HogqlNode[]): HogqlNode {
  if (items.length === 0) throw new HogqlMathError('An empty array is not read here: ClickHouse types it Array(Nothing).')
  // As an IN list's (hogql-functions.ts and this module import each other: read when called, not at load).
  if (items.length > MAX_IN_TERMS) throw new HogqlMathError(`An array literal holds at most ${MAX_IN_TERMS} items here.`)
  if (items.some(isArray)) throw new HogqlMathError('Arrays of arrays are not read here.')
  const types = new Set(items.map((i) => i.type).filter((t) => t !== 'null'))
  if (types.size !== 1) throw new HogqlMathError(types.size === 0 ? 'An array of NULLs only is not read here: give it an item of its type.' : "An array's items are all texts or all numbers here: ClickHouse has no common type of String and a number (toString() or toFloat() converts).")
  return { op: 'call', fn: 'array', type: [...types][0] as HogqlType, args: items }
}

/** A call of a function of arrays, or of any function given an array (hogql-functions.ts's typedCall): checked and typed. */
export function arrayCall(fn: HogqlFunction, args: HogqlNode[]): HogqlNode {
  if (fn === 'array') return arrayLiteral(args)
  const [first, second] = args
  if (fn === 'splitByChar' || fn === 'splitByString') {
    if (args.length === 3) throw new HogqlMathError(`${fn}()'s max_substrings is not read here: 18.16 has none, and current servers keep the text's rest or not by a setting.`)
    const separator = textLiteral(first)
    if (separator === null) throw new HogqlMathError(`${fn}() takes its separator as a text literal first, as in ${fn}('/', properties.$pathname).`)
    if (fn === 'splitByChar' && Buffer.byteLength(separator) !== 1) throw new HogqlMathError("splitByChar() takes a separator of exactly one byte (an ASCII character); splitByString() takes longer ones.")
    if (separator === '') throw new HogqlMathError('splitByString() takes a separator that is not empty.')
    if (second.type === 'number' || isArray(second)) throw new HogqlMathError(`${fn}() splits a text, not a ${second.type === 'number' ? 'number' : 'array'}.`)
    return { op: 'call', fn, type: 'text', args }
  }
  if (REMAKERS.has(fn) && first !== undefined && isArray(first)) return remakerCall(fn, args)
  if (!READERS.has(fn) || first === undefined || !isArray(first)) {
    if (REMAKERS.has(fn)) throw new HogqlMathError(`${fn}() takes an array first here, as in ${fn}(splitByChar('/', properties.$pathname)).`)
    if (fn === 'arrayElement') throw new HogqlMathError(`arr[i] and arrayElement() index an array here (a literal, splitByChar, splitByString or a group's groupArray), as in splitByChar('/', properties.$pathname)[2].`)
    throw new HogqlMathError(READERS.has(fn) ? `${fn}() takes an array first here, as in has(['a', 'b'], event).` : `${fn}() takes no array here: arrays are read by ${READ_BY}.`)
  }
  if (PAIRS.has(fn)) return pairCall(fn, first, second)
  if (args.slice(1).some(isArray)) throw new HogqlMathError(`${fn}() takes one array, its first argument.`)
  if (fn === 'arrayElement') {
    const index = integerLiteral(second, [-MAX_INDEX, MAX_INDEX], `An array's index is an integer literal from -${MAX_INDEX} to ${MAX_INDEX} here (1 the first item, -1 the last), as in splitByChar('/', properties.$pathname)[2].`)
    if ((index as { value: number }).value === 0) throw new HogqlMathError("An array's index counts from 1 (or from -1, the last item): ClickHouse refuses 0.")
    return { op: 'call', fn, type: first.type, args: [first, index] }
  }
  if (fn === 'has' || fn === 'indexOf' || fn === 'countEqual') {
    if (second.type !== 'null' && second.type !== first.type) throw new HogqlMathError(`${fn}() looks for a value of its items' type: ${first.type === 'text' ? 'texts' : 'numbers'} here, given a ${second.type} (toString() or toFloat() converts).`)
    if (!(first.op === 'call' && nullableItems(first))) return { op: 'call', fn, type: 'number', args }
    if (fn === 'countEqual') throw new HogqlMathError(`countEqual() counts in an array without Nullable items here (a split, a literal of literals, a group's array): 18.16 counts NULL as its type's default.`)
    if (REMAKERS.has(first.fn)) throw new HogqlMathError(`${fn}() does not search ${first.fn}() of Nullable items here (a literal whose items are not all literals): search the literal itself.`)
    return searchOfItems(fn, first.args, second)
  }
  if (fn === 'arraySum' && (first.type !== 'number' || nullableItems(first))) throw new HogqlMathError(SUMS)
  if (fn === 'arrayStringConcat') {
    if (first.type !== 'text' || nullableItems(first)) throw new HogqlMathError("arrayStringConcat() joins texts none of which is NULL here (18.16 takes no Nullable items): a split, a literal of text literals, or arrayMap's of a lambda never NULL (ifNull(…, '') makes one so).")
    if (second !== undefined && textLiteral(second) === null) throw new HogqlMathError('arrayStringConcat() takes its separator as a text literal.')
    return { op: 'call', fn, type: 'text', args }
  }
  return { op: 'call', fn, type: 'number', args }
}

/**
 * arraySort, arrayReverseSort, arrayReverse, arrayDistinct or arraySlice(arr, offset[, length]). A slice counts from its first item
 * here: ClickHouse's offsets from the end, 0 and lengths below 0 have given other slices from version to version
 * (GatherUtils' getSliceFromRight clamped past the start only later).
 */
function remakerCall(fn: HogqlFunction, args: HogqlNode[]): HogqlNode {
  const [first, ...rest] = args
  if (rest.some(isArray)) throw new HogqlMathError(`${fn}() takes one array, its first argument.`)
  if (fn !== 'arraySlice') return { op: 'call', fn, type: first.type, args }
  const why = 'arraySlice() takes an offset from 1 (the first item) and a length from 0 as integer literals here, as in arraySlice(splitByChar(\'/\', properties.$pathname), 2, 3).'
  const [offset, length] = rest.map((n, i) => integerLiteral(n, [i === 0 ? 1 : 0, MAX_INDEX], why))
  return { op: 'call', fn, type: first.type, args: [first, offset, ...(length === undefined ? [] : [length])] }
}

/** hasAny or hasAll of two arrays of one type, neither with Nullable items (18.16 finds NULL as its type's default). */
function pairCall(fn: HogqlFunction, first: ArrayNode, second: HogqlNode | undefined): HogqlNode {
  if (second === undefined || !isArray(second)) throw new HogqlMathError(`${fn}() takes two arrays here, as in ${fn}(splitByChar(',', properties.tags), ['a', 'b']).`)
  if (second.type !== first.type) throw new HogqlMathError(`${fn}() takes two arrays of one type: ClickHouse has no common type of String and a number.`)
  if (nullableItems(first) || nullableItems(second)) throw new HogqlMathError(`${fn}() reads arrays without Nullable items here (splits, literals of literals, a group's array): 18.16 finds NULL as its type's default.`)
  return { op: 'call', fn, type: 'number', args: [first, second] }
}

/** The variable of `fn`'s lambda of `names` over `arrays` (its item's type), read before its body (hogql-parse.ts). */
export function lambdaItem(fn: string, names: readonly string[], arrays: readonly HogqlNode[]): HogqlNode {
  if (names.length !== 1 || arrays.length !== 1) throw new HogqlMathError(`${fn}() takes a lambda of one variable and one array here, as in ${fn}(x -> x != '', splitByChar('/', properties.$pathname)).`)
  const [arr] = arrays
  if (!isArray(arr)) throw new HogqlMathError(`${fn}() takes an array after its lambda here (a literal, a split, a group's array or a remade one), as in ${fn}(x -> x != '', splitByChar('/', properties.$pathname)).`)
  return { op: 'scalar', type: arr.type, value: null, item: { name: names[0], nullable: nullableItems(arr) } }
}

/** What arraySum reads: ClickHouse's adds no Nullable items, and 18.16's no texts. */
const SUMS = "arraySum() adds numbers none of which is NULL here (ClickHouse's takes no Nullable items): an array of numbers, or arraySum(x -> ifNull(toFloat(x), 0), arr)."

/** `fn(item -> body, arr)` (LAMBDA_FUNCTIONS): arrayMap's type is its body's, arrayFirst's and arrayLast's their items', the others' a number. */
export function lambdaCall(fn: HogqlFunction, arr: HogqlNode, item: HogqlNode, body: HogqlNode): HogqlNode {
  if (isArray(body)) throw new HogqlMathError('Arrays of arrays are not read here.')
  // As groupArray's: ClickHouse's array of dates and times would be written as texts of their type.
  if (isDatetime(body)) throw new HogqlMathError(`${fn}()'s lambda gives numbers or texts here, not dates and times: formatDateTime() writes them as texts, toUnixTimestamp() as numbers.`)
  const args = [arr, item, body]
  if (fn === 'arrayMap') {
    if (body.type === 'null') throw new HogqlMathError("arrayMap()'s lambda gives NULL only here: ClickHouse types an array of it Array(Nullable(Nothing)).")
    return { op: 'call', fn, type: body.type, args }
  }
  if (fn === 'arraySum' && (body.type !== 'number' || !neverNull(body))) throw new HogqlMathError(SUMS)
  // ClickHouse takes a number (UInt8) of the lambda, and refuses a String.
  if (body.type === 'text') throw new HogqlMathError(`${fn}()'s lambda is a condition, not a text: compare it (x != '') or convert it (toFloat()).`)
  return { op: 'call', fn, type: fn === 'arrayFilter' || fn === 'arrayFirst' || fn === 'arrayLast' ? arr.type : 'number', args }
}

/**
 * has() or indexOf() over a literal with Nullable items, as the items' NULL-safe `=`s (an `or`, or ifs from the first):
 * what current servers answer, NULL finding a NULL item; 18.16's has finds a NULL item as its type's default instead.
 */
function searchOfItems(fn: 'has' | 'indexOf', items: readonly HogqlNode[], x: HogqlNode): HogqlNode {
  const tooLong = `${fn}() over a literal whose items are not all literals takes ${fn === 'has' ? 'fewer items (or a smaller value) here' : `at most ${MAX_NESTED} items here`}.`
  if (fn === 'has') return equalsAny(x, items, tooLong)
  // Its ifs nest one a level deeper each.
  if (items.length > MAX_NESTED) throw new HogqlMathError(tooLong)
  return items.reduceRight((otherwise, item, k) => ({ op: 'call', fn: 'if', type: 'number', args: [{ op: '=', type: 'number', args: [x, item] }, numberNode(k + 1), otherwise] }), numberNode(0))
}

/** Refuses an array anywhere but as the first argument of a function of arrays (`reader`: the node is one). */
export function refuseLooseArrays(node: HogqlNode, reader = false): void {
  if (isArray(node) && !reader) throw new HogqlMathError(`An array is read here only by the functions of arrays: ${READ_BY}; not as a value of its own.`)
  if (!('args' in node)) return
  const reads = node.op === 'call' && takesArray(node)
  node.args.forEach((arg, i) => refuseLooseArrays(arg, reads && (i === 0 || (i === 1 && PAIRS.has((node as Call).fn)))))
}

function items(arr: ArrayNode, value: (n: HogqlNode) => HogqlValue): HogqlValue[] {
  // A group's array is the column's value as the run gives it (hogql-query-run.ts).
  if (arr.op === 'field') return value(arr) as unknown as HogqlValue[]
  // A copy: a group's array is its column's value too.
  if (REMAKERS.has(arr.fn)) return remade(arr, [...items(arr.args[0] as ArrayNode, value)], value)
  if (arr.fn === 'array') return arr.args.map(value)
  const text = value(arr.args[1])
  return ((text ?? '') as string).split((arr.args[0] as { value: string }).value)
}

/** A lambda's body (LAMBDA_FUNCTIONS) of one item, its variable given the item. */
function each(call: Call, value: (n: HogqlNode) => HogqlValue): (item: HogqlValue) => HogqlValue {
  const variables = variablesOf(call)
  return (item) => {
    for (const v of variables) v.value = item
    return value(call.args[2])
  }
}

/**
 * A lambda's variable nodes in its body: one node, or its copies where the tree was read back from JSON (sqlite-filters.ts's
 * skylark_hogql), found by name as the parser bound them (an inner lambda's of the name hides it).
 */
function variablesOf(call: Call): Array<{ value: HogqlValue }> {
  const known = VARIABLES.get(call)
  if (known !== undefined) return known
  const name = itemName(call.args[1])
  const find = (n: HogqlNode): HogqlNode[] => {
    if (n.op === 'scalar') return n.item?.name === name ? [n] : []
    if (!('args' in n)) return []
    return isLambdaCall(n) && itemName(n.args[1]!) === name ? find(n.args[0]) : n.args.flatMap(find)
  }
  // Each node once: where the tree is as parsed, every reading is the variable's own node, given each item once.
  const found = [...new Set([call.args[1], ...find(call.args[2])])] as Array<{ value: HogqlValue }>
  VARIABLES.set(call, found)
  return found
}
const VARIABLES = new WeakMap<HogqlNode, Array<{ value: HogqlValue }>>()
/** Whether a lambda's condition holds of an item, as ClickHouse reads its Nullable(UInt8): neither NULL nor 0. */
const holds = (v: HogqlValue): boolean => v !== null && v !== 0
/** The item arr[i] out of range gives, and arrayFirst of none: the items' default, NULL where they are Nullable. */
const missing = (arr: ArrayNode): HogqlValue => (nullableItems(arr) ? null : arr.type === 'number' ? 0 : '')

/** A remade array's items from its array's: sorted (stably: ClickHouse leaves equal ones in no fixed order), reversed, distinct, sliced, mapped or filtered. */
function remade(arr: Call, all: HogqlValue[], value: (n: HogqlNode) => HogqlValue): HogqlValue[] {
  if (arr.fn === 'arrayMap') return all.map(each(arr, value))
  if (arr.fn === 'arrayFilter') {
    const body = each(arr, value)
    return all.filter((v) => holds(body(v)))
  }
  if (arr.fn === 'arrayReverse') return all.reverse()
  // ClickHouse's skips NULL and keeps the first of each: -0 is 0 (its hash set's zero cell), NaN one value.
  if (arr.fn === 'arrayDistinct') return distinctValues(all)
  if (arr.fn === 'arraySlice') {
    const [offset, length] = arr.args.slice(1).map((n) => (n as { value: number }).value)
    return all.slice(offset - 1, length === undefined ? undefined : offset - 1 + length)
  }
  // NaN after the numbers and NULL after all, whichever way the numbers go, as NULLS LAST orders them.
  return all.sort((a, b) => compareValues(a, b, arr.fn === 'arrayReverseSort'))
}

/** A reader's value (readsArray), the items evaluated by `value`, as ClickHouse computes it. */
export function arrayValue(node: Call, value: (n: HogqlNode) => HogqlValue): HogqlValue {
  const arr = node.args[0] as ArrayNode
  const all = items(arr, value)
  switch (node.fn) {
    case 'arrayElement': {
      const i = (node.args[1] as { value: number }).value
      const k = i > 0 ? i - 1 : all.length + i
      return k >= 0 && k < all.length ? all[k] : missing(arr)
    }
    case 'arraySum':
      // In order, as 18.16's arraySum adds them (current servers' vectorised sums may differ in the last bits).
      return (node.args.length === 3 ? all.map(each(node, value)) : all).reduce((sum: number, v) => sum + (v as number), 0)
    case 'arrayExists':
    case 'arrayAll':
    case 'arrayCount':
    case 'arrayFirst':
    case 'arrayLast': {
      const body = each(node, value)
      const held = all.map((v) => holds(body(v)))
      if (node.fn === 'arrayCount') return held.filter(Boolean).length
      if (node.fn === 'arrayExists') return held.includes(true) ? 1 : 0
      if (node.fn === 'arrayAll') return held.includes(false) ? 0 : 1
      const k = node.fn === 'arrayFirst' ? held.indexOf(true) : held.lastIndexOf(true)
      return k >= 0 ? all[k] : missing(arr)
    }
    case 'has':
    case 'indexOf': {
      const k = all.indexOf(value(node.args[1]))
      return node.fn === 'has' ? (k >= 0 ? 1 : 0) : k + 1
    }
    case 'countEqual': {
      const x = value(node.args[1])
      return all.filter((v) => v === x).length
    }
    case 'hasAny':
    case 'hasAll': {
      // Items are equal as ClickHouse's == tells them: NaN is none's, -0 is 0's.
      const wanted = items(node.args[1] as ArrayNode, value)
      const found = (v: HogqlValue) => all.indexOf(v) >= 0
      return (node.fn === 'hasAny' ? wanted.some(found) : wanted.every(found)) ? 1 : 0
    }
    case 'arrayStringConcat':
      return joinedText(all.join(textLiteral(node.args[1]) ?? ''))
    case 'length':
      return all.length
    default:
      return (all.length === 0) === (node.fn === 'empty') ? 1 : 0
  }
}

/** An array's SQL: a literal's Nullable items each toNullable, so ClickHouse types it as the evaluation reads it. */
function arraySql(arr: ArrayNode, sql: ValueSql): string {
  if (arr.op === 'field') return sql.compile(arr)
  if (REMAKERS.has(arr.fn)) return remadeSql(arr, arraySql(arr.args[0] as ArrayNode, sql), sql)
  if (arr.fn !== 'array') return `${arr.fn}(${hogqlTextSql((arr.args[0] as { value: string }).value)}, ifNull(${sql.text(arr.args[1])}, ''))`
  // A number as Float64 whatever its SQL's type (an aggregation's count() is UInt64, which has no common type with it).
  const item = (n: HogqlNode) => (arr.type === 'text' ? sql.text(n) : n.type === 'null' ? sql.number(n) : `toFloat64(${sql.number(n)})`)
  return `[${arr.args.map((n) => (nullableItems(arr) ? `toNullable(${item(n)})` : item(n))).join(', ')}]`
}

/**
 * A remade array's SQL. Numbers sort by a key of their rank (NULL last, NaN before it), the value (negated for
 * arrayReverseSort) and their place, so that equal ones (-0 and 0) keep their order as the Node engine's stable sort
 * keeps them; equal texts are alike.
 */
function remadeSql(arr: Call, array: string, sql: ValueSql): string {
  if (arr.fn === 'arrayFilter') return `arrayFilter(${conditionSql(arr, sql)}, ${array})`
  if (arr.fn === 'arrayMap') {
    const body = arr.args[2]
    // Of one type whatever the body's SQL gives: its items Nullable, or not where the body is never NULL (nullableItems).
    return `arrayMap(${sql.lambda(arr.args[1], () => `${neverNull(body) ? 'assumeNotNull' : 'toNullable'}(${arr.type === 'number' ? sql.number(body) : sql.text(body)})`)}, ${array})`
  }
  const s = sql.fresh()
  const [x, i] = [`${s}x`, `${s}i`]
  if (arr.fn === 'arrayReverse') return `arrayReverse(${array})`
  if (arr.fn === 'arrayDistinct') return distinctSql(array, arr.type !== 'text', s)
  if (arr.fn === 'arraySlice') {
    // Filtered by place: 18.16's arraySlice of Nullable items loses their NULLs (an item past the end read '' for NULL).
    const [offset, length] = arr.args.slice(1).map((n) => (n as { value: number }).value)
    return lambdaSql([s], [array], `arrayFilter((${x}, ${i}) -> ${i} >= ${offset}${length === undefined ? '' : ` AND ${i} < ${offset + length}`}, ${s}, arrayEnumerate(${s}))`)
  }
  if (arr.type === 'text') return `${arr.fn}(${array})`
  return lambdaSql([s], [array], `arraySort((${x}, ${i}) -> (multiIf(isNull(${x}), 2, isNaN(${x}), 1, 0), ${arr.fn === 'arrayReverseSort' ? '-' : ''}${x}, ${i}), ${s}, arrayEnumerate(${s}))`)
}

/** A lambda's condition (LAMBDA_FUNCTIONS), as ClickHouse's functions of them take it: UInt8, 0 for NULL. */
const conditionSql = (call: Call, sql: ValueSql): string => sql.lambda(call.args[1], () => `ifNull(${sql.number(call.args[2])} != 0, 0)`)

/** A lambda's variable's name (its node's `item`). */
export const itemName = (variable: HogqlNode): string => (variable as { item: { name: string } }).item.name

/** A reader's SQL (readsArray), a number as Float64. */
export function arrayCallSql(node: Call, sql: ValueSql): string {
  const arr = node.args[0] as ArrayNode
  const array = arraySql(arr, sql)
  const [, second] = node.args
  if (node.fn === 'arrayElement') return `arrayElement(${array}, ${(second as { value: number }).value})`
  if (node.fn === 'arrayStringConcat') return `arrayStringConcat(${array}, ${hogqlTextSql(textLiteral(second) ?? '')})`
  if (node.fn === 'arraySum' && isLambdaCall(node)) return `toFloat64(arraySum(${sql.lambda(node.args[1], () => `assumeNotNull(${sql.number(node.args[2])})`)}, ${array}))`
  if (isLambdaCall(node)) {
    const condition = conditionSql(node, sql)
    if (node.fn !== 'arrayFirst' && node.fn !== 'arrayLast') return `toFloat64(${node.fn}(${condition}, ${array}))`
    // arrayLast is arrayFirst of the array reversed: 18.16 has no arrayLast.
    return `arrayFirst(${condition}, ${node.fn === 'arrayLast' ? `arrayReverse(${array})` : array})`
  }
  if (PAIRS.has(node.fn)) return `toFloat64(${node.fn}(${array}, ${arraySql(second as ArrayNode, sql)}))`
  if (node.fn !== 'has' && node.fn !== 'indexOf' && node.fn !== 'countEqual') return `toFloat64(${node.fn}(${array}))`
  // Written twice rather than named, as clickhouse-hogql.ts's IN lists: 18.16 finds NULL as its type's default.
  // (Over Nullable items they are `=`s instead: searchOfItems.)
  const x = () => (arr.type === 'number' ? sql.number(second) : sql.text(second))
  return second.type === 'null' ? 'toFloat64(0)' : `if(isNull(${x()}), toFloat64(0), toFloat64(${node.fn}(${array}, assumeNotNull(${x()}))))`
}
