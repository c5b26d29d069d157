/**
 * HogQL math and filters (hogql-math.ts) as ClickHouse SQL: the same expression, the same conversions, so that both stores
 * answer the same numbers and pass the same events. A node of type number compiles to Nullable(Float64), of type text to
 * Nullable(String). Written for 18.16 as well as current servers: `if` gets a condition that is never null (18.16 answers
 * NULL for a NULL condition, and refuses a constant Nullable one), and and/or are spelled out as Kleene's.
 */
import { quote } from './clickhouse-schema.js'
import { evaluateHogql, pathIndex, propertyPath, type HogqlField, type HogqlMath, type HogqlNode, type HogqlValue, type PropertyPath } from './hogql-math.js'
import { lookupSql } from './clickhouse-lookups.js'
import { hogqlText, hogqlTextSql, hogqlToFloat } from './hogql-values.js'
import { inListSql, lambdaSql, literal, NULL_NUMBER, NULL_TEXT, numberCallSql, numberIntSql, roundSql, substringSql, textIntSql } from './clickhouse-hogql-calls.js'
import { TEXT_FUNCTIONS } from './hogql-functions.js'
import { REGEX_FUNCTIONS, regexCallSql } from './hogql-regex.js'
import { arrayCallSql, readsArray } from './hogql-arrays.js'
import { LambdaScopes } from './clickhouse-lambdas.js'
import { isUrlFunction, URL_SQL_NAMES, urlCallSql } from './hogql-urls.js'
import { isTextFunction, textFunctionSql } from './hogql-texts.js'
import { textNumberSql } from './numbers.js'
import { calendarSql, dayShiftSql, parsedTimeSql, truncateSql, wallTimeSql } from './clickhouse-periods.js'

/** The SQL of a property's text (NULL: missing or null): the event's, or with `person` the person's. */
export type PropertySql = (path: PropertyPath, person: boolean) => string
/** The SQL of an event's field: text, or a number for `timestamp` (ms). */
export type FieldSql = (field: HogqlField) => string

/** The two fields math and filters read, the events table's own columns. */
const EVENT_FIELDS: FieldSql = (field) => (field === 'event' ? 'toNullable(event)' : 'toNullable(distinct_id)')

/** A constant's reader: it reads no property (constant()). */
const NO_PROPERTIES = (): never => { throw new Error('a constant expression read a property') }

/**
 * Whether the node has the same value on every row: it reads nothing of the event (and runs no regex), or it is a
 * choice decided by a constant (`coalesce('3', properties.a)`, which 18.16 folds into a constant too).
 */
function constant(node: HogqlNode): boolean {
  if (node.op === 'property' || node.op === 'field' || (node.op === 'scalar' && node.item !== undefined) || (node.op === 'call' && REGEX_FUNCTIONS.has(node.fn))) return false
  if (node.op === 'call' && (node.fn === 'coalesce' || node.fn === 'ifNull')) {
    for (const arg of node.args) {
      if (!constant(arg)) return false
      // Read as the choice reads it (hogql-math.ts): a text in a choice of numbers is its number.
      const value = evaluateHogql(arg, NO_PROPERTIES)
      if ((node.type === 'number' ? hogqlToFloat(value) : value) !== null) return true
    }
    return true
  }
  if (node.op === 'call' && node.fn === 'if' && constant(node.args[0])) {
    const c = hogqlToFloat(evaluateHogql(node.args[0], NO_PROPERTIES))
    return constant(node.args[c !== null && c !== 0 ? 1 : 2])
  }
  return 'args' in node ? node.args.every(constant) : true
}

/**
 * One expression's SQL. A value read twice (a finiteness test and the value; and/or's operands) is named once
 * (`(sql AS name)`, ClickHouse's inline alias, resolved wherever it stands in the SELECT) and referred to by
 * name after, as is each property's text: the SQL grows with the expression, not with its nesting (a
 * property's text on 18.16 is several KB of SQL).
 */
class Compiler {
  #n = 0
  /** Each property path's text (the event's or the person's) is named at its first use. */
  readonly #properties = new Map<string, string>()
  /** A calendar node read more than once (formatDateTime's parts) is named at its first use. */
  readonly #calendars = new Map<HogqlNode, string>()
  readonly #lambdas = new LambdaScopes(() => this.fresh())
  constructor(
    readonly prefix: string,
    readonly property: PropertySql,
    readonly field: FieldSql = EVENT_FIELDS,
  ) {}

  /** A name unique in the query. */
  fresh(): string {
    return `${this.prefix}_${this.#n++}`
  }

  lambda(item: HogqlNode, body: () => string): string {
    return this.#lambdas.lambda(item, body)
  }

  /** The SQL twice: a definition for its first use, a name for the others. */
  bind(sql: string): [string, string] {
    const name = this.fresh()
    return [`(${sql} AS ${name})`, name]
  }

  /** A finite number as it is, else NULL (toFloat's reading, and what an event adds). */
  finite(sql: string): string {
    const [v, name] = this.bind(sql)
    return `if(ifNull(isFinite(${v}), 0), ${name}, NULL)`
  }

  /**
   * The node as a number: text through toFloat. A text literal is read here, as hogqlToFloat reads it: 18.16
   * refuses the nullable number a constant's toFloat64OrNull gives ("Nullable(Float64) cannot be inside
   * Nullable column").
   */
  number(node: HogqlNode): string {
    if (node.type === 'null') return NULL_NUMBER
    if (constant(node)) {
      const n = hogqlToFloat(evaluateHogql(node, NO_PROPERTIES))
      return n === null ? NULL_NUMBER : literal(n)
    }
    const sql = this.compile(node)
    return node.type === 'text' ? this.finite(textNumberSql(sql)) : sql
  }

  /** The node as text (toString's): a number as ClickHouse writes a Float64, which hogqlText follows. */
  text(node: HogqlNode): string {
    if (node.type === 'null') return NULL_TEXT
    // Written here: 18.16 refuses toString of a constant Nullable number ("cannot be inside Nullable column").
    if (constant(node)) {
      const value = evaluateHogql(node, NO_PROPERTIES)
      return value === null ? NULL_TEXT : hogqlTextSql(hogqlText(value))
    }
    if (node.type === 'text') return this.compile(node)
    const n = this.number(node)
    if (n === NULL_NUMBER) return NULL_TEXT
    // Not toString(n): 18.16 refuses it where n is a comparison with a NULL constant ("cannot be inside Nullable column").
    const [def, name] = this.bind(n)
    return `if(isNull(${def}), ${NULL_TEXT}, toString(assumeNotNull(${name})))`
  }

  /** An operand of a choice (coalesce, if) of the choice's type. */
  chosen(choice: HogqlNode, node: HogqlNode): string {
    if (node.type === 'null') return choice.type === 'number' ? NULL_NUMBER : NULL_TEXT
    return choice.type === 'number' ? this.number(node) : this.compile(node)
  }

  compile(node: HogqlNode): string {
    // Computed here, as the matcher computes it: 18.16 refuses a constant Nullable number in many places ("cannot
    // be inside Nullable column", "Illegal column for DataTypeNullable").
    if (constant(node)) return 'args' in node ? this.#folded(node) : this.#own(node)
    // Within a lambda's body, a value of none of the variables is bound outside the lambdas (clickhouse-lambdas.ts).
    return this.#lambdas.hoisted(node, () => this.#own(node)) ?? this.#own(node)
  }

  /** The node's SQL where it stands. */
  #own(node: HogqlNode): string {
    switch (node.op) {
      case 'number':
        return literal(node.value)
      case 'text':
        return hogqlTextSql(node.value)
      case 'null':
        return 'NULL'
      case 'property': {
        const path = propertyPath(node)
        const person = node.person === true
        const id = JSON.stringify([person, path])
        const name = this.#properties.get(id)
        if (name !== undefined) return name
        const [def, ref] = this.bind(this.property(path, person))
        this.#properties.set(id, ref)
        return def
      }
      case 'field':
        return this.field(node.field)
      case '+':
      case '-':
      case '*':
      case '/':
        return `(${this.number(node.args[0])} ${node.op} ${this.number(node.args[1])})`
      case 'negate':
        return `(-${this.number(node.args[0])})`
      case 'not':
        return `toFloat64(${this.number(node.args[0])} = 0)`
      case 'and':
      case 'or':
        return (node.op === 'or' && inListSql(node.args, this)) || this.#logical(node.op, node.args)
      case '=':
      case '!=':
      case '<':
      case '<=':
      case '>':
      case '>=': {
        const [l, r] = node.args
        const op = node.op
        // A NULL literal (`NULL != x` is of ClickHouse's type Nothing, which toString can't write): PostHog's isNull and isNotNull.
        const literalNull = [l, r].filter((n) => n.type === 'null').length
        if (literalNull > 0) {
          // Nothing of the other side is compiled for an order: a property's name is defined at its first compile only.
          if (op !== '=' && op !== '!=') return 'toFloat64(0)'
          const other = l.type === 'null' ? r : l
          return `toFloat64(${literalNull === 2 ? '1' : `${op === '=' ? 'isNull' : 'isNotNull'}(${this.compile(other)})`})`
        }
        const numeric = l.type === 'number' || r.type === 'number'
        const side = (n: HogqlNode) => (numeric ? this.number(n) : this.compile(n))
        // nullCompare's (hogql-math.ts): PostHog's printer's ifNull(…) of nullable sides. Beside a value never NULL (a
        // constant that is not NULL as compared: 'abc' is a NULL number), NULL is neither equal nor ordered; else both
        // sides are a lambda's, read twice.
        const never = (n: HogqlNode) => constant(n) && (numeric ? hogqlToFloat(evaluateHogql(n, NO_PROPERTIES)) : evaluateHogql(n, NO_PROPERTIES)) !== null
        if ((op !== '=' && op !== '!=') || never(l) || never(r)) {
          return `ifNull(toFloat64(${side(l)} ${op} ${side(r)}), toFloat64(${op === '!=' ? 1 : 0}))`
        }
        const [a, b] = [this.fresh(), this.fresh()]
        const otherwise = op === '=' ? `isNull(${a}) AND isNull(${b})` : `isNotNull(${a}) OR isNotNull(${b})`
        return `arrayMap((${a}, ${b}) -> ifNull(toFloat64(${a} ${op} ${b}), toFloat64(${otherwise})), [${side(l)}], [${side(r)}])[1]`
      }
      case 'like':
      case 'ilike': {
        const [a, b] = node.args.map((n) => (node.op === 'ilike' ? `lowerUTF8(${this.compile(n)})` : this.compile(n)))
        return `ifNull(toFloat64(like(${a}, ${b})), toFloat64(0))`
      }
      case 'call':
        return this.#call(node)
      case 'truncate':
        return this.#instant(node.args[0], (ms) => truncateSql(node, ms, (sql) => this.bind(sql)))
      case 'dayShift':
        return this.#instant(node.args[0], (ms) => dayShiftSql(node, ms, (sql) => this.bind(sql)))
      case 'parseTime':
        return parsedTimeSql(node, this.text(node.args[0]), () => this.fresh())
      case 'wallTime':
        return this.#instant(node.args[0], (ms) => wallTimeSql(node, ms, () => this.fresh()))
      case 'calendar': {
        const named = this.#calendars.get(node)
        if (named !== undefined) return named
        const [def, name] = this.bind(this.#instant(node.args[0], (ms) => calendarSql(node, ms, (sql) => this.bind(sql), () => this.fresh())))
        this.#calendars.set(node, name)
        return def
      }
      case 'scalar':
        return node.item === undefined ? this.#folded(node) : this.#lambdas.variable(node)
      case 'lookup':
        return lookupSql(node.values, `ifNull(${this.compile(node.args[0])}, '')`, node.type === 'number', node.missing)
    }
  }

  /**
   * An instant node's steps on its operand's SQL. An operand that reads a text as a date and time (parseTime's KB of
   * SQL) or holds another instant node's steps (toLastDayOfMonth's truncations of truncations) is a lambda's
   * argument: 18.16 writes an alias's whole expression wherever it is named, and the steps name their operand several
   * times, a period's parts their period's, round(…) its value; nested so, the copies passed its 2,000,000 elements
   * of a query (toLastDayOfMonth alone: 1,249,019 in Lord Howe's zone).
   */
  #instant(operand: HogqlNode, steps: (ms: string) => string): string {
    const heavy = (n: HogqlNode): boolean => n.op === 'parseTime' || n.op === 'truncate' || n.op === 'dayShift' || n.op === 'wallTime' || ('args' in n && n.args.some(heavy))
    if (!heavy(operand)) return steps(this.number(operand))
    const name = this.fresh()
    return lambdaSql([name], [this.number(operand)], steps(name))
  }

  #folded(node: HogqlNode): string {
    const value = evaluateHogql(node, NO_PROPERTIES)
    if (value === null) return node.type === 'number' ? NULL_NUMBER : node.type === 'text' ? NULL_TEXT : 'NULL'
    return typeof value === 'number' ? literal(value) : hogqlTextSql(value)
  }

  /** Kleene's and/or, spelled out (18.16's and/or are NULL for any NULL operand). */
  #logical(op: 'and' | 'or', nodes: readonly HogqlNode[]): string {
    const args = nodes.map((n) => this.bind(this.number(n)))
    const decisive = args.map(([a]) => (op === 'and' ? `ifNull(${a} = 0, 0)` : `ifNull(${a} != 0, 0)`)).join(' OR ')
    const unknown = args.map(([, name]) => `isNull(${name})`).join(' OR ')
    const [win, lose] = op === 'and' ? ['0', '1'] : ['1', '0']
    return `if(${decisive}, toFloat64(${win}), if(${unknown}, ${NULL_NUMBER}, toFloat64(${lose})))`
  }

  #call(node: HogqlNode & { op: 'call' }): string {
    if (node.type === 'null' && (node.fn === 'coalesce' || node.fn === 'ifNull' || node.fn === 'if' || node.fn === 'greatest' || node.fn === 'least')) return 'NULL'
    if (readsArray(node)) return this.#lambdas.outermost(node, () => arrayCallSql(node, this))
    const args = node.args
    // Null for a NULL text, written so: ClickHouse types some of these of a NULL literal as Nothing, which it can't send.
    if (TEXT_FUNCTIONS.has(node.fn) && args.some((a) => a.type === 'null')) return node.type === 'text' ? NULL_TEXT : NULL_NUMBER
    if (isTextFunction(node.fn)) return textFunctionSql(node.fn, args, this)
    if (isUrlFunction(node.fn)) return urlCallSql(node.fn, this.compile(args[0]), (args[1] as { value: string } | undefined)?.value, Array.from({ length: URL_SQL_NAMES }, () => this.fresh()))
    switch (node.fn) {
      case 'coalesce':
      case 'ifNull': {
        // A constant NULL decides nothing: left out. Nested ifNull rather than coalesce: 18.16's coalesce whose last
        // operand is always NULL (`x * NULL`) fails ("Illegal column for DataTypeNullable") or, as a column, reads
        // NULL on every row; its ifNull does neither.
        const chosen = args.map((a) => this.chosen(node, a)).filter((sql) => sql !== NULL_NUMBER && sql !== NULL_TEXT)
        if (chosen.length === 0) return this.chosen(node, { op: 'null', type: 'null' })
        return chosen.reduceRight((rest, sql) => `ifNull(${sql}, ${rest})`)
      }
      case 'if':
        return `if(ifNull(${this.number(args[0])} != 0, 0), ${this.chosen(node, args[1])}, ${this.chosen(node, args[2])})`
      case 'greatest':
      case 'least': {
        // The max/min aggregate of the values, which skips NULLs (18.16's greatest has two arguments and no such rule).
        const values = args.map((a) => this.chosen(node, a)).filter((sql) => sql !== NULL_NUMBER && sql !== NULL_TEXT)
        return `arrayReduce('${node.fn === 'greatest' ? 'max' : 'min'}', [${values.map((v) => `materialize(${v})`).join(', ')}])`
      }
      case 'isNull':
      case 'isNotNull':
        return `toFloat64(${node.fn}(${this.compile(args[0])}))`
      case 'toFloat':
        return this.number(args[0])
      case 'lower':
      case 'upper':
        return `${node.fn}(${this.compile(args[0])})`
      case 'length':
      case 'empty':
      case 'notEmpty':
      case 'startsWith':
      case 'endsWith':
        return `toFloat64(${node.fn}(${args.map((a) => this.compile(a)).join(', ')}))`
      case 'toString':
        return this.text(args[0])
      case 'trim':
      case 'trimLeft':
      case 'trimRight': {
        // 18.16 has no trim functions: the spaces' regex, as current ClickHouse's trims remove spaces only.
        const [fn, pattern] = node.fn === 'trim' ? ['replaceRegexpAll', '^ +| +$'] : ['replaceRegexpOne', node.fn === 'trimLeft' ? '^ +' : ' +$']
        return `${fn}(${this.compile(args[0])}, '${pattern}', '')`
      }
      case 'position':
        return `toFloat64(position(${this.compile(args[0])}, ${this.compile(args[1])}))`
      case 'replaceAll':
      case 'replaceOne': {
        // Literals (hogql-parse.ts); an empty pattern replaces nothing (18.16 refuses it).
        const [pattern, replacement] = args.slice(1).map((a) => (a as { value: string }).value)
        return pattern === '' ? this.compile(args[0]) : `${node.fn}(${this.compile(args[0])}, ${hogqlTextSql(pattern)}, ${hogqlTextSql(replacement)})`
      }
      case 'substring': {
        const [offset, length] = args.slice(1).map((a) => (a as { value: number }).value) as [number, number]
        return substringSql(this.compile(args[0]), offset, length)
      }
      case 'toInt':
        if (args[0].type !== 'text') return numberIntSql(this.number(args[0]), (sql) => this.bind(sql))
        // A property is named already (a second alias on it would hide the first from 18.16): its second reading is the name.
        return textIntSql(args[0].op === 'property' ? [this.compile(args[0]), this.compile(args[0])] : this.bind(this.compile(args[0])))
      case 'concat':
        return `concat(${args.map((a) => `ifNull(${this.text(a)}, '')`).join(', ')})`
      case 'round':
        return roundSql(this.number(args[0]), args.length === 2 ? (args[1] as { value: number }).value : 0, this.fresh())
      case 'sign':
      case 'modulo':
      case 'moduloOrZero':
      case 'intDiv':
      case 'intDivOrZero':
        return numberCallSql(node.fn, args.map((a) => this.number(a)), [this.fresh(), this.fresh()])
      case 'pow':
        return `pow(${this.number(args[0])}, ${this.number(args[1])})`
      case 'match':
      case 'extract':
      case 'replaceRegexpOne':
      case 'replaceRegexpAll': {
        // The pattern and replacement are literals (hogql-functions.ts).
        const sql = regexCallSql(node.fn, this.compile(args[0]), args.slice(1).map((a) => (a as { value: string }).value) as [string, string?], this.fresh())
        return node.fn === 'match' ? `toFloat64(${sql})` : sql
      }
      default:
        return `${node.fn}(${this.number(args[0])})`
    }
  }
}

/**
 * What one event adds to its entity's aggregate (hogqlContribution): 1 for a value that is not null with
 * `count`, the value's key (a text) with `uniq`, else the value's finite number; NULL adds nothing. `prefix` names the SQL's inline aliases, unique
 * in the query.
 */
export function hogqlContributionSql(math: HogqlMath, property: PropertySql, prefix: string, field?: FieldSql): string {
  const expr = math.expr
  if (expr.type === 'null') return NULL_NUMBER
  const c = new Compiler(prefix, property, field)
  if (math.aggregation === 'count') return `if(isNull(${c.compile(expr)}), ${NULL_NUMBER}, toFloat64(1))`
  // uniq's key (hogql-values.ts's uniqKey): a number's text after `+ 0`, which reads −0 as 0.
  if (math.aggregation === 'uniq') return expr.type === 'text' ? c.compile(expr) : c.text({ op: '+', type: 'number', args: [expr, { op: 'number', type: 'number', value: 0 }] })
  return c.finite(c.number(expr))
}

/**
 * A HogQL filter's condition (parseHogqlCondition) as a WHERE term: 1 where hogqlHolds, else 0. `prefix` as
 * above; the same node may be compiled in several places of a query with the same prefix, its aliases then
 * defined alike.
 */
export function hogqlConditionSql(node: HogqlNode, property: PropertySql, prefix: string, field?: FieldSql): string {
  if (node.type === 'null') return '0'
  return `ifNull(${new Compiler(prefix, property, field).number(node)} != 0, 0)`
}

/** An expression's value (a query's column, hogql-query.ts): Nullable(Float64) or Nullable(String), as evaluateHogql's. */
export function hogqlValueSql(node: HogqlNode, property: PropertySql, prefix: string, field: FieldSql): string {
  if (node.type === 'null') return NULL_TEXT
  const c = new Compiler(prefix, property, field)
  return node.type === 'number' ? c.number(node) : c.text(node)
}
