/**
 * JOINs of a HogQL query (`FROM events e LEFT JOIN persons p ON e.person_id = p.id`), read as ClickHouse reads
 * them: INNER (the default), LEFT, RIGHT and FULL [OUTER] JOIN on equalities of one side's expression with the
 * other's, and CROSS JOIN, of up to four tables, subqueries or queries WITH names. Each table is a query of its own
 * (a side), whose columns are what the query around reads of it: each name the parser meets goes through the
 * reader's hook (QueryClock's `joined`), which finds its table (by the name or alias before it, or as the one table
 * that has the field) and gives the joined row's column (`sub_<i>`, as a subquery's). A condition of WHERE that
 * reads one side only, and that side keeps all its rows (not the outer side of a LEFT, RIGHT or FULL JOIN), moves
 * into that side's query, so its time bounds narrow what the store reads. The caller runs each side on its store,
 * then joinRows joins them in Node and the query runs over the joined rows, so both stores join alike and a table of
 * persons.db joins the events of ClickHouse. A row without a match (LEFT, RIGHT, FULL) takes each column's type's
 * default, as ClickHouse's join_use_nulls = 0 (its default, and PostHog's) fills it: NULL of a Nullable, '' of a
 * String, 0 and 1970-01-01 of numbers and dates, the zero UUID.
 */
import type { QueryClock } from './hogql-clock.js'
import { evaluateHogql, hogqlFields, isSourceRef, type HogqlNode, type HogqlValue } from './hogql-math.js'
import { columnOf, columnRef, expression, readsAlias, type QueryColumn } from './hogql-query-columns.js'
import type { HogqlQueryPlan } from './hogql-query.js'
import { ASTERISK, offers, type QueryTable } from './hogql-tables.js'
import { HogqlMathError, isCall, isPunct, isWord, type Token } from './hogql-tokens.js'
import { answered, keyOf, type AnswerValue } from './hogql-values.js'
import type { RegexEngine } from './sqlite-actions.js'

export type JoinKind = 'inner' | 'left' | 'right' | 'full' | 'cross'

export interface JoinPlan {
  /** Each table's query, its columns those the query reads of it, in FROM's order. */
  sides: HogqlQueryPlan[]
  /** steps[k] joins sides[k + 1] to the rows of those before it, on pairs of expressions [of those, of it]. */
  steps: Array<{ kind: JoinKind; keys: Array<readonly [HogqlNode, HogqlNode]> }>
  /** The joined row's columns (the query's `sub_<i>` fields), and where each side's columns stand in it. */
  columns: QueryColumn[]
  places: number[][]
}

type From = { table: QueryTable; source: HogqlQueryPlan | null; qualifiers: string[] }
/** What hogql-query.ts lends the reader: its reading of one table of FROM, and the plan of a side's SELECT from it. */
export interface JoinHelpers {
  from: (tokens: Token[]) => From
  plan: (tokens: Token[], from: From) => HogqlQueryPlan
}

/** Rows a side may give, and the joined rows at most: each is held in memory while the query runs. */
export const MAX_JOIN_ROWS = 200_000
const MAX_SIDES = 4
const KINDS = new Set(['join', 'inner', 'left', 'right', 'full', 'cross'])
/** The words of a join: the kinds', OUTER, and ClickHouse's others, which kindOf refuses by name. */
const JOIN_WORDS = new Set([...KINDS, 'outer', 'any', 'all', 'semi', 'anti', 'asof', 'global', 'paste', 'array'])
const ON = new Set(['on', 'using'])

const refuse = (detail: string) => new HogqlMathError(detail)
const synthetic = (kind: 'name' | 'punct', value: string): Token => (kind === 'name' ? { kind, value, quoted: false, start: 0, end: 0 } : { kind, value, start: 0, end: 0 })

/** Where each top-level word of `words` stands in the tokens (not after a dot: `properties.left` is a key). */
function wordsAt(tokens: Token[], words: ReadonlySet<string>): number[] {
  const found: number[] = []
  let depth = 0
  tokens.forEach((t, i) => {
    if (isPunct(t, '(') || isPunct(t, '[')) depth++
    else if (isPunct(t, ')') || isPunct(t, ']')) depth--
    else if (depth === 0 && t.kind === 'name' && !t.quoted && words.has(t.value.toLowerCase()) && !isPunct(tokens[i - 1], '.') && !isCall(tokens, i)) found.push(i)
  })
  return found
}

/** Whether FROM's tokens join tables. */
export const joins = (from: Token[]): boolean => wordsAt(from, KINDS).length > 0

/** The kind of a join from its words before JOIN (`LEFT OUTER`), or a refusal. */
function kindOf(words: string[]): JoinKind {
  const text = words.join(' ')
  const kind = ({ '': 'inner', inner: 'inner', left: 'left', 'left outer': 'left', right: 'right', 'right outer': 'right', full: 'full', 'full outer': 'full', cross: 'cross' } as Record<string, JoinKind>)[text]
  if (kind === undefined) throw refuse(`${text.toUpperCase()} JOIN is not read here: joins are [INNER], LEFT, RIGHT or FULL [OUTER] JOIN … ON, or CROSS JOIN.`)
  return kind
}

/**
 * FROM's tables and how each after the first is joined: runs of join words (`LEFT OUTER JOIN`) part the tables, and
 * each table after a join ends at its ON (or USING: `using` holds the names it lists).
 */
function readFrom(from: Token[]): { tables: Token[][]; joined: Array<{ kind: JoinKind; on: Token[] | null; using?: Token[] }> } {
  const runs: Array<[number, number]> = []
  for (const i of wordsAt(from, JOIN_WORDS)) {
    const last = runs[runs.length - 1]
    if (last !== undefined && last[1] === i - 1 && !isWord(from[last[1]], 'join')) last[1] = i
    else runs.push([i, i])
  }
  if (runs.length + 1 > MAX_SIDES) throw refuse(`A query here joins at most ${MAX_SIDES} tables.`)
  const tables: Token[][] = []
  const joined: Array<{ kind: JoinKind; on: Token[] | null; using?: Token[] }> = []
  runs.forEach(([first, last], k) => {
    if (!isWord(from[last], 'join')) throw refuse(`${(from[last] as { value: string }).value.toUpperCase()} must be followed by JOIN and a table.`)
    if (k === 0) tables.push(from.slice(0, first))
    const kind = kindOf(from.slice(first, last).map((t) => (t as { value: string }).value.toLowerCase()))
    const part = from.slice(last + 1, runs[k + 1]?.[0] ?? from.length)
    const on = wordsAt(part, ON)[0]
    if ((on === undefined) !== (kind === 'cross')) throw refuse(kind === 'cross' ? 'CROSS JOIN takes no ON.' : 'JOIN takes its condition after ON, as in JOIN persons p ON e.person_id = p.id.')
    tables.push(on === undefined ? part : part.slice(0, on))
    const after = on === undefined ? null : part.slice(on + 1)
    joined.push({ kind, on: after, using: after !== null && isWord(part[on!], 'using') ? usingNames(after) : undefined })
  })
  return { tables, joined }
}

/** USING's names, `(a, b)` or `a, b`: each a field both tables have. */
function usingNames(tokens: Token[]): Token[] {
  const list = isPunct(tokens[0], '(') && isPunct(tokens.at(-1), ')') ? tokens.slice(1, -1) : tokens
  const names = list.filter((_, i) => i % 2 === 0)
  if (list.length % 2 === 0 || names.some((t) => t.kind !== 'name') || list.some((t, i) => i % 2 === 1 && !isPunct(t, ','))) throw refuse('USING takes names of fields both tables have, as in JOIN persons p USING (id) or USING id, created_at.')
  return names
}

interface Side {
  tokens: Token[]
  source: HogqlQueryPlan | null
  table: QueryTable
  qualifiers: string[]
  /** The clock its own expressions are read with. */
  clock: QueryClock
  /** The expressions the query reads of it (its columns), and WHERE's conditions moved into it. */
  bodies: Token[][]
  pushed: Token[][]
  /** Whether every row of it stays in the join (no outer join makes it the side that may lack a match). */
  kept: boolean
}

/**
 * A FROM with JOINs: the query around reads its names with `clock`, moves what it can of WHERE with `pushDown`,
 * and takes the plan with `finish` once read.
 */
export class JoinReader {
  readonly #sides: Side[]
  readonly #steps: JoinPlan['steps'] = []
  readonly #columns: QueryColumn[] = []
  /** The side of each joined column, and each side's expression's column, by its text. */
  readonly #sideOf: number[] = []
  readonly #known = new Map<string, number>()
  /** The clock the query around reads with: its names through the hook. */
  readonly clock: QueryClock

  constructor(from: Token[], clock: QueryClock, readonly helpers: JoinHelpers) {
    this.clock = { ...clock, table: 'join', qualifiers: [], source: undefined, joined: (tokens, at) => this.#read(tokens, at, true) }
    const { tables, joined } = readFrom(from)
    this.#sides = tables.map((tokens) => {
      const { table, source, qualifiers } = helpers.from(tokens)
      const columns = source?.columns.slice(0, source.shown).map((c, i) => ({ name: c.name, node: () => columnRef(source.columns, i, 'sub') }))
      const own: QueryClock = { ...clock, table, qualifiers: [], source: columns && { columns } }
      return { tokens, source, table, qualifiers, clock: own, bodies: [], pushed: [], kept: true }
    })
    // The side that may lack a match keeps no condition of WHERE: it would then be unmatched rather than left out.
    joined.forEach(({ kind }, k) => {
      if (kind === 'left' || kind === 'full') this.#sides[k + 1].kept = false
      if (kind === 'right' || kind === 'full') this.#sides.slice(0, k + 1).forEach((s) => (s.kept = false))
    })
    joined.forEach(({ kind, on, using }, k) => this.#steps.push({ kind, keys: on === null ? [] : using ? this.#using(using, k + 1) : this.#keys(on, k + 1) }))
  }

  /**
   * The name at `at` (after its table's name or alias, or the one table's that has it) and what follows it of a
   * property's path, as the joined row's column (registered when `register`); its sides read in `read`.
   */
  #read(tokens: readonly Token[], at: number, register: boolean, read?: Set<number>): { node: HogqlNode; end: number } {
    const q = tokens[at]
    let side = q.kind === 'name' && isPunct(tokens[at + 1], '.') && tokens[at + 2]?.kind === 'name' ? this.#sides.findIndex((s) => s.qualifiers.includes(q.value)) : -1
    const start = side >= 0 ? at + 2 : at
    const name = (tokens[start] as { value: string }).value
    if (side < 0) {
      const having = this.#sides.flatMap((s, i) => (this.#offers(s, name) ? [i] : []))
      if (having.length === 0) throw refuse(`Unknown field "${name}": no joined table has it (${this.#sides.map((s) => s.qualifiers.join(' or ')).join('; ')}).`)
      if (having.length > 1) throw refuse(`The field "${name}" is in more than one joined table: write it after its table's name or alias, as ${this.#sides[having[0]].qualifiers.at(-1)}.${name}.`)
      side = having[0]
    }
    const s = this.#sides[side]
    let end = start + 1
    if (s.source === null && (name === 'properties' || name === 'person')) {
      for (;;) {
        if (isPunct(tokens[end], '.') && tokens[end + 1]?.kind === 'name') end += 2
        else if (isPunct(tokens[end], '[') && tokens[end + 1]?.kind === 'text' && isPunct(tokens[end + 2], ']')) end += 3
        else break
      }
    }
    read?.add(side)
    return { node: this.#use(side, tokens.slice(start, end), register), end }
  }

  /** A side's expression as the joined row's column, read once (a column of it only, unless `register`). */
  #use(side: number, body: Token[], register: boolean): HogqlNode {
    const key = `${side} ${body.map((t) => `${t.kind}:${t.value}`).join(' ')}`
    const known = this.#known.get(key)
    if (known !== undefined) return columnRef(this.#columns, known, 'sub')
    const s = this.#sides[side]
    const column = this.#column(s, body)
    if (!register) return columnRef([column], 0, 'sub')
    this.#known.set(key, this.#columns.length)
    this.#sideOf.push(side)
    this.#columns.push(column)
    s.bodies.push(body)
    return columnRef(this.#columns, this.#columns.length - 1, 'sub')
  }

  /** `q.*`: the columns of the table `q` names, as its own `SELECT *` gives them, each read after `q`. */
  asterisk(q: Token & { kind: 'name' }): Array<{ name: string; body: Token[]; aliased: boolean }> {
    const s = this.#sides.find((side) => side.qualifiers.includes(q.value))
    if (s === undefined) throw refuse(`${q.value}.* names no table of the join (${this.#sides.map((side) => side.qualifiers.join(' or ')).join('; ')}).`)
    const names = s.source === null ? ASTERISK[s.table] : s.source.columns.slice(0, s.source.shown).map((c) => c.name)
    return names.map((name) => ({ name, body: [q, synthetic('punct', '.'), { kind: 'name', value: name, quoted: s.source !== null, start: q.start, end: q.end }], aliased: false }))
  }

  /** Whether a side has the field, for a name written without its table's. */
  #offers(s: Side, name: string): boolean {
    return s.source === null ? offers(s.table, name) : s.source.columns.slice(0, s.source.shown).some((c) => c.name === name)
  }

  /** A side's expression as a joined column: typed as the side's query will type it. */
  #column(s: Side, body: Token[]): QueryColumn {
    const { expr } = expression(body, s.clock, false)
    const column = columnOf(`j${this.#columns.length}`, expr, null, s.clock.zone)
    // A subquery's column read whole keeps its type (count()'s UInt64), as the side's query gives it.
    if (s.source !== null && expr.op === 'field' && isSourceRef(expr.field)) column.type = s.source.columns[Number(expr.field.slice(4))].type
    return column
  }

  /** The sides an expression reads (of the joined columns' fields). */
  #sidesOf(node: HogqlNode): Set<number> {
    return new Set(hogqlFields(node).filter(isSourceRef).map((f) => this.#sideOf[Number(f.slice(4))]))
  }

  /** ON's condition joining side `s`: equalities of an expression of the sides before it with one of it, joined by AND. */
  #keys(on: Token[], s: number): Array<readonly [HogqlNode, HogqlNode]> {
    const { expr } = expression(on, this.clock, false)
    const why = 'ON takes equalities of the joined table with the tables before it, joined by AND (ON e.person_id = p.id AND …).'
    return (expr.op === 'and' ? expr.args : [expr]).map((eq) => {
      if (eq.op !== '=') throw refuse(why)
      const [a, b] = eq.args.map((arg) => [...this.#sidesOf(arg)])
      const before = (sides: number[]) => sides.length > 0 && sides.every((i) => i < s)
      const it = (sides: number[]) => sides.length === 1 && sides[0] === s
      const pair = before(a) && it(b) ? eq.args : before(b) && it(a) ? ([eq.args[1], eq.args[0]] as const) : null
      if (pair === null) throw refuse(why)
      return sameType(pair)
    })
  }

  /** USING's names joining side `s`: each the field of the one table before it that has it, equal to its own. */
  #using(names: Token[], s: number): Array<readonly [HogqlNode, HogqlNode]> {
    return names.map((t) => {
      const name = (t as { value: string }).value
      const before = this.#sides.slice(0, s).flatMap((side, i) => (this.#offers(side, name) ? [i] : []))
      if (before.length !== 1 || !this.#offers(this.#sides[s], name)) throw refuse(`USING ${name} names a field of the joined table and of exactly one table before it; ${before.length > 1 ? 'more than one has it' : 'one lacks it'}: write ON with the tables' names or aliases.`)
      return sameType([this.#use(before[0], [t], true), this.#use(s, [t], true)])
    })
  }

  /**
   * WHERE's tokens less the conditions (of its top-level ANDs) that read one side that keeps its rows, and no alias of
   * the SELECT (`aliases`) nor a subquery: those move into that side's query. Undefined when none is left.
   */
  pushDown(where: Token[] | undefined, aliases: ReadonlySet<string>): Token[] | undefined {
    if (where === undefined) return undefined
    const ands = wordsAt(where, new Set(['and']))
    const parts = [-1, ...ands].map((at, i) => where.slice(at + 1, ands[i] ?? where.length))
    const left = parts.filter((part) => {
      const sides = this.#probe(part, aliases)
      if (sides === null || sides.size !== 1) return true
      const s = this.#sides[[...sides][0]]
      if (!s.kept) return true
      s.pushed.push(part)
      return false
    })
    return left.length === 0 ? undefined : left.flatMap((part, i) => [...(i > 0 ? [synthetic('name', 'and')] : []), synthetic('punct', '('), ...part, synthetic('punct', ')')])
  }

  /** The sides a condition reads, or null where it can't move (an alias, a subquery, anything unread). */
  #probe(part: Token[], aliases: ReadonlySet<string>): Set<number> | null {
    if (part.length === 0 || readsAlias(part, aliases) || part.some((t) => isWord(t, 'select'))) return null
    const read = new Set<number>()
    try {
      expression(part, { ...this.clock, joined: (tokens, at) => this.#read(tokens, at, false, read) }, false)
    } catch {
      return null
    }
    return read
  }

  /** The plan, once the query around is read: each side's query of the columns read of it. */
  finish(): JoinPlan {
    const places = this.#sides.map((s, i) => {
      // A side none of whose columns is read still gives its rows (count() of a join).
      if (s.bodies.length === 0) this.#use(i, [{ kind: 'number', value: 1, start: 0, end: 0 }], true)
      return this.#sideOf.flatMap((side, at) => (side === i ? [at] : []))
    })
    const sides = this.#sides.map((s) => {
      const select = s.bodies.flatMap((body, k) => [...(k > 0 ? [synthetic('punct', ',')] : []), ...body, synthetic('name', 'as'), synthetic('name', `j${k}`)])
      const where = s.pushed.flatMap((part, k) => [synthetic('name', k > 0 ? 'and' : 'where'), synthetic('punct', '('), ...part, synthetic('punct', ')')])
      const plan = this.helpers.plan([synthetic('name', 'select'), ...select, synthetic('name', 'from'), ...s.tokens, ...where], s)
      plan.fetch = Math.min(plan.fetch, MAX_JOIN_ROWS + 1)
      return plan
    })
    return { sides, steps: this.#steps, columns: this.#columns, places }
  }
}

/** A join's pair of keys, refused where one is a text and the other a number. */
function sameType(pair: readonly [HogqlNode, HogqlNode]): readonly [HogqlNode, HogqlNode] {
  const [a, b] = pair.map((k) => k.type)
  if ((a === 'text' && b === 'number') || (a === 'number' && b === 'text')) throw refuse('ON compares a text with a number: the keys of a join are of one type (toString or toFloat one of them).')
  return pair
}

/** What a row without a match reads of a column: its type's default (join_use_nulls = 0). */
function unmatched(c: QueryColumn): HogqlValue {
  if (c.type.startsWith('Nullable')) return null
  if (c.type === 'String') return ''
  return c.type === 'UUID' ? '00000000-0000-0000-0000-000000000000' : 0
}

/** A key's reader of a row: a column's value directly, or the expression evaluated (`at`: a joined column's place in the row). */
function keyReader(node: HogqlNode, at: (column: number) => number, regex: RegexEngine | null): (row: readonly HogqlValue[]) => HogqlValue {
  if (node.op === 'field' && isSourceRef(node.field)) {
    const i = at(Number(node.field.slice(4)))
    return (row) => row[i]
  }
  return (row) => evaluateHogql(node, () => null, regex, (name) => row[at(Number(name.slice(4)))])
}

/**
 * The joined rows of the sides' rows (each side's columns in its query's order), as ClickHouse's hash join gives them.
 * `pause` is awaited every few thousand rows, so a large join leaves the caller's thread its other work meanwhile.
 */
export async function joinRows(join: JoinPlan, answers: ReadonlyArray<readonly AnswerValue[][]>, regex: RegexEngine | null, pause?: () => Promise<unknown>): Promise<HogqlValue[][]> {
  // A side's columns are those the query reads of it (columnRef, which refuses an array).
  const sides = answers as ReadonlyArray<readonly HogqlValue[][]>
  const defaults = join.columns.map(unmatched)
  // A side's NaN and infinities are NULL, as its answer writes them (ClickHouse's JSON): so both stores' sides join alike.
  const placed = (s: number, values: readonly HogqlValue[], into: HogqlValue[]) => {
    join.places[s].forEach((at, k) => (into[at] = answered(values[k])))
    return into
  }
  const tooMany = () => refuse(`A join here gives at most ${MAX_JOIN_ROWS} rows: narrow its tables with WHERE, or aggregate them in subqueries first.`)
  let done = 0
  const tick = async () => {
    if (pause !== undefined && ++done % 4096 === 0) await pause()
  }
  let rows: HogqlValue[][] = []
  for (const values of sides[0]) {
    rows.push(placed(0, values, defaults.slice()))
    await tick()
  }
  for (const [k, { kind, keys }] of join.steps.entries()) {
    const s = k + 1
    const within = new Map(join.places[s].map((at, i) => [at, i]))
    const readers = keys.map(([before, it]) => [keyReader(before, (c) => c, regex), keyReader(it, (c) => within.get(c)!, regex)] as const)
    // One text key (an id) is its own key; else each row's values as keyOf writes them. A NULL matches nothing, as in ClickHouse.
    const textKey = keys.length === 1 && keys[0][0].type === 'text'
    const keyOfRow = (row: readonly HogqlValue[], which: 0 | 1): string | null => {
      if (kind === 'cross') return ''
      if (textKey) return readers[0][which](row) as string | null
      const values = readers.map((r) => answered(r[which](row)))
      return values.includes(null) ? null : keyOf(values)
    }
    const table = new Map<string, number[]>()
    for (const [i, values] of sides[s].entries()) {
      const key = keyOfRow(values, 1)
      if (key !== null) {
        const same = table.get(key)
        if (same === undefined) table.set(key, [i])
        else same.push(i)
      }
      await tick()
    }
    const matched = new Uint8Array(sides[s].length)
    const next: HogqlValue[][] = []
    for (const row of rows) {
      const key = keyOfRow(row, 0)
      const hits = key === null ? undefined : table.get(key)
      for (const i of hits ?? []) {
        matched[i] = 1
        next.push(placed(s, sides[s][i], row.slice()))
      }
      if (hits === undefined && (kind === 'left' || kind === 'full')) next.push(row)
      if (next.length > MAX_JOIN_ROWS) throw tooMany()
      await tick()
    }
    if (kind === 'right' || kind === 'full') sides[s].forEach((values, i) => matched[i] === 0 && next.push(placed(s, values, defaults.slice())))
    if (next.length > MAX_JOIN_ROWS) throw tooMany()
    rows = next
  }
  return rows
}

/** The first plan below this one that joins (a subquery's or a WITH query's JOIN), whose rows are read apart, or null. */
export function joinBelow(plan: HogqlQueryPlan): HogqlQueryPlan | null {
  return plan.source === null ? null : plan.source.join !== null ? plan.source : joinBelow(plan.source)
}
