/**
 * The parser of HogQL's expressions (hogql-math.ts says which HogQL; hogql-read.ts reads texts with it): recursive descent
 * over hogql-tokens.ts's tokens giving every node its static type, with nesting bounded so that no text can exhaust
 * the stack here, in the evaluation or in ClickHouse's parser. What it can't read is a HogqlMathError naming it.
 */
import { propertyNode, type HogqlField, type HogqlNode, type PropertyPath } from './hogql-math.js'
import { AGGREGATIONS, betweenNode, caseNode, equalsAny, FUNCTION_BY_NAME, FUNCTIONS, likeNode, MAX_DEPTH, MAX_IN_TERMS, notReadIn, OTHER_AGGREGATIONS, queriesOnly, regexOperator, SUGAR, sugarCall, tooDeep, typedCall, unreadAggregation, type HogqlFunction } from './hogql-functions.js'
import { arrayLiteral, LAMBDA_FUNCTIONS, lambdaCall, lambdaItem, refuseLooseArrays } from './hogql-arrays.js'
import { DATETIME_FUNCTIONS, datetimeCall, intervalAt, isDatetimeFunction, shiftedDatetime } from './hogql-datetime.js'
import { isDatetime, isInterval } from './hogql-time-marks.js'
import { aggregationParameters, type AggregationParameters } from './hogql-array-aggregations.js'
import type { QueryClock } from './hogql-clock.js'
import { hasProperties, MATH_FIELDS, queryField, sourceField } from './hogql-tables.js'
import { holderAt } from './hogql-lookups.js'
import { closingAt, FILTERS_MARK, HogqlMathError, isPunct, isWord, lambdaAt, pathAt, whereAt, type Token } from './hogql-tokens.js'

/** What the text is, in refusals: `math_hogql`, a filter's key, or a HogQLQuery's part. */
type Use = 'HogQL math' | 'HogQL filters' | 'HogQL queries'

/** An aggregation call as read: its name (count(distinct …) as uniq), arguments and parameters (a quantile's level …). */
type AggregationCall = { name: string; args: HogqlNode[] } & AggregationParameters

/**
 * What a query's HAVING reads beyond an expression of events (hogql-query.ts): its columns by alias, and
 * aggregations anywhere in it, each read as a column (a node that stands for it).
 */
export interface QueryScope {
  alias(name: string): HogqlNode | null
  aggregate(call: AggregationCall): HogqlNode
}

export class Parser {
  #i = 0
  #depth = 0
  /** The variables of the lambdas the text is within, by name (an inner one's hiding an outer's). */
  #items = new Map<string, HogqlNode>()
  constructor(
    readonly tokens: Token[],
    readonly use: Use,
    /** A query's now() (ms) and its project's time zone, which reads its dates and times. */
    readonly clock: QueryClock = { now: 0, zone: 'UTC' },
    /** HAVING's; none within an aggregation's arguments. */
    private scope: QueryScope | null = null,
  ) {}

  #peek = (): Token | undefined => this.tokens[this.#i]
  /** Whether the token `ahead` of the current one is this punctuation. */
  #isPunct = (value: string, ahead = 0): boolean => isPunct(this.tokens[this.#i + ahead], value)

  #expect(value: string): void {
    if (!this.#isPunct(value)) throw new HogqlMathError(`Expected "${value}" ${whereAt(this.tokens, this.#i)}.`)
    this.#i++
  }

  /** Past the keyword `word`, which must come next. */
  #word(word: string): void {
    if (!isWord(this.#peek(), word)) throw new HogqlMathError(`Expected ${word.toUpperCase()} ${whereAt(this.tokens, this.#i)}.`)
    this.#i++
  }

  /** `CASE [x] WHEN c THEN r … ELSE e END` (caseNode). */
  #case(): HogqlNode {
    const subject = ['when', 'else', 'end'].some((w) => isWord(this.#peek(), w)) ? null : this.expr()
    const pairs: HogqlNode[] = []
    while (isWord(this.#peek(), 'when') && ++this.#i > 0) {
      pairs.push(this.expr())
      this.#word('then')
      pairs.push(this.expr())
    }
    const otherwise = isWord(this.#peek(), 'else') && ++this.#i > 0 ? this.expr() : null
    this.#word('end')
    return caseNode(subject, pairs, otherwise, this.#depth)
  }

  /** The whole text as one expression, of no array (refuseLooseArrays). */
  whole(): HogqlNode {
    const expr = this.expr()
    if (this.#peek() !== undefined) throw new HogqlMathError(`Unexpected ${JSON.stringify(this.#peek()!.value)} after the expression.`)
    refuseLooseArrays(expr)
    return expr
  }

  expr(): HogqlNode {
    return this.#nested(() => this.#ternary())
  }

  /** `c ? a : b`, which PostHog's parser reads as if(c, a, b): below OR, the else read right to left. */
  #ternary(): HogqlNode {
    const condition = this.#logical('or', () => this.#logical('and', () => this.#not()))
    if (!this.#isPunct('?')) return condition
    this.#i++
    const then = this.expr()
    this.#expect(':')
    return typedCall(FUNCTION_BY_NAME.get('if')!, [condition, then, this.expr()])
  }

  #logical(word: 'and' | 'or', next: () => HogqlNode): HogqlNode {
    const args = [next()]
    while (isWord(this.#peek(), word)) {
      this.#i++
      args.push(next())
    }
    return args.length === 1 ? args[0] : { op: word, type: 'number', args }
  }

  #not(): HogqlNode {
    if (!isWord(this.#peek(), 'not')) return this.#nullish()
    this.#i++
    return { op: 'not', type: 'number', args: [this.#nested(() => this.#not())] }
  }

  /** `a ?? b`, which PostHog's parser reads as ifNull(a, b): between NOT and the comparisons, left to right. */
  #nullish(): HogqlNode {
    let node = this.#comparison()
    for (let levels = 1; this.#isPunct('??'); levels++) {
      if (this.#depth + levels > MAX_DEPTH) throw tooDeep()
      this.#i++
      node = typedCall(FUNCTION_BY_NAME.get('ifnull')!, [node, this.#comparison()])
    }
    return node
  }

  #comparison(): HogqlNode {
    const left = this.#additive()
    const t = this.#peek()
    if (t?.kind === 'name' && !t.quoted) return this.#wordComparison(left)
    if (t?.kind !== 'punct' || !['=', '==', '!=', '<>', '<', '<=', '>', '>=', '=~', '=~*', '!~', '!~*'].includes(t.value)) return left
    this.#i++
    if (t.value.includes('~')) return regexOperator(t.value, left, this.#additive(), this.use, this.clock.regex)
    const op = t.value === '==' ? '=' : t.value === '<>' ? '!=' : (t.value as '=' | '!=' | '<' | '<=' | '>' | '>=')
    return { op, type: 'number', args: [left, this.#additive()] }
  }

  /** `[not] like|ilike <text>`, `[not] in (<list>)` and `is [not] null` (isNull, isNotNull), or `left` alone when no such word follows. */
  #wordComparison(left: HogqlNode): HogqlNode {
    if (isWord(this.#peek(), 'is')) {
      this.#i++
      const not = isWord(this.#peek(), 'not') && ++this.#i > 0
      if (!isWord(this.#peek(), 'null')) throw new HogqlMathError(`Expected NULL after IS${not ? ' NOT' : ''} ${whereAt(this.tokens, this.#i)}.`)
      this.#i++
      return typedCall(FUNCTION_BY_NAME.get(not ? 'isnotnull' : 'isnull')!, [left])
    }
    const at = this.#i
    const negated = isWord(this.#peek(), 'not') && ++this.#i > 0
    const word = ['like', 'ilike', 'in', 'between'].find((w) => isWord(this.#peek(), w))
    if (word === undefined) {
      this.#i = at
      return left
    }
    this.#i++
    if (word === 'between') {
      const low = this.#additive()
      this.#word('and')
      return betweenNode(left, low, this.#additive(), negated)
    }
    const node = word === 'in' ? this.#in(left) : likeNode(word as 'like' | 'ilike', left, this.#additive())
    return negated ? { op: 'not', type: 'number', args: [node] } : node
  }

  /**
   * `x in (a, b)` (or `[a, b]`) as `x = a or x = b`: a text list compares texts, a number in it numbers. In a query,
   * PostHog's `person_id IN COHORT <id or 'name'>`: the query's hook gives the node the cohort's members fill.
   */
  #in(left: HogqlNode): HogqlNode {
    if (isWord(this.#peek(), 'cohort') && this.clock.lookup !== undefined) {
      const cohort = this.tokens[++this.#i]
      if (left.op !== 'field' || left.field !== 'person_id' || (cohort?.kind !== 'number' && cohort?.kind !== 'text')) throw new HogqlMathError("IN COHORT reads person_id and a cohort's id or name here, as in person_id IN COHORT 5.")
      return this.clock.lookup({ holder: 'cohort', cohort: this.tokens[this.#i++].value })
    }
    const close = this.#isPunct('[') ? ']' : ')'
    if (!this.#isPunct('(') && !this.#isPunct('[')) throw new HogqlMathError(`Expected a list after IN ${whereAt(this.tokens, this.#i)}.`)
    this.#i++
    // `x IN (SELECT …)`: the query's hook plans the subquery and gives the node its values will fill.
    if (close === ')' && this.#atSubquery()) return this.#subquery(left)
    const items: HogqlNode[] = []
    for (;;) {
      items.push(this.#additive())
      if (this.#isPunct(close)) break
      if (!this.#isPunct(',')) throw new HogqlMathError(`Expected "," or "${close}" in the IN list ${whereAt(this.tokens, this.#i)}.`)
      this.#i++
    }
    this.#i++
    // The list nests two levels: its `or`, and an `=` in it.
    if (this.#depth + 2 > MAX_DEPTH) throw tooDeep()
    return equalsAny(left, items, `The IN list is too long here: at most ${MAX_IN_TERMS} items (fewer for a left side that is no property).`)
  }

  /** Whether a subquery's SELECT (or WITH) comes next, where the query plans subqueries. */
  #atSubquery(): boolean {
    return this.clock.inQuery !== undefined && (isWord(this.#peek(), 'select') || isWord(this.#peek(), 'with'))
  }

  /** The subquery after the `(` just read, of IN (`left`) or a value, planned by the query's hook (hogql-in.ts). */
  #subquery(left: HogqlNode | null): HogqlNode {
    const end = closingAt(this.tokens, this.#i - 1)
    if (end < 0) throw new HogqlMathError(`The subquery is not closed ${whereAt(this.tokens, this.#i)}.`)
    const node = this.clock.inQuery!(this.tokens.slice(this.#i, end), left, this.clock)
    this.#i = end + 1
    return node
  }

  #additive(): HogqlNode {
    // `a || b` is concat(a, b), of +'s precedence, as PostHog's grammar reads it.
    return this.#arithmetic(['+', '-', '||'], () => this.#arithmetic(['*', '/', '%'], () => this.#unary()))
  }

  /** Left-associative operators of one precedence; each one nests the chain a level deeper. `a % b` is modulo(a, b). */
  #arithmetic(ops: ReadonlyArray<'+' | '-' | '||' | '*' | '/' | '%'>, next: () => HogqlNode): HogqlNode {
    let node = next()
    let levels = 0
    for (let op = ops.find((o) => this.#isPunct(o)); op !== undefined; op = ops.find((o) => this.#isPunct(o))) {
      if (this.#depth + ++levels > MAX_DEPTH) throw tooDeep()
      this.#i++
      const left = node
      const right = next()
      if (op === '||') node = typedCall(FUNCTION_BY_NAME.get('concat')!, [left, right])
      else if (op === '%') node = { op: 'call', fn: 'modulo', type: 'number', args: [left, right] }
      else if ((op === '+' || op === '-') && isDatetime(left) && isInterval(right)) node = shiftedDatetime({ op, type: 'number', args: [left, right] }, this.clock)
      else node = { op, type: 'number', args: [left, right] }
    }
    return node
  }

  #unary(): HogqlNode {
    if (!this.#isPunct('-')) {
      let node = this.#primary()
      // `arr[i]`: arrayElement(arr, i) (hogql-arrays.ts).
      while (this.#isPunct('[')) node = typedCall(FUNCTION_BY_NAME.get('arrayelement')!, [node, ...this.#arguments('[', ']')])
      return node
    }
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
    // `events.event`, `e.event`, `s.n`: a field after its table's name or alias, or the subquery's alias.
    for (let q = this.#peek(); q?.kind === 'name' && this.clock.qualifiers?.includes(q.value) && this.#isPunct('.', 1) && this.tokens[this.#i + 2]?.kind === 'name'; q = this.#peek()) this.#i += 2
    const t = this.#peek()
    if (t === undefined) throw new HogqlMathError('The expression ends too early.')
    this.#i++
    if (t.kind === 'number') return { op: 'number', type: 'number', value: t.value }
    if (t.kind === 'text') return { op: 'text', type: 'text', value: t.value }
    if (t.kind === 'punct') {
      if (t.value === FILTERS_MARK && this.clock.readFilters !== undefined) return this.clock.readFilters(this.clock)
      // `[a, b]`: an array literal (hogql-arrays.ts), its `[` stepped back to and read as the list's.
      if (t.value === '[' && this.#i-- > 0) return arrayLiteral(this.#arguments('[', ']'))
      if (t.value !== '(') throw new HogqlMathError(`Unexpected "${t.value}".`)
      if (this.#atSubquery()) return this.#subquery(null)
      const node = this.expr()
      this.#expect(')')
      return node
    }
    const word = t.value.toLowerCase()
    if (!t.quoted && (word === 'true' || word === 'false')) return { op: 'number', type: 'number', value: word === 'true' ? 1 : 0 }
    if (!t.quoted && word === 'null') return { op: 'null', type: 'null' }
    if (this.#isPunct('(')) return this.#call(t.value)
    if (!t.quoted && this.#items.has(t.value)) return this.#items.get(t.value)!
    if (!t.quoted && word === 'case') return this.#nested(() => this.#case())
    const aliased = this.scope?.alias(t.value)
    if (aliased) return aliased
    const column = !(word === 'interval' && !t.quoted && this.#peek()?.kind === 'number')
    if (this.clock.joined !== undefined && column) {
      // A name of a join's tables, read by its hook from the name on.
      const { node, end } = this.clock.joined(this.tokens, this.#i - 1)
      this.#i = end
      return node
    }
    if (this.clock.source !== undefined && column) return sourceField(this.clock.source, t.value)
    const table = this.clock.table ?? 'events'
    if (word === 'properties' && !t.quoted && hasProperties(table)) {
      // A query reads the whole object too, as its JSON text (PostHog's `properties` column).
      if (this.use === 'HogQL queries' && !this.#isPunct('.') && !this.#isPunct('[')) return { op: 'field', type: 'text', field: 'properties' }
      return propertyNode(this.#path())
    }
    // `person.properties.<key>`, and in queries what the event's person and groups have now (hogql-lookups.ts).
    const group = /^group_[0-4]$/.test(word) && table === 'events' && this.clock.lookup !== undefined
    if ((word === 'person' || group) && !t.quoted && this.#isPunct('.') && hasProperties(table)) {
      if (this.use === 'HogQL queries' && table !== 'events') throw new HogqlMathError(`A query of ${table} reads each ${table.slice(0, -1)}'s own properties as properties.<key>.`)
      const { node, end } = holderAt(this.tokens, this.#i - 1, this.use, this.clock.lookup)
      this.#i = end
      return node
    }
    if (this.use !== 'HogQL queries') {
      if (MATH_FIELDS.has(t.value)) return { op: 'field', type: 'text', field: t.value as HogqlField }
      throw new HogqlMathError(`Unknown field "${t.value}": skylark reads event properties (properties.<key>), person properties (person.properties.<key>), event and distinct_id in ${this.use}.`)
    }
    // `interval 7 day`, its number and unit the next two tokens.
    if (word === 'interval' && !t.quoted) return intervalAt(this.tokens, (this.#i += 2) - 2)
    return queryField(t.value, table)
  }

  /** After `properties` (of whichever): its path (pathAt). */
  #path(): PropertyPath {
    const { path, end } = pathAt(this.tokens, this.#i)
    this.#i = end
    return path
  }

  #call(name: string): HogqlNode {
    if (this.use === 'HogQL queries' && isDatetimeFunction(name)) return datetimeCall(name, this.#arguments(), this.clock)
    // PostHog's in(x, list) and notIn(x, list) are x [NOT] IN list, its list (or subquery) read as IN's.
    const lower = name.toLowerCase()
    if (lower === 'in' || lower === 'notin') {
      this.#expect('(')
      const left = this.expr()
      this.#expect(',')
      const test = this.#in(left)
      this.#expect(')')
      return lower === 'in' ? test : { op: 'not', type: 'number', args: [test] }
    }
    const sugar = SUGAR.find((s) => s.toLowerCase() === name.toLowerCase())
    if (sugar !== undefined) return sugarCall(sugar, this.#arguments(), this.#depth)
    const spec = FUNCTION_BY_NAME.get(name.toLowerCase())
    const unread = spec && notReadIn(spec[0], this.use)
    if (unread) throw new HogqlMathError(unread)
    if (spec && LAMBDA_FUNCTIONS.has(spec[0])) return this.#lambdaCall(spec[0])
    if (!spec) {
      if (this.scope !== null && (AGGREGATIONS.has(name.toLowerCase()) || OTHER_AGGREGATIONS.test(name))) return this.scope.aggregate(this.#aggregationCall(name))
      if (AGGREGATIONS.has(name.toLowerCase()) || OTHER_AGGREGATIONS.test(name)) {
        if (this.use === 'HogQL queries') throw new HogqlMathError(`The aggregation ${name}() is read here as a whole column of the SELECT (as in SELECT event, count() … GROUP BY event) or within HAVING, not within a column's expression, another aggregation or WHERE.`)
        throw new HogqlMathError(this.use === 'HogQL math' ? `The aggregation ${name}() can only be the outermost call.` : `Aggregations such as ${name}() are not allowed in HogQL filters.`)
      }
      const names = [...FUNCTIONS.map((f) => f[0]).filter((fn) => notReadIn(fn, this.use) === null), ...SUGAR, ...(this.use === 'HogQL queries' ? DATETIME_FUNCTIONS : [])]
      throw new HogqlMathError(`Unknown function ${name}(): ${this.use} here take${this.use === 'HogQL math' ? 's' : ''} ${names.join(', ')}.`)
    }
    return typedCall(spec, this.#arguments(), this.clock.regex)
  }

  /** `fn(x -> body, arr)` from its `(`, the array read first to type x (lambdaItem); arraySum's lambda is optional. */
  #lambdaCall(fn: HogqlFunction): HogqlNode {
    const lambda = lambdaAt(this.tokens, ++this.#i)
    if (lambda === null && fn === 'arraySum' && this.#i-- > 0) return typedCall(FUNCTION_BY_NAME.get('arraysum')!, this.#arguments())
    if (lambda === null) throw new HogqlMathError(`${fn}() takes a lambda first here, as in ${fn}(x -> x != '', splitByChar('/', properties.$pathname)).`)
    const arrays: HogqlNode[] = []
    for (this.#i = lambda.end; this.#isPunct(',') && ++this.#i > 0; ) arrays.push(this.expr())
    this.#expect(')')
    const [after, outer, item] = [this.#i, this.#items, lambdaItem(fn, lambda.names, arrays)]
    ;[this.#i, this.#items] = [lambda.body, new Map([...outer, [lambda.names[0], item]])]
    const body = this.expr()
    if (this.#i !== lambda.end) throw new HogqlMathError(`Expected the end of ${fn}()'s lambda ${whereAt(this.tokens, this.#i)}.`)
    ;[this.#i, this.#items] = [after, outer]
    return lambdaCall(fn, arrays[0], item, body)
  }

  #arguments(open = '(', close = ')'): HogqlNode[] {
    this.#expect(open)
    const args: HogqlNode[] = []
    while (!this.#isPunct(close)) {
      if (args.length > 0) this.#expect(',')
      args.push(this.expr())
    }
    this.#i++
    return args
  }

  /** The outermost aggregation when the whole text is one call of it (extract_aggregation_and_inner_expr), with its level. */
  aggregation(): AggregationCall | null {
    const [first, second] = this.tokens
    if (first?.kind !== 'name' || first.quoted || second?.kind !== 'punct' || second.value !== '(') return null
    if (!AGGREGATIONS.has(first.value.toLowerCase()) && !OTHER_AGGREGATIONS.test(first.value)) return null
    this.#i = 1
    const call = this.#aggregationCall(first.value)
    // `sum(x) + 1` is no aggregation call: PostHog reads it as a per-event expression, which ClickHouse refuses.
    if (this.#peek() !== undefined) throw new HogqlMathError(`The aggregation ${first.value}() must be the whole expression.`)
    return call
  }

  /** An aggregation named `written`, read from its `(`; refused by name where this use does not read it. */
  #aggregationCall(written: string): AggregationCall {
    const name = written.toLowerCase()
    if (!AGGREGATIONS.has(name) || (queriesOnly(name) && this.use !== 'HogQL queries')) throw unreadAggregation(written, this.use)
    const { at, ...parameters } = aggregationParameters(name, written, this.tokens, this.#i)
    this.#i = at
    const next = this.tokens[this.#i + 1]
    const distinct = next?.kind === 'name' && !next.quoted && next.value.toLowerCase() === 'distinct'
    if (distinct && name !== 'count' && !name.startsWith('uniq')) throw new HogqlMathError(`${written}(distinct ...) is not supported in ${this.use} here; count(distinct ...) is.`)
    // HAVING's scope is not read within the arguments: aggregations do not nest.
    const scope = this.scope
    this.scope = null
    let args: HogqlNode[]
    if (distinct) {
      this.#i += 2
      args = [this.expr()]
      this.#expect(')')
    } else if (name === 'count' && this.#isPunct('*', 1) && this.#isPunct(')', 2)) {
      this.#i += 3 // count(*) is count()
      args = []
    } else args = this.#arguments()
    this.scope = scope
    return { name: distinct ? 'uniq' : name, args, ...parameters }
  }
}
