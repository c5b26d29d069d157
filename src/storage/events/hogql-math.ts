/**
 * An experiment source's `math: 'hogql'` (`math_hogql`), the part of HogQL skylark computes: PostHog's
 * `extract_aggregation_and_inner_expr` splits the text into an aggregation (`sum`, `avg`, `min`, `max`, `any`, `count`,
 * `countIf`, `sumIf`/`avgIf`/`minIf`/`maxIf`, `uniq`/`uniqExact`/`count(distinct …)`, `median`, `quantile(level)`;
 * none: sum) and the expression inside it, evaluated on each event; each entity's value is then
 * `coalesce(agg(toFloat(expr)), 0)` (`count(expr)` counts the events whose value is not null, `countIf(c)` is
 * `count(if(c, 1, null))` and `sumIf(x, c)` `sum(if(c, x, null))`, uniq counts the distinct values that are not null,
 * exactly, `any` takes the earliest event's value, the least of its millisecond's: ClickHouse promises no order).
 *
 * The expression: numbers, 'strings', true/false/null, `properties.<key>` (also `properties.$key`,
 * properties.`any key`, properties."any key", properties['any key']) and paths within objects (`properties.a.b`, at most 4
 * keys: PostHog's JSONExtractRaw(properties, 'a', 'b'); a text or an array holds no keys), the person's
 * `person.properties.<key>` likewise (its properties now, as PostHog's `person_id_override_properties_joined` mode
 * reads them: docs/architecture.md, "HogQL math and filters"), the event's `event` and
 * `distinct_id` (texts, HogqlField), + - * /, unary minus, comparisons
 * (= == != <> < <= > >=), [not] like / ilike (texts only), [not] in (a list, read as `=`s joined by or), [not] between and CASE … END (hogql-functions.ts's betweenNode and caseNode),
 * and/or/not, parentheses, and toFloat, toInt, coalesce, ifNull, if (multiIf and nullIf read as ifs), greatest and least, abs, floor, ceil, trunc, sign, sqrt, exp, log, log2, log10, pow, modulo (`%`), intDiv and their -OrZero, round (hogql-values.ts computes these), isNull, isNotNull, toString and concat (of texts and numbers, hogqlText; concat reads null as ''), and of texts lower, upper, length, empty,
 * notEmpty, startsWith, endsWith, trim, trimLeft, trimRight, position, replaceAll, replaceOne, substring (ClickHouse's:
 * on bytes, a character substring cuts kept as its bytes, hogql-values.ts's textBytes; ASCII case; the replacements'
 * pattern and replacement literals, substring's offset and length integer literals), the URL functions (hogql-urls.ts)
 * and hogql-texts.ts's, and in filters only match(text, 'literal pattern') and its operators (=~ …), with extract and
 * replaceRegexp* in queries only (hogql-regex.ts; patterns the stores run, hogqlPatterns and QueryClock.regex). The same
 * expressions are HogQL property filters' conditions (`type: 'hogql'`, hogqlHolds). Every node has a static
 * type, number or text, as ClickHouse types it, so that the evaluation here (the SQLite store: experiment-rows.ts and
 * sqlite-filters.ts) and the SQL of clickhouse-hogql.ts convert the same operands: a property is text, and text read as a
 * number is toFloat's (numbers.ts; null unless a finite number). Nulls propagate as ClickHouse's do, but comparisons,
 * which are NULL-safe as PostHog's printer writes them (nullCompare); and/or/not are three-valued (Kleene), as current
 * ClickHouse has them. Where PostHog would fail (arithmetic on a property that is text), skylark reads it as a number.
 *
 * Anything else is refused by name (hogql-parse.ts, hogql-functions.ts): HogqlMathError, a 400 where it is read.
 */
import { like } from '../../common/sql-like.js'
import { compare, compareHogqlText, extreme, hogqlRound, hogqlSubstring, hogqlText, hogqlToFloat, joinedText, logical, nullCompare, numberCall, numberInt, TEXT_CALLS, textCall, textInt, uniqKey } from './hogql-values.js'
import type { AggregationParameters } from './hogql-array-aggregations.js'
import type { RegexEngine } from './sqlite-actions.js'
import { instantOf } from './hogql-instants.js'
import { parsedInstant } from './hogql-datetime-text.js'
import { isUrlFunction, urlCall } from './hogql-urls.js'
import { isTextFunction, textFunctionValue } from './hogql-texts.js'
import type { HogqlFunction } from './hogql-functions.js'
import { lookupValue, type LookupField, type LookupValues } from './hogql-lookups.js'
import { REGEX_FUNCTIONS, regexCall } from './hogql-regex.js'
import { arrayValue, readsArray } from './hogql-arrays.js'

export { HogqlMathError } from './hogql-tokens.js'
export { parseHogqlCondition, parseHogqlMath } from './hogql-read.js'

export type HogqlType = 'number' | 'text' | 'null'
/**
 * The event's own fields an expression reads; `uuid`, `person_id` (its person's uuid when it was stored), `timestamp`
 * (ms, a number), `properties` (the stored JSON text) and the stored columns in queries only (hogql-query.ts).
 */
export type HogqlField = 'event' | 'distinct_id' | 'uuid' | 'person_id' | 'timestamp' | 'properties' | StoredField | PersonField | GroupField | ColumnRef | SourceRef
/**
 * The event's other stored columns a query reads (hogql-tables.ts): `created_at` (ms, as the persons table's), the
 * autocapture `elements_chain`, and the group keys `$group_0`…`$group_4` ('' where none).
 */
export type StoredField = 'elements_chain' | 'created_at' | `$group_${0 | 1 | 2 | 3 | 4}`
/** A query of the persons table's fields (`FROM persons`, hogql-query.ts): its uuid, created_at (ms) and is_identified (0 or 1). */
export type PersonField = 'id' | 'created_at' | 'is_identified'
/** A query of the groups table's fields (`FROM groups`): its group type's index (a number) and its key. */
export type GroupField = 'index' | 'key'
/** A query's column (its index) as HAVING reads it: a group's value, not an event's (hogql-query.ts). */
export type ColumnRef = `col_${number}`
/** Whether a field is a query's column (HAVING's), not an event's. */
export const isColumnRef = (name: HogqlField): name is ColumnRef => name.startsWith('col_')
/** A column (its index) of the subquery a query reads (`FROM (SELECT …)`, hogql-query.ts): each of its rows' value. */
export type SourceRef = `sub_${number}`
export const isSourceRef = (name: HogqlField): name is SourceRef => name.startsWith('sub_')
export type { HogqlFunction }

export type HogqlNode = { type: HogqlType } & (
  | { op: 'number'; value: number }
  | { op: 'text'; value: string }
  | { op: 'null' }
  /**
   * `nested`: the keys read within the property's value, object by object (`properties.a.b`); `person`: a person's
   * property (`person.properties.<key>`), its current value in persons.db read by the same code: a filter's as the
   * persons it holds for (person-filters.ts), math's as the event's distinct id's person has it (PersonProperty).
   */
  | { op: 'property'; key: string; nested?: readonly string[]; person?: boolean }
  | { op: 'field'; field: HogqlField; array?: true }
  | { op: '+' | '-' | '*' | '/'; args: [HogqlNode, HogqlNode] }
  | { op: 'negate' | 'not'; args: [HogqlNode] }
  | { op: '=' | '!=' | '<' | '<=' | '>' | '>='; args: [HogqlNode, HogqlNode] }
  /** Both operands text (or null). */
  | { op: 'like' | 'ilike'; args: [HogqlNode, HogqlNode] }
  | { op: 'and' | 'or'; args: HogqlNode[] }
  | { op: 'call'; fn: HogqlFunction; args: HogqlNode[] }
  /**
   * A query's toStartOf<unit>(datetime) (hogql-query.ts): the instant (ms) its period of `step` units (1 if absent:
   * toStartOfInterval's count) starts on a zone's wall clock, the zone given as its offsets from each instant on
   * (`[at, offset]`, offsetChanges), so both stores compute it alike.
   */
  | { op: 'truncate'; unit: TruncateUnit; step?: number; offsets: ReadonlyArray<readonly [number, number]>; args: [HogqlNode] }
  /**
   * A query's part of a date and time on the zone's wall clock (toHour(timestamp) …), or its number of units since
   * some moment (`rel…`: ClickHouse's toRelative<unit>Num, of which dateDiff takes two apart). Offsets as truncate's.
   */
  | { op: 'calendar'; part: CalendarPart; mode?: number; offsets: ReadonlyArray<readonly [number, number]>; args: [HogqlNode] }
  | { op: 'dayShift'; days: number; offsets: ReadonlyArray<readonly [number, number]>; args: [HogqlNode] }
  /** parseTime: a text read as a date and time (toDateTime(properties.t)), on the zone's offsets unless it has its own (hogql-datetime-text.ts); wallTime: a wall time (ms) as its instant on them (wallInstant). */
  | { op: 'parseTime'; offsets: ReadonlyArray<readonly [number, number]>; args: [HogqlNode] }
  | { op: 'wallTime'; offsets: ReadonlyArray<readonly [number, number]>; args: [HogqlNode] }
  /** A value looked up by its argument's, from values given before the run (the event's group's or person's: hogql-lookups.ts); `missing` for a key of none. */
  | { op: 'lookup'; args: [HogqlNode]; values: LookupValues; missing: HogqlValue; field?: LookupField }
  /**
   * A query's `(SELECT …)` read as a value: its one row's one column, NULL for none, given before the run (hogql-in.ts);
   * with `item`, a lambda's variable (`x` of `x -> …`, by its name), given each item of its array in turn (hogql-arrays.ts).
   */
  | { op: 'scalar'; value: HogqlValue; item?: { name: string; nullable: boolean } }
)
export type TruncateUnit = 'second' | 'minute' | 'hour' | 'day' | 'week' | 'monday' | 'month' | 'quarter' | 'year'
/** A part of a date and time on the wall clock, or (`rel…`) its number of units since a fixed moment, or the clock's offset (seconds east of UTC). */
export type CalendarPart = 'year' | 'quarter' | 'month' | 'dayOfMonth' | 'dayOfWeek' | 'dayOfYear' | 'hour' | 'minute' | 'second' | 'millisecond' | 'offset' | WeekPart | RelativeUnit
/** ClickHouse's week numbers of a `mode` (hogql-instants.ts's yearWeek): toWeek's, toYearWeek's, toISOYear's. */
export type WeekPart = 'week' | 'yearWeek' | 'isoYear'
type RelativeUnit = 'relSecond' | 'relMinute' | 'relHour' | 'relDay' | 'relWeek' | 'relMonth' | 'relQuarter' | 'relYear'
export type HogqlAggregation = 'sum' | 'avg' | 'min' | 'max' | 'any' | 'last' | 'count' | 'uniq' | 'quantile' | 'quantiles' | Moment | 'groupArray' | 'groupUniqArray' | 'topK'
/** HogQL queries' aggregations of moments (hogql-query-run.ts's moment); covarPop, covarSamp and corr of a pair (isPair). */
export type Moment = 'varPop' | 'varSamp' | 'stddevPop' | 'stddevSamp' | 'skewPop' | 'skewSamp' | 'kurtPop' | 'kurtSamp' | 'covarPop' | 'covarSamp' | 'corr'
/** An aggregation of an expression, with its parameters (a quantile's level …). */
export interface HogqlMath extends AggregationParameters {
  aggregation: HogqlAggregation
  expr: HogqlNode
}

export type HogqlValue = number | string | null

/** What a property node reads: its key, then the keys within its value (`properties.a.b`: ['a', 'b']). */
export type PropertyPath = readonly [string, ...string[]]

/** A property's text for an evaluation (null: missing or null): the event's, or with `person` the person's. */
export type PropertyReader = (path: PropertyPath, person: boolean) => string | null

/** A number literal's node. */
export const numberNode = (value: number): HogqlNode => ({ op: 'number', type: 'number', value })

/** The node of a property's path (`person`: the person's). */
export function propertyNode([key, ...nested]: PropertyPath, person = false): HogqlNode {
  return { op: 'property', type: 'text', key, ...(nested.length > 0 ? { nested } : {}), ...(person ? { person } : {}) }
}

/** A property node's path. */
export function propertyPath(node: { key: string; nested?: readonly string[] }): PropertyPath {
  return node.nested === undefined ? [node.key] : [node.key, ...node.nested]
}

/**
 * The property paths an expression reads, in order of appearance, each once: of the event and the person alike
 * (`any`: a filter reads one holder's, readsPersons), or of one of them (math reads both, from different places).
 */
export function hogqlProperties(node: HogqlNode, of: 'any' | 'event' | 'person' = 'any'): PropertyPath[] {
  const paths: PropertyPath[] = []
  const visit = (n: HogqlNode): void => {
    if (n.op === 'property') {
      if (of === 'any' || (of === 'person') === (n.person === true)) paths.push(propertyPath(n))
    } else if ('args' in n) n.args.forEach(visit)
  }
  visit(node)
  return uniquePaths(paths)
}

/** Each path once, in order of first appearance. */
export function uniquePaths(paths: readonly PropertyPath[]): PropertyPath[] {
  return [...new Map(paths.map((path) => [JSON.stringify(path), path])).values()]
}

/**
 * A reader's lookup of a path among the `paths` it reads (their index), for evaluating on row texts: a top-level key,
 * the common read, is found without a JSON text made for it on every row.
 */
export function pathIndex(paths: readonly PropertyPath[]): (path: PropertyPath) => number {
  const keys = new Map<string, number>()
  const nested = new Map<string, number>()
  paths.forEach((p, i) => (p.length === 1 ? keys.set(p[0], i) : nested.set(JSON.stringify(p), i)))
  return (path) => (path.length === 1 ? keys.get(path[0]) : nested.get(JSON.stringify(path))) ?? -1
}

/** The event fields an expression reads, in order of appearance. */
export function hogqlFields(node: HogqlNode): HogqlField[] {
  if (node.op === 'field') return [node.field]
  if ('args' in node) return [...new Set(node.args.flatMap(hogqlFields))]
  return []
}

/** The patterns of an expression's match() calls (literals: hogql-parse.ts), for its reader to check. */
export function hogqlPatterns(node: HogqlNode): string[] {
  const own = node.op === 'call' && REGEX_FUNCTIONS.has(node.fn) && node.args[1].op === 'text' ? [node.args[1].value] : []
  return 'args' in node ? [...own, ...node.args.flatMap(hogqlPatterns)] : own
}

/** Whose properties an expression reads: the event's, the person's (`person.properties.<key>`), both or none. */
export function hogqlHolders(node: HogqlNode): { event: boolean; person: boolean } {
  if (node.op === 'property') return { event: !node.person, person: node.person === true }
  if (node.op === 'field') return { event: true, person: false }
  const holders = { event: false, person: false }
  if ('args' in node) {
    for (const arg of node.args) {
      const h = hogqlHolders(arg)
      holders.event ||= h.event
      holders.person ||= h.person
    }
  }
  return holders
}

/** A value as a number where the node's type is text (toFloat's), else as it is. */
function asNumber(node: HogqlNode, value: HogqlValue): number | null {
  return node.type === 'text' ? hogqlToFloat(value) : (value as number | null)
}

/** The reader of a caller that gives no fields. */
const NO_FIELDS = (field: HogqlField): never => {
  throw new Error(`no value was given for the field ${field}`)
}

/**
 * Evaluates an expression on one event, `property` giving a property's text (null: missing or null), the person's
 * where `person` (`person.properties.<key>`); `regex` runs match() and `field` gives the event's fields, which
 * without them fail.
 */
export function evaluateHogql(node: HogqlNode, property: PropertyReader, regex: RegexEngine | null = null, field: (name: HogqlField) => HogqlValue = NO_FIELDS): HogqlValue {
  const value = (n: HogqlNode) => evaluateHogql(n, property, regex, field)
  const number = (n: HogqlNode) => asNumber(n, value(n))
  switch (node.op) {
    case 'number':
    case 'text':
      return node.value
    case 'null':
      return null
    case 'property':
      return property(propertyPath(node), node.person === true)
    case 'field':
      return field(node.field)
    case '+':
    case '-':
    case '*':
    case '/': {
      const a = number(node.args[0])
      const b = number(node.args[1])
      if (a === null || b === null) return null
      return node.op === '+' ? a + b : node.op === '-' ? a - b : node.op === '*' ? a * b : a / b
    }
    case 'negate': {
      const a = number(node.args[0])
      return a === null ? null : -a
    }
    case 'not': {
      const a = number(node.args[0])
      return a === null ? null : a === 0 ? 1 : 0
    }
    case 'and':
    case 'or':
      return logical(node.op, node.args.map(number))
    case '=':
    case '!=':
    case '<':
    case '<=':
    case '>':
    case '>=': {
      const [l, r] = node.args
      if (l.type === 'number' || r.type === 'number') {
        const a = number(l)
        const b = number(r)
        return a === null || b === null ? nullCompare(node.op, a, b) : compare(node.op, a < b ? -1 : a > b ? 1 : a === b ? 0 : Number.NaN)
      }
      const a = value(l)
      const b = value(r)
      return a === null || b === null ? nullCompare(node.op, a, b) : compare(node.op, compareHogqlText(a as string, b as string))
    }
    case 'like':
    case 'ilike': {
      const a = value(node.args[0])
      const b = value(node.args[1])
      return a === null || b === null ? 0 : like(a as string, b as string, node.op === 'ilike') ? 1 : 0
    }
    case 'call':
      return call(node, value, regex)
    case 'truncate':
    case 'calendar':
    case 'dayShift':
    case 'wallTime': {
      const ms = number(node.args[0])
      return ms === null ? null : instantOf(node, ms)
    }
    case 'parseTime':
      return parsedInstant(value(node.args[0]) as string | null, node.offsets)
    case 'lookup':
      return lookupValue(node, value(node.args[0]))
    case 'scalar':
      return node.value
  }
}

/** Whether an event passes a HogQL filter's condition (parseHogqlCondition): a number other than 0. */
export function hogqlHolds(node: HogqlNode, property: PropertyReader, regex: RegexEngine | null = null, field: (name: HogqlField) => HogqlValue = NO_FIELDS): boolean {
  const v = asNumber(node, evaluateHogql(node, property, regex, field))
  return v !== null && v !== 0
}

function call(node: HogqlNode & { op: 'call' }, value: (n: HogqlNode) => HogqlValue, regex: RegexEngine | null): HogqlValue {
  const args = node.args
  // An operand of a choice whose type is number is read as one (ClickHouse's common type).
  const chosen = (n: HogqlNode) => (node.type === 'number' ? asNumber(n, value(n)) : value(n))
  if (readsArray(node)) return arrayValue(node, value)
  if (isUrlFunction(node.fn) || TEXT_CALLS.has(node.fn)) {
    const texts = args.map(value) as Array<string | null>
    if (texts.includes(null)) return null
    return isUrlFunction(node.fn) ? urlCall(node.fn, texts as string[]) : textCall(node.fn, texts as string[])
  }
  if (isTextFunction(node.fn)) return textFunctionValue(node.fn, args.map(value))
  switch (node.fn) {
    case 'coalesce':
    case 'ifNull':
      for (const a of args) {
        const v = chosen(a)
        if (v !== null) return v
      }
      return null
    case 'if': {
      const c = asNumber(args[0], value(args[0]))
      return c !== null && c !== 0 ? chosen(args[1]) : chosen(args[2])
    }
    case 'greatest':
    case 'least':
      return extreme(node.fn, args.map(chosen))
    case 'isNull':
    case 'isNotNull':
      return (value(args[0]) === null) === (node.fn === 'isNull') ? 1 : 0
    case 'substring': {
      // Its offset and length are integer literals (hogql-functions.ts).
      const text = value(args[0]) as string | null
      const [offset, length] = args.slice(1).map((a) => (a as { value: number }).value)
      return text === null ? null : hogqlSubstring(text, offset!, length!)
    }
    case 'toString': {
      const v = value(args[0])
      return v === null ? null : hogqlText(v)
    }
    case 'toInt': {
      const v = value(args[0])
      return v === null ? null : args[0].type === 'text' ? textInt(v as string) : numberInt(v as number)
    }
    case 'concat':
      // PostHog's printer reads each argument as ifNull(toString(arg), ''): never null.
      return joinedText(args.map(value).map((v) => (v === null ? '' : hogqlText(v))).join(''))
    case 'round': {
      const a = asNumber(args[0], value(args[0]))
      return a === null ? null : hogqlRound(a, args.length === 2 ? (args[1] as { value: number }).value : 0)
    }
    case 'match':
    case 'extract':
    case 'replaceRegexpOne':
    case 'replaceRegexpAll': {
      // The reader kept out what the stores can't run (hogqlPatterns, checkRegexCall).
      const texts = args.map(value) as Array<string | null>
      if (regex === null) throw new Error(`no regex engine was given to evaluate ${node.fn}()`)
      return texts.includes(null) ? null : regexCall(node.fn, texts as string[], regex)
    }
    default: {
      // toFloat and the functions of numbers: a text operand is read as toFloat reads it.
      const [a, b = 0] = args.map((n) => asNumber(n, value(n)))
      if (a === null || b === null) return null
      return node.fn === 'toFloat' ? a : numberCall(node.fn, a, b)
    }
  }
}

/**
 * What one event adds to its entity's aggregate: `count` counts a value that is not null, `uniq` the distinct keys
 * of those (uniqKey), the others take toFloat of it; null adds nothing.
 */
export function hogqlContribution(math: HogqlMath, value: HogqlValue): number | string | null {
  if (math.aggregation === 'count') return value === null ? null : 1
  if (math.aggregation === 'uniq') return uniqKey(value)
  const n = hogqlToFloat(value)
  return n !== null && Number.isFinite(n) ? n : null
}
