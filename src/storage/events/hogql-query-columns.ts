/**
 * A HogQL query's columns (hogql-query.ts): each one's type and name, the hidden columns HAVING and ORDER BY read,
 * and the expressions over the groups (HAVING's condition, `sum(x) / count()`, `lower(event)` … GROUP BY event), which
 * read the groups' columns as `col_<i>` fields and are computed once those are.
 */
import { hogqlFields, hogqlProperties, isColumnRef, type HogqlMath, type HogqlNode } from './hogql-math.js'
import { checkDatetimes } from './hogql-datetime.js'
import { isDate, isDatetime, markDate, markDatetime, markZone, zoneOf } from './hogql-time-marks.js'
import type { QueryClock } from './hogql-clock.js'
import { AGGREGATIONS, givesArray, itemType, mathOf, OTHER_AGGREGATIONS, picksOne } from './hogql-functions.js'
import { parseQueryExpression } from './hogql-read.js'
import type { QueryScope } from './hogql-parse.js'
import { closingAt, HogqlMathError, isPunct, isWord, type Token } from './hogql-tokens.js'

export interface QueryColumn {
  name: string
  expr: HogqlNode
  /** Its aggregation, when the column is one. */
  math: HogqlMath | null
  /** A date and time or a date (ms in the stores), written as PostHog writes one. */
  time: 'datetime' | 'date' | null
  /** A date and time's zone where it is not the project's (toTimeZone's): its type's, and the one it is written in. */
  zone?: string
  /** ClickHouse's type of the column, as PostHog names it in `types`. */
  type: string
}

/** What an expression over the groups reads: the columns so far, the GROUP BY expressions, the columns' aliases. */
export interface GroupScope {
  clock: QueryClock
  columns: QueryColumn[]
  groupBy: readonly HogqlNode[]
  aliases: ReadonlySet<string>
}

export const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b)

/** ClickHouse's types of PostHog's columns that are no String. */
const FIELD_TYPES: Readonly<Record<string, string>> = { uuid: 'UUID', person_id: 'UUID', id: 'UUID', is_identified: 'Int8', index: 'UInt8' }

function typeOf(expr: HogqlNode, math: HogqlMath | null, time: QueryColumn['time'], zone: string): string {
  if (time === 'date') return 'Date'
  if (time === 'datetime') return `DateTime64(6, '${zoneOf(expr, zone)}')`
  if (givesArray(math)) return itemType(math!) === 'text' && expr.type === 'text' ? 'Array(String)' : 'Array(Float64)'
  if (math && !picksOne(math)) return math.aggregation === 'count' || math.aggregation === 'uniq' ? 'UInt64' : 'Nullable(Float64)'
  // A field, or one of the event's person or group (hogql-lookups.ts), is of its table's type.
  const field = expr.op === 'field' || expr.op === 'lookup' ? expr.field : undefined
  if (field !== undefined) return FIELD_TYPES[field] ?? 'String'
  return expr.type === 'number' ? 'Nullable(Float64)' : 'Nullable(String)'
}

/** The whole-expression parse of one part, refusing a lone date and time's interval and checking dates and times. */
export function expression(tokens: Token[], clock: QueryClock, aggregations: boolean, scope: QueryScope | null = null): { math: HogqlMath | null; expr: HogqlNode } {
  const parsed = parseQueryExpression(tokens, clock, aggregations, scope)
  checkDatetimes(parsed.expr, parsed.math, clock)
  return parsed
}

/** A column from its parsed parts, named `name`. */
export function columnOf(name: string, expr: HogqlNode, math: HogqlMath | null, zone: string): QueryColumn {
  const time = isDatetime(expr) && (math === null || picksOne(math) || ['min', 'max'].includes(math.aggregation)) ? (isDate(expr) ? 'date' : 'datetime') : null
  const own = time === 'datetime' ? zoneOf(expr, zone) : zone
  return { name, expr, math, time, type: typeOf(expr, math, time, zone), ...(own === zone ? {} : { zone: own }) }
}

/** The names in the tokens not after a dot (`properties.count` is a key), and whether each is called. */
function names(tokens: Token[]): Array<{ name: string; called: boolean }> {
  const found: Array<{ name: string; called: boolean }> = []
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]
    // A subquery's (`x IN (SELECT …)`) are its own.
    if (isPunct(t, '(') && (isWord(tokens[i + 1], 'select') || isWord(tokens[i + 1], 'with'))) i = Math.max(i, closingAt(tokens, i))
    else if (t.kind === 'name' && !t.quoted && !isPunct(tokens[i - 1], '.')) found.push({ name: t.value, called: isPunct(tokens[i + 1], '(') })
  }
  return found
}

/** Whether the tokens call an aggregation (`sum(x) / count()`). */
export function callsAggregation(tokens: Token[]): boolean {
  return names(tokens).some(({ name, called }) => called && (AGGREGATIONS.has(name.toLowerCase()) || OTHER_AGGREGATIONS.test(name)))
}

/** Whether the tokens read one of `aliases`. */
export function readsAlias(tokens: Token[], aliases: ReadonlySet<string>): boolean {
  return names(tokens).some(({ name, called }) => !called && aliases.has(name))
}

/**
 * A part that is one expression of each event or one aggregation as a whole (`count()`), parsed; or, where it
 * calls aggregations within an expression (`sum(x) / count()`) or reads another column's alias, null: it is read
 * once the columns and groups are known.
 */
export function wholeOrLater(tokens: Token[], clock: QueryClock, aliases: ReadonlySet<string>): { math: HogqlMath | null; expr: HogqlNode } | null {
  try {
    return expression(tokens, clock, true)
  } catch (e) {
    if (e instanceof HogqlMathError && (callsAggregation(tokens) || readsAlias(tokens, aliases))) return null
    throw e
  }
}

/** The column of this aggregation (`math` null: of this expression), added after the others, hidden, when none is. */
export function columnAt(columns: QueryColumn[], math: HogqlMath | null, expr: HogqlNode, zone: string): number {
  const at = columns.findIndex((c) => same(c.math, math) && same(c.expr, expr))
  return at >= 0 ? at : columns.push(columnOf(`col_${columns.length}`, expr, math, zone)) - 1
}

/**
 * Column `at` as HAVING reads it (`col`: a group's value), or as a query of this one as its subquery reads it (`sub`:
 * a row's value); a date and time where the column is one.
 */
export function columnRef(columns: readonly QueryColumn[], at: number, prefix: 'col' | 'sub' = 'col'): HogqlNode {
  const c = columns[at]
  if (givesArray(c.math)) throw arrayRead(c)
  const node: HogqlNode = { op: 'field', type: c.math && !picksOne(c.math) ? 'number' : c.expr.type, field: `${prefix}_${at}` }
  if (c.zone !== undefined) markZone(node, c.zone)
  else if (c.time !== null) markDatetime(node)
  return c.time === 'date' ? markDate(node) : node
}

/**
 * A group's column `at` whose value is an array (groupArray's), as the functions of arrays read it over the groups
 * (`length(groupArray(x))`, hogql-arrays.ts): anywhere else the parser refuses it as any array (refuseLooseArrays).
 */
const arrayColumn = (columns: readonly QueryColumn[], at: number): HogqlNode => ({ op: 'field', type: itemType(columns[at].math!), field: `col_${at}`, array: true })

/** The refusal of reading an array (groupArray's) whole but as a column of the answer (a function of arrays reads arrayColumn). */
export const arrayRead = (c: QueryColumn): HogqlMathError =>
  new HogqlMathError(`${c.name}: the array ${c.math!.aggregation}() gives is read here as a column of the answer, or by the functions of arrays over the groups (length(${c.math!.aggregation}(x)), has, arr[i] …), not by ORDER BY, LIMIT BY, a query of its query, IN or a join.`)

/** The column an alias names (an explicit one: `AS name`), or -1. */
const aliasAt = (columns: readonly QueryColumn[], aliases: ReadonlySet<string>, name: string) => (aliases.has(name) ? columns.findIndex((c) => c.name === name) : -1)

/** A column over the groups not read yet (parseHogqlQuery reads them after GROUP BY). */
export const LATER: HogqlNode = { op: 'null', type: 'null' }

/** Whether a column is computed from the group's other columns (`sum(x) / count()`), after them. */
export const ofGroup = (c: QueryColumn): boolean => c.math === null && hogqlFields(c.expr).some(isColumnRef)

/**
 * An expression over the groups (HAVING's condition, a column's `sum(x) / count()`): aliases, aggregations and GROUP
 * BY expressions read as columns (those not selected added to `columns`, hidden); `refusal` where anything else
 * reads events. Without it (a query that does not group) an alias reads its column's expression, as ClickHouse's do.
 */
export function overGroups(tokens: Token[], { clock, columns, groupBy, aliases }: GroupScope, refusal: string | null): HogqlNode {
  const find = (math: HogqlMath | null, expr: HogqlNode) => {
    const at = columnAt(columns, math, expr, clock.zone)
    return givesArray(math) ? arrayColumn(columns, at) : columnRef(columns, at)
  }
  const scope: QueryScope = {
    alias: (name) => {
      const at = aliasAt(columns, aliases, name)
      if (at < 0) return null
      const c = columns[at]
      if (c.expr === LATER) throw new HogqlMathError(`${name} is read before it is written: a column over the groups reads those before it.`)
      // The stores compute columns over the groups after the others, so one reads another's expression: the node
      // itself, keyed and checked already, with its marks (a date and time's).
      return ofGroup(c) || refusal === null ? c.expr : givesArray(c.math) ? arrayColumn(columns, at) : columnRef(columns, at)
    },
    aggregate: (call) => {
      const math = mathOf(call)
      checkDatetimes(math.expr, math, clock)
      return find(math, math.expr)
    },
  }
  const parsed = parseQueryExpression(tokens, clock, false, scope).expr
  checkDatetimes(parsed, null, clock)
  const keyed = (node: HogqlNode): HogqlNode => {
    if (groupBy.some((g) => same(g, node))) return find(null, node)
    if ('args' in node) node.args.forEach((arg, i) => ((node.args as HogqlNode[])[i] = keyed(arg)))
    return node
  }
  const read = keyed(parsed)
  if (refusal !== null && readsEvents(read)) throw new HogqlMathError(refusal)
  return read
}

/** WHERE's reading of the columns' aliases: each its column's expression of the event, as ClickHouse substitutes it. */
export function whereScope(columns: readonly QueryColumn[], aliases: ReadonlySet<string>): QueryScope {
  return {
    alias: (name) => {
      const at = aliasAt(columns, aliases, name)
      if (at < 0) return null
      const c = columns[at]
      if (c.math !== null || c.expr === LATER) throw new HogqlMathError(`WHERE reads ${name}, an aggregation or a column computed from others: write its expression, or filter groups with HAVING.`)
      return c.expr
    },
    aggregate: (call) => {
      throw new HogqlMathError(`The aggregation ${call.name}() is not read in WHERE, which filters events: filter groups with HAVING.`)
    },
  }
}

export function having(tokens: Token[], scope: GroupScope): HogqlNode {
  const condition = overGroups(tokens, scope, 'HAVING reads each group: its aggregations, its columns by alias, and its GROUP BY expressions; aggregate anything else.')
  if (condition.type === 'text') throw new HogqlMathError("HAVING takes a condition, not a text: compare it, as in count() > 10.")
  return condition
}

/**
 * A GROUP BY or ORDER BY part naming a column by its alias, or by its position among the `shown` ones (`GROUP BY 1
 * ORDER BY 2 DESC`: ClickHouse reads a whole number there so, as PostHog's servers set enable_positional_arguments).
 */
export function aliased(tokens: Token[], columns: readonly QueryColumn[], shown: number): number | null {
  if (tokens.length === 1 && tokens[0].kind === 'number') {
    const n = tokens[0].value
    if (!Number.isInteger(n) || n < 1 || n > shown) throw new HogqlMathError(`Position ${tokens[0].value} names no column: the query has ${shown}, from 1.`)
    return n - 1
  }
  if (tokens.length !== 1 || tokens[0].kind !== 'name') return null
  const at = columns.findIndex((c) => c.name === tokens[0].value)
  return at < 0 ? null : at
}

/** Whether the value differs between events: a column that doesn't is the same for every group. */
export function readsEvents(node: HogqlNode): boolean {
  return hasField(node) || hogqlProperties(node).length > 0
}

function hasField(node: HogqlNode): boolean {
  return (node.op === 'field' && !isColumnRef(node.field)) || ('args' in node && node.args.some(hasField))
}

