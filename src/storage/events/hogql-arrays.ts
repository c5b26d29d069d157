/**
 * HogQL's arrays (in queries, filters and math), as values the functions of arrays read: literals (`['a', 'b']`,
 * `array(…)`) and splitByChar and splitByString of a text, and over a query's groups a group's array (groupArray's, topK's, quantiles' …: a field node
 * with `array`, hogql-query-columns.ts's arrayColumn, whose value the run gives), and arraySort, arrayReverseSort,
 * arrayReverse, arrayDistinct and arraySlice of any of them, read by `arr[i]` (arrayElement), has, indexOf, countEqual, hasAny and
 * hasAll (of two), length, empty, notEmpty and arrayStringConcat. An array is never a value of its own here (a column, an operand, another function's argument:
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
import { compareValues, distinctValues, hogqlTextSql, joinedText } from './hogql-values.js'
import { distinctSql, lambdaSql } from './clickhouse-hogql-calls.js'

const MAKERS: ReadonlySet<string> = new Set(['array', 'splitByChar', 'splitByString'])
/** The functions of an array whose value is an array (its items sorted, reversed, sliced or distinct), read as arrays are. */
const REMAKERS: ReadonlySet<string> = new Set(['arraySort', 'arrayReverseSort', 'arrayReverse', 'arraySlice', 'arrayDistinct'])
/** The functions of an array, which they read as their first argument. */
const READERS: ReadonlySet<string> = new Set(['arrayElement', 'has', 'indexOf', 'countEqual', 'hasAny', 'hasAll', 'length', 'empty', 'notEmpty', 'arrayStringConcat'])
/** The readers of two arrays: whether the first holds any, or all, of the second's items. */
const PAIRS: ReadonlySet<string> = new Set(['hasAny', 'hasAll'])
/** The functions that take only arrays first (length, empty and notEmpty take texts too). */
export const ARRAY_FUNCTIONS: ReadonlySet<string> = new Set([...MAKERS, ...REMAKERS, ...PAIRS, 'arrayElement', 'has', 'indexOf', 'countEqual', 'arrayStringConcat'])
const READ_BY = "arr[i] (arrayElement), has, indexOf, countEqual, hasAny, hasAll, length, empty, notEmpty and arrayStringConcat (of an array, or of arraySort, arrayReverseSort, arrayReverse, arrayDistinct or arraySlice of one), as in splitByChar('/', properties.$pathname)[2]"
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
}

export const isArray = (node: HogqlNode): node is ArrayNode => (node.op === 'call' && (MAKERS.has(node.fn) || REMAKERS.has(node.fn))) || (node.op === 'field' && node.array === true)
/** Whether a call reads an array (its value is computed here). */
export const readsArray = (node: Call): boolean => READERS.has(node.fn) && node.args[0] !== undefined && isArray(node.args[0])
/** The array a call takes as its first argument: a reader's, or a function's that remakes it. */
const takesArray = (node: Call): boolean => readsArray(node) || (REMAKERS.has(node.fn) && isArray(node.args[0]))

const literalItem = (n: HogqlNode): boolean => n.op === 'number' || n.op === 'text' || (n.op === 'negate' && n.args[0].op === 'number')
/** Whether an array's items are Nullable to ClickHouse: a literal's that are not all literals (a split's never are), and a remade one's. */
const nullableItems = (arr: ArrayNode): boolean => arr.op === 'call' && (REMAKERS.has(arr.fn) ? nullableItems(arr.args[0] as ArrayNode) : arr.fn === 'array' && !arr.args.every(literalItem))
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
  if (fn === 'arrayStringConcat') {
    if (first.type !== 'text' || nullableItems(first)) throw new HogqlMathError('arrayStringConcat() joins texts none of which is NULL here (18.16 takes no Nullable items): a split, or a literal of text literals.')
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
  if (REMAKERS.has(arr.fn)) return remade(arr, [...items(arr.args[0] as ArrayNode, value)])
  if (arr.fn === 'array') return arr.args.map(value)
  const text = value(arr.args[1])
  return ((text ?? '') as string).split((arr.args[0] as { value: string }).value)
}

/** A remade array's items from its array's: sorted (stably: ClickHouse leaves equal ones in no fixed order), reversed, distinct or sliced. */
function remade(arr: Call, all: HogqlValue[]): HogqlValue[] {
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
      if (k >= 0 && k < all.length) return all[k]
      return nullableItems(arr) ? null : arr.type === 'number' ? 0 : ''
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
  if (REMAKERS.has(arr.fn)) return remadeSql(arr, arraySql(arr.args[0] as ArrayNode, sql), sql.fresh())
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
function remadeSql(arr: Call, array: string, s: string): string {
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

/** A reader's SQL (readsArray), a number as Float64. */
export function arrayCallSql(node: Call, sql: ValueSql): string {
  const arr = node.args[0] as ArrayNode
  const array = arraySql(arr, sql)
  const [, second] = node.args
  if (node.fn === 'arrayElement') return `arrayElement(${array}, ${(second as { value: number }).value})`
  if (node.fn === 'arrayStringConcat') return `arrayStringConcat(${array}, ${hogqlTextSql(textLiteral(second) ?? '')})`
  if (PAIRS.has(node.fn)) return `toFloat64(${node.fn}(${array}, ${arraySql(second as ArrayNode, sql)}))`
  if (node.fn !== 'has' && node.fn !== 'indexOf' && node.fn !== 'countEqual') return `toFloat64(${node.fn}(${array}))`
  // Written twice rather than named, as clickhouse-hogql.ts's IN lists: 18.16 finds NULL as its type's default.
  // (Over Nullable items they are `=`s instead: searchOfItems.)
  const x = () => (arr.type === 'number' ? sql.number(second) : sql.text(second))
  return second.type === 'null' ? 'toFloat64(0)' : `if(isNull(${x()}), toFloat64(0), toFloat64(${node.fn}(${array}, assumeNotNull(${x()}))))`
}
