/**
 * An experiment source's `math: 'hogql'` (`math_hogql`), the part of HogQL skylark computes: PostHog's
 * `extract_aggregation_and_inner_expr` splits the text into an aggregation (`sum`, `avg`, `min`, `max`, `count`;
 * none: sum) and the expression inside it, evaluated on each event; each entity's value is then
 * `coalesce(agg(toFloat(expr)), 0)` (`count(expr)` counts the events whose value is not null).
 *
 * The expression: numbers, 'strings', true/false/null, `properties.<key>` (also `properties.$key`,
 * properties.`any key`, properties."any key", properties['any key']), + - * /, unary minus, comparisons
 * (= == != <> < <= > >=), and/or/not, parentheses, and toFloat, coalesce, ifNull, if, abs, floor, ceil, isNull,
 * isNotNull. Every node has a static type, number or text, as ClickHouse types it, so that the evaluation here
 * (the SQLite store, experiment-rows.ts) and the SQL of clickhouse-hogql.ts convert the same operands: a
 * property is text, and text read as a number is toFloat's (null unless a finite number). Nulls propagate as
 * ClickHouse's do; and/or/not are three-valued (Kleene), as current ClickHouse has them. Where PostHog would
 * fail (arithmetic on a property that is text), skylark reads the text as a number instead.
 *
 * Anything else (other functions, other fields, other aggregations such as quantile or uniq) is refused by
 * name: HogqlMathError, a 400 where the metric is read.
 */
import { compareText } from './experiment-aggregate.js'

export type HogqlType = 'number' | 'text' | 'null'
export type HogqlFunction = 'toFloat' | 'coalesce' | 'ifNull' | 'if' | 'abs' | 'floor' | 'ceil' | 'isNull' | 'isNotNull'
export type HogqlNode = { type: HogqlType } & (
  | { op: 'number'; value: number }
  | { op: 'text'; value: string }
  | { op: 'null' }
  | { op: 'property'; key: string }
  | { op: '+' | '-' | '*' | '/'; args: [HogqlNode, HogqlNode] }
  | { op: 'negate' | 'not'; args: [HogqlNode] }
  | { op: '=' | '!=' | '<' | '<=' | '>' | '>='; args: [HogqlNode, HogqlNode] }
  | { op: 'and' | 'or'; args: HogqlNode[] }
  | { op: 'call'; fn: HogqlFunction; args: HogqlNode[] }
)
export type HogqlAggregation = 'sum' | 'avg' | 'min' | 'max' | 'count'
export interface HogqlMath {
  aggregation: HogqlAggregation
  expr: HogqlNode
}
export type HogqlValue = number | string | null

export class HogqlMathError extends Error {
  override name = 'HogqlMathError'
}

const AGGREGATIONS = new Set<string>(['sum', 'avg', 'min', 'max', 'count'])
/** HogQL's other aggregations, named in the refusal rather than read as unknown functions. */
const OTHER_AGGREGATIONS = /^(median|quantiles?|uniq\w*|any\w*|stddev\w*|var\w*|grouparray|groupuniqarray|topk|argm(in|ax)|(sum|count|avg|min|max)if)$/i
/** [name, fewest arguments, most arguments]. */
const FUNCTIONS: ReadonlyArray<readonly [HogqlFunction, number, number]> = [
  ['toFloat', 1, 1],
  ['coalesce', 1, 64],
  ['ifNull', 2, 2],
  ['if', 3, 3],
  ['abs', 1, 1],
  ['floor', 1, 1],
  ['ceil', 1, 1],
  ['isNull', 1, 1],
  ['isNotNull', 1, 1],
]
const FUNCTION_BY_NAME = new Map(FUNCTIONS.map((f) => [f[0].toLowerCase(), f]))
const MAX_DEPTH = 64
const MAX_LENGTH = 10_000
const tooDeep = () => new HogqlMathError(`The expression nests deeper than ${MAX_DEPTH} levels.`)

type Token = { kind: 'number'; value: number } | { kind: 'text'; value: string } | { kind: 'name'; value: string; quoted: boolean } | { kind: 'punct'; value: string }

const PUNCTUATION = ['==', '!=', '<>', '<=', '>=', '(', ')', ',', '.', '[', ']', '+', '-', '*', '/', '=', '<', '>']
/** Sticky: each matches at `lastIndex` only. */
const NUMBER = /(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?/y
const NAME = /[A-Za-z_$][A-Za-z0-9_$]*/y

function match(re: RegExp, text: string, at: number): string | null {
  re.lastIndex = at
  return re.exec(text)?.[0] ?? null
}

function tokenize(text: string): Token[] {
  const tokens: Token[] = []
  let i = 0
  while (i < text.length) {
    const c = text[i]
    if (/\s/.test(c)) {
      i++
      continue
    }
    const number = match(NUMBER, text, i)
    if (number !== null) {
      tokens.push({ kind: 'number', value: Number(number) })
      i += number.length
      continue
    }
    const name = match(NAME, text, i)
    if (name !== null) {
      tokens.push({ kind: 'name', value: name, quoted: false })
      i += name.length
      continue
    }
    if (c === "'" || c === '`' || c === '"') {
      const [value, end] = quoted(text, i)
      tokens.push(c === "'" ? { kind: 'text', value } : { kind: 'name', value, quoted: true })
      i = end
      continue
    }
    const punct = PUNCTUATION.find((p) => text.startsWith(p, i))
    if (!punct) throw new HogqlMathError(`Unexpected character ${JSON.stringify(c)} at position ${i}.`)
    tokens.push({ kind: 'punct', value: punct })
    i += punct.length
  }
  return tokens
}

const ESCAPES: Record<string, string> = { n: '\n', t: '\t', r: '\r', '0': '\0', b: '\b', f: '\f' }

/** A quoted string or identifier from `start` (its quote): backslash escapes, and a doubled quote is one. */
function quoted(text: string, start: number): [string, number] {
  const q = text[start]
  let out = ''
  for (let i = start + 1; i < text.length; i++) {
    const c = text[i]
    if (c === '\\' && i + 1 < text.length) {
      out += ESCAPES[text[++i]] ?? text[i]
    } else if (c === q) {
      if (text[i + 1] !== q) return [out, i + 1]
      out += q
      i++
    } else out += c
  }
  throw new HogqlMathError(`Unterminated ${q === "'" ? 'string' : 'identifier'} at position ${start}.`)
}

/** The type of a choice among operands (coalesce, if): text when every one that is not null is. */
function unify(nodes: readonly HogqlNode[]): HogqlType {
  const types = nodes.map((n) => n.type).filter((t) => t !== 'null')
  if (types.length === 0) return 'null'
  return types.every((t) => t === 'text') ? 'text' : 'number'
}

class Parser {
  #i = 0
  #depth = 0
  constructor(readonly tokens: Token[]) {}

  #peek(): Token | undefined {
    return this.tokens[this.#i]
  }

  #isPunct(value: string): boolean {
    const t = this.#peek()
    return t?.kind === 'punct' && t.value === value
  }

  #isWord(word: string): boolean {
    const t = this.#peek()
    return t?.kind === 'name' && !t.quoted && t.value.toLowerCase() === word
  }

  #expect(value: string): void {
    if (!this.#isPunct(value)) throw new HogqlMathError(`Expected "${value}" ${this.#where()}.`)
    this.#i++
  }

  #where(): string {
    const t = this.#peek()
    return t === undefined ? 'at the end' : `before ${JSON.stringify(t.value)}`
  }

  done(): void {
    if (this.#peek() !== undefined) throw new HogqlMathError(`Unexpected ${JSON.stringify(this.#peek()!.value)} after the expression.`)
  }

  expr(): HogqlNode {
    if (++this.#depth > MAX_DEPTH) throw tooDeep()
    const node = this.#logical('or', () => this.#logical('and', () => this.#not()))
    this.#depth--
    return node
  }

  #logical(word: 'and' | 'or', next: () => HogqlNode): HogqlNode {
    const args = [next()]
    while (this.#isWord(word)) {
      this.#i++
      args.push(next())
    }
    return args.length === 1 ? args[0] : { op: word, type: 'number', args }
  }

  #not(): HogqlNode {
    if (!this.#isWord('not')) return this.#comparison()
    this.#i++
    return { op: 'not', type: 'number', args: [this.#nested(() => this.#not())] }
  }

  #comparison(): HogqlNode {
    const left = this.#additive()
    const t = this.#peek()
    if (t?.kind !== 'punct' || !['=', '==', '!=', '<>', '<', '<=', '>', '>='].includes(t.value)) return left
    this.#i++
    const op = t.value === '==' ? '=' : t.value === '<>' ? '!=' : (t.value as '=' | '!=' | '<' | '<=' | '>' | '>=')
    return { op, type: 'number', args: [left, this.#additive()] }
  }

  #additive(): HogqlNode {
    return this.#arithmetic(['+', '-'], () => this.#arithmetic(['*', '/'], () => this.#unary()))
  }

  /** Left-associative operators of one precedence; each one nests the chain a level deeper. */
  #arithmetic(ops: ReadonlyArray<'+' | '-' | '*' | '/'>, next: () => HogqlNode): HogqlNode {
    let node = next()
    let levels = 0
    for (let op = ops.find((o) => this.#isPunct(o)); op !== undefined; op = ops.find((o) => this.#isPunct(o))) {
      if (this.#depth + ++levels > MAX_DEPTH) throw tooDeep()
      this.#i++
      node = { op, type: 'number', args: [node, next()] }
    }
    return node
  }

  #unary(): HogqlNode {
    if (!this.#isPunct('-')) return this.#primary()
    this.#i++
    return { op: 'negate', type: 'number', args: [this.#nested(() => this.#unary())] }
  }

  /** Recursion that does not pass through expr() counts toward the depth too. */
  #nested(read: () => HogqlNode): HogqlNode {
    if (++this.#depth > MAX_DEPTH) throw tooDeep()
    const node = read()
    this.#depth--
    return node
  }

  #primary(): HogqlNode {
    const t = this.#peek()
    if (t === undefined) throw new HogqlMathError('The expression ends too early.')
    this.#i++
    if (t.kind === 'number') return { op: 'number', type: 'number', value: t.value }
    if (t.kind === 'text') return { op: 'text', type: 'text', value: t.value }
    if (t.kind === 'punct') {
      if (t.value !== '(') throw new HogqlMathError(`Unexpected "${t.value}".`)
      const node = this.expr()
      this.#expect(')')
      return node
    }
    const word = t.value.toLowerCase()
    if (!t.quoted && (word === 'true' || word === 'false')) return { op: 'number', type: 'number', value: word === 'true' ? 1 : 0 }
    if (!t.quoted && word === 'null') return { op: 'null', type: 'null' }
    if (this.#isPunct('(')) return this.#call(t.value)
    if (word === 'properties' && !t.quoted) return this.#property()
    throw new HogqlMathError(`Unknown field "${t.value}": skylark reads event properties (properties.<key>) in HogQL math.`)
  }

  #property(): HogqlNode {
    let key: string
    if (this.#isPunct('.')) {
      this.#i++
      const t = this.#peek()
      if (t?.kind !== 'name') throw new HogqlMathError(`Expected a property name after "properties." ${this.#where()}.`)
      key = t.value
      this.#i++
    } else if (this.#isPunct('[')) {
      this.#i++
      const t = this.#peek()
      if (t?.kind !== 'text') throw new HogqlMathError("Expected a 'string' key in properties[...].")
      key = t.value
      this.#i++
      this.#expect(']')
    } else throw new HogqlMathError('"properties" must name a property: properties.<key>.')
    if (this.#isPunct('.') || this.#isPunct('[')) throw new HogqlMathError(`Nested property access (in properties.${key}) is not supported in HogQL math here.`)
    return { op: 'property', type: 'text', key }
  }

  #call(name: string): HogqlNode {
    const spec = FUNCTION_BY_NAME.get(name.toLowerCase())
    if (!spec) {
      if (AGGREGATIONS.has(name.toLowerCase()) || OTHER_AGGREGATIONS.test(name)) throw new HogqlMathError(`The aggregation ${name}() can only be the outermost call.`)
      throw new HogqlMathError(`Unknown function ${name}(): HogQL math here takes ${FUNCTIONS.map((f) => f[0]).join(', ')}.`)
    }
    const [fn, fewest, most] = spec
    const args = this.#arguments()
    if (args.length < fewest || args.length > most) {
      throw new HogqlMathError(`${fn}() takes ${fewest === most ? fewest : `${fewest} to ${most}`} argument${most === 1 ? '' : 's'}, got ${args.length}.`)
    }
    const type: HogqlType = fn === 'coalesce' || fn === 'ifNull' ? unify(args) : fn === 'if' ? unify(args.slice(1)) : 'number'
    return { op: 'call', fn, type, args }
  }

  #arguments(): HogqlNode[] {
    this.#expect('(')
    const args: HogqlNode[] = []
    if (this.#isPunct(')')) {
      this.#i++
      return args
    }
    for (;;) {
      args.push(this.expr())
      if (this.#isPunct(')')) {
        this.#i++
        return args
      }
      this.#expect(',')
    }
  }

  /** The outermost aggregation, if the whole text is one call of it (`extract_aggregation_and_inner_expr`). */
  aggregation(): { name: string; args: HogqlNode[] } | null {
    const [first, second, third] = this.tokens
    if (first?.kind !== 'name' || first.quoted || second?.kind !== 'punct' || second.value !== '(') return null
    const name = first.value.toLowerCase()
    if (!AGGREGATIONS.has(name) && !OTHER_AGGREGATIONS.test(first.value)) return null
    if (!AGGREGATIONS.has(name)) throw new HogqlMathError(`The aggregation ${first.value}() is not supported in HogQL math here; sum, avg, min, max and count are.`)
    if (third?.kind === 'name' && !third.quoted && third.value.toLowerCase() === 'distinct') throw new HogqlMathError(`${first.value}(distinct ...) is not supported in HogQL math here.`)
    this.#i = 1
    const args = this.#arguments()
    // `sum(x) + 1` is no aggregation call: PostHog reads it as a per-event expression, which ClickHouse refuses.
    if (this.#peek() !== undefined) throw new HogqlMathError(`The aggregation ${first.value}() must be the whole expression.`)
    return { name, args }
  }
}

/** Reads a `math_hogql` text, or throws HogqlMathError saying what it can't read. */
export function parseHogqlMath(text: string): HogqlMath {
  if (text.length > MAX_LENGTH) throw new HogqlMathError(`math_hogql is longer than ${MAX_LENGTH} characters.`)
  const parser = new Parser(tokenize(text))
  if (parser.tokens.length === 0) throw new HogqlMathError('math_hogql is empty.')
  const call = parser.aggregation()
  if (call === null) {
    const expr = parser.expr()
    parser.done()
    return { aggregation: 'sum', expr }
  }
  if (call.args.length > 1) throw new HogqlMathError(`${call.name}() takes one argument here, got ${call.args.length}.`)
  const expr = call.args[0] ?? { op: 'number', type: 'number', value: 1 }
  if (call.args.length === 0 && call.name !== 'count') throw new HogqlMathError(`${call.name}() needs an argument.`)
  return { aggregation: call.name as HogqlAggregation, expr }
}

/** The event properties an expression reads, in order of appearance. */
export function hogqlProperties(node: HogqlNode): string[] {
  if (node.op === 'property') return [node.key]
  if ('args' in node) return [...new Set(node.args.flatMap(hogqlProperties))]
  return []
}

/** HogQL's toFloat of a value: a number as it is, a text's finite number, else null. */
export function hogqlToFloat(value: HogqlValue): number | null {
  if (value === null) return null
  if (typeof value === 'number') return value
  if (value.trim() === '') return null
  const n = Number(value)
  return Number.isFinite(n) ? n : null
}

/** A value as a number where the node's type is text (toFloat's), else as it is. */
function asNumber(node: HogqlNode, value: HogqlValue): number | null {
  return node.type === 'text' ? hogqlToFloat(value) : (value as number | null)
}

/** Kleene's and/or over numbers (null: unknown), 1 or 0. */
function logical(op: 'and' | 'or', values: ReadonlyArray<number | null>): number | null {
  const decisive = op === 'and' ? (v: number) => v === 0 : (v: number) => v !== 0
  if (values.some((v) => v !== null && decisive(v))) return op === 'and' ? 0 : 1
  if (values.some((v) => v === null)) return null
  return op === 'and' ? 1 : 0
}

function compare(op: '=' | '!=' | '<' | '<=' | '>' | '>=', c: number): number {
  const holds = op === '=' ? c === 0 : op === '!=' ? c !== 0 : op === '<' ? c < 0 : op === '<=' ? c <= 0 : op === '>' ? c > 0 : c >= 0
  return holds ? 1 : 0
}

/** Evaluates an expression on one event, `property` giving a property's text (null: missing or null). */
export function evaluateHogql(node: HogqlNode, property: (key: string) => string | null): HogqlValue {
  const value = (n: HogqlNode) => evaluateHogql(n, property)
  const number = (n: HogqlNode) => asNumber(n, value(n))
  switch (node.op) {
    case 'number':
    case 'text':
      return node.value
    case 'null':
      return null
    case 'property':
      return property(node.key)
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
        return a === null || b === null ? null : compare(node.op, a < b ? -1 : a > b ? 1 : a === b ? 0 : Number.NaN)
      }
      const a = value(l)
      const b = value(r)
      return a === null || b === null ? null : compare(node.op, compareText(a as string, b as string))
    }
    case 'call':
      return call(node, value)
  }
}

function call(node: HogqlNode & { op: 'call' }, value: (n: HogqlNode) => HogqlValue): HogqlValue {
  const args = node.args
  // An operand of a choice whose type is number is read as one (ClickHouse's common type).
  const chosen = (n: HogqlNode) => (node.type === 'number' ? asNumber(n, value(n)) : value(n))
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
    case 'isNull':
    case 'isNotNull':
      return (value(args[0]) === null) === (node.fn === 'isNull') ? 1 : 0
    default: {
      // toFloat, abs, floor, ceil: a text operand is read as toFloat reads it.
      const a = asNumber(args[0], value(args[0]))
      if (a === null || node.fn === 'toFloat') return a
      return node.fn === 'abs' ? Math.abs(a) : node.fn === 'floor' ? Math.floor(a) : Math.ceil(a)
    }
  }
}

/**
 * What one event adds to its entity's aggregate: `count` counts a value that is not null, the others take
 * toFloat of it; null adds nothing.
 */
export function hogqlContribution(math: HogqlMath, value: HogqlValue): number | null {
  if (math.aggregation === 'count') return value === null ? null : 1
  const n = hogqlToFloat(value)
  return n !== null && Number.isFinite(n) ? n : null
}
