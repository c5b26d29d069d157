/**
 * PostHog's HogQLQuery, the part skylark reads: `SELECT [DISTINCT] column [AS name], … FROM events [WHERE condition]
 * [GROUP BY expression, …] [HAVING condition] [ORDER BY key [ASC|DESC], …] [LIMIT n BY key, …] [LIMIT n]` (the
 * keys: hogql-order.ts). A column is an expression of HogQL math and filters (hogql-math.ts: properties,
 * person.properties, event, distinct_id, functions), or the events' other fields (`uuid`, `timestamp`, `created_at`
 * …: hogql-tables.ts), or `*`, or one aggregation as a whole (count(), countIf, sum, avg, min, max and their -If,
 * uniq, count(distinct …), median, quantile(level)), or an expression over aggregations and keys (`sum(x) /
 * count()`), or one reading another column by its alias. Dates and times:
 * `timestamp`, now(), toDateTime('…'), either plus or minus an interval, and their periods' starts (toStartOfDay …,
 * toDate, toStartOfInterval, dateTrunc) on the project zone's wall clock, read whole or compared (a text compared with
 * one is a date and time of the project's zone); their parts (toHour …) and dateDiff are numbers.
 *
 * A person property is the event's distinct id's person's now, as experiments' HogQL math reads it: the plan names
 * the paths (`personPaths`), the caller resolves them from persons.db into `persons`. A column that reads no event
 * (`today()`) stands beside aggregations ungrouped. HAVING reads the columns by alias, the GROUP BY expressions and
 * aggregations anywhere in it as the plan's columns (`col_<i>` fields), those not selected hidden after the `shown`
 * ones; ORDER BY and the columns over aggregations read them likewise (hogql-query-columns.ts). `FROM persons` (or
 * `FROM groups`) reads persons.db's persons (groups) instead, with that table's fields (hogql-tables.ts); `FROM
 * (SELECT …)` reads another query's rows (`source`), as does FROM the name of one a WITH clause names (hogql-with.ts).
 * `{name}` placeholders take the query's values (hogql-placeholders.ts). A FROM with JOINs is hogql-join.ts's, each
 * table a query planned here (`join`). Queries joined by UNION ALL are hogql-union.ts's, each one planned here.
 *
 * `parseHogqlQuery` makes a plan both stores run (the embedded one in Node, hogql-query-run.ts, ClickHouse as SQL:
 * clickhouse-query.ts; a plan of persons or groups runs in Node on the persons read thread); what it can't read is a
 * HogqlMathError naming it. Without LIMIT a query returns 100 rows and says whether there were more (PostHog's
 * HogQLHasMorePaginator); a LIMIT is capped at 50,000; OFFSET is refused with PostHog's message for personal API
 * keys, the only keys skylark has.
 */
import { evaluateHogql, hogqlFields, hogqlProperties, isSourceRef, uniquePaths, type HogqlNode, type PropertyPath, type StoredField } from './hogql-math.js'
import { COMPARISONS } from './hogql-datetime.js'
import type { QueryClock } from './hogql-clock.js'
import { ASTERISK, STORED_FIELDS, TABLES, type QueryTable } from './hogql-tables.js'
import { aliased, arrayRead, callsAggregation, columnAt, columnOf, columnRef, expression, having, LATER, overGroups, readsEvents, same, whereScope, wholeOrLater, type GroupScope, type QueryColumn } from './hogql-query-columns.js'
import { HogqlMathError, isCall, isPunct, isWord, splitCommas, tokenize, type Token } from './hogql-tokens.js'
import { fillPlaceholders, filtersCondition, type PlaceholderValues } from './hogql-placeholders.js'
import { readWith } from './hogql-with.js'
import { inSubqueries, type InSet } from './hogql-in.js'
import { lookups, type Lookup } from './hogql-lookups.js'
import { givesArray, keepsValues, picksOne } from './hogql-functions.js'
import { SESSION_RENAMED, sessionsQuery } from './hogql-sessions.js'
import { DEFAULT_BOUNCE, type PersonProperty } from './experiment-types.js'
import { JoinReader, joins, type JoinPlan } from './hogql-join.js'
import { limitBy, orderKeys, type KeyScope, type LimitBy, type OrderKey } from './hogql-order.js'

export { ofGroup, type QueryColumn } from './hogql-query-columns.js'

export const DEFAULT_RETURNED_ROWS = 100
export const MAX_SELECT_RETURNED_ROWS = 50_000
const MAX_QUERY_LENGTH = 50_000
/**
 * Property paths one query reads. ClickHouse 18.16 takes superlinear time to analyse its many path reads: 20
 * paths 0.3 s, 50 1.9 s, 100 11.4 s, 300 past the client's 30 s (50 events; SQLite 6–27 ms).
 */
export const MAX_QUERY_PATHS = 50
const MAX_SUBQUERY_DEPTH = 3
/** PostHog's user_query_validator message. */
export const OFFSET_NOT_ALLOWED_MESSAGE =
  'OFFSET is not supported on queries made with a personal API key. For pagination, use keyset pagination on the `timestamp` column, e.g. ' +
  '`WHERE timestamp > :last_seen_timestamp ORDER BY timestamp LIMIT N`. For bulk data extraction, use batch exports: https://posthog.com/docs/cdp/batch-exports'


export interface HogqlQueryPlan {
  /** What it reads: the events (of the event store), or persons.db's persons; or its subquery's, which reads them. */
  table: QueryTable
  /** The subquery whose rows it reads (`FROM (SELECT …)`), or null. */
  source: HogqlQueryPlan | null
  /** The answer's columns, then the hidden ones HAVING reads. */
  columns: QueryColumn[]
  /** How many columns the answer has. */
  shown: number
  distinct: boolean
  where: HogqlNode | null
  /** Whether the rows are groups: some column aggregates, or GROUP BY is there. */
  grouped: boolean
  groupBy: HogqlNode[]
  /** A condition on each group's columns (`col_<i>` fields), no event read. */
  having: HogqlNode | null
  orderBy: OrderKey[]
  /** LIMIT n BY columns: after ORDER BY, before `fetch`, at most n rows of each of their values. */
  limitBy: LimitBy | null
  /** Rows to read: the limit, one more without LIMIT (hasMore). */
  fetch: number
  /** No LIMIT: the answer has `limit` rows at most, and says whether there were more. */
  paginated: boolean
  /** Bounds WHERE puts on `timestamp` whatever else it says (the stores read only those events): after inclusive, before exclusive. */
  after?: number
  before?: number
  /** The event property paths every expression reads, each once. */
  paths: PropertyPath[]
  /** The person property paths (`person.properties.…`) every expression reads, each once. */
  personPaths: PropertyPath[]
  /** `personPaths` as resolved from persons.db before the run (none from the parse: each then reads null). */
  persons: readonly PersonProperty[]
  /** Whether an expression reads `properties` whole (the stored JSON text). */
  readsProperties: boolean
  /** The events' stored columns beyond the usual ones that an expression reads (none of persons). */
  stored: StoredField[]
  /**
   * The order a store may read the events in for the run to stop early (runHogqlQuery's `ordered`): a query of events
   * neither grouped nor DISTINCT whose first ORDER BY key is `timestamp`, as PostHog's keyset paging writes them.
   */
  scan: 'asc' | 'desc' | null
  /** A FROM with JOINs: its tables' queries, run first, and how their rows join into those it reads (hogql-join.ts). */
  join: JoinPlan | null
  /** The subqueries of `x IN (SELECT …)` anywhere in a whole query, inner ones first: run, and their nodes filled (fillInSet), before it. */
  inSets: InSet[]
  /** What the events' groups and persons have now (`group_<n>.properties.…`, `person.created_at` …) anywhere in a whole query: their nodes filled (fillLookup) before it runs. */
  lookups: Lookup[]
}

/**
 * Words that begin a clause of a query, where they stand outside parentheses and are not a property's key
 * (`properties.from`). None names a function HogQL here has but `array`, which a parenthesis after makes a call (ARRAY
 * JOIN has none), so `WHERE (a OR b)` is the clause before a parenthesis.
 */
const CLAUSES = new Set(['select', 'distinct', 'from', 'where', 'group', 'having', 'order', 'limit', 'offset', 'join', 'inner', 'left', 'right', 'full', 'cross', 'array', 'union', 'with', 'prewhere', 'settings', 'sample', 'format', 'window', 'qualify', 'intersect', 'except', 'final'])
const refuse = (detail: string) => new HogqlMathError(detail)
/** The words of a JOIN, FROM's when after it (hogql-join.ts reads them). */
const JOIN_CLAUSES = new Set(['join', 'inner', 'left', 'right', 'full', 'cross', 'array'])

/** Where each top-level clause word stands (not a function's name). */
function clauseAt(tokens: Token[]): Array<{ word: string; at: number }> {
  const found: Array<{ word: string; at: number }> = []
  let depth = 0
  tokens.forEach((t, i) => {
    if (t.kind === 'punct' && (t.value === '(' || t.value === '[')) depth++
    else if (t.kind === 'punct' && (t.value === ')' || t.value === ']')) depth--
    else if (depth === 0 && t.kind === 'name' && !t.quoted && CLAUSES.has(t.value.toLowerCase())) {
      const before = tokens[i - 1]
      if ((before?.kind === 'punct' && before.value === '.') || isCall(tokens, i)) return
      found.push({ word: t.value.toLowerCase(), at: i })
    }
  })
  return found
}

/** The SELECT parts: each one's name (its alias, or its text as written) and its expression's tokens. */
function itemsOf(tokens: Token[], text: string, table: QueryTable, source: HogqlQueryPlan | null, joining: JoinReader | null): Array<{ name: string; body: Token[]; aliased: boolean }> {
  // `e.*` of a join: that table's columns.
  if (joining !== null && tokens.length === 3 && tokens[0].kind === 'name' && isPunct(tokens[1], '.') && isPunct(tokens[2], '*')) return joining.asterisk(tokens[0])
  if (tokens.length === 1 && tokens[0].kind === 'punct' && tokens[0].value === '*') {
    // A subquery's columns, each read by its name as quoted (`count()` is a name there).
    if (source !== null) return source.columns.slice(0, source.shown).map(({ name }) => ({ name, body: [{ ...tokens[0], kind: 'name', value: name, quoted: true }], aliased: false }))
    if (table === 'one' || table === 'join') throw refuse(table === 'one' ? 'SELECT * reads the columns of a table: a query without FROM has none.' : "SELECT * of a join is not read here, as PostHog's: name a table's (e.*) or the columns (e.event, p.properties.email …).")
    return ASTERISK[table].map((name) => ({ name, body: tokenize(name), aliased: false }))
  }
  const last = tokens[tokens.length - 1]
  if (tokens.length > 2 && isWord(tokens[tokens.length - 2], 'as') && last.kind === 'name') return [{ name: last.value, body: tokens.slice(0, -2), aliased: true }]
  return [{ name: text.slice(tokens[0].start, last.end), body: tokens, aliased: false }]
}

/** FROM's table as read: its name, or the subquery (or named query) whose rows it reads, and its qualifiers. */
type From = { table: QueryTable; source: HogqlQueryPlan | null; qualifiers: string[] }

/**
 * FROM's table, or its subquery's plan: `events [[AS] e]`, `(SELECT …) [[AS] s]`, or a query WITH names (`recent
 * [[AS] r]`, read as that subquery, which reads the queries WITH names before it). A query of a subquery reads its
 * rows, whose values are its columns by name (QueryClock's `source`); the stores read the innermost query's table.
 * `qualifiers`: the names a field may follow with a dot (`events.event`, `e.event`, `s.n`, `recent.n`).
 */
function fromOf(from: Token[], text: string, clock: QueryClock, depth: number): From {
  const [first] = from
  const cte = first?.kind === 'name' ? (clock.ctes ?? []).findLastIndex((c) => c.name === first.value) : -1
  const sessions = cte < 0 && isWord(first, 'sessions')
  const subquery = first?.kind === 'punct' && first.value === '(' && (isWord(from[1], 'select') || isWord(from[1], 'with'))
  const end = subquery ? from.findLastIndex((t) => t.kind === 'punct' && t.value === ')') + 1 : 1
  const rest = from.slice(end)
  if (rest.length === 2 && isWord(rest[0], 'as')) rest.shift()
  const table = cte < 0 && first?.kind === 'name' && !first.quoted && TABLES.includes(first.value as QueryTable) ? (first.value as QueryTable) : null
  if ((!subquery && table === null && cte < 0 && !sessions) || rest.length > 1 || (rest.length === 1 && rest[0].kind !== 'name')) {
    throw refuse('HogQL queries here read one table, events, persons, groups, sessions or person_distinct_ids (FROM events [AS e]), a subquery (FROM (SELECT …) [AS name]), or a query WITH names.')
  }
  const alias = rest.length === 1 ? [(rest[0] as { value: string }).value] : []
  if (table !== null) return { table, source: null, qualifiers: [table, ...alias] }
  if (depth === MAX_SUBQUERY_DEPTH) throw refuse(`Subqueries nest at most ${MAX_SUBQUERY_DEPTH} deep here, a query WITH names counting as one.`)
  if (sessions) return { table: 'events', source: sessionsPlan(clock, depth + 1), qualifiers: ['sessions', ...alias] }
  const source = cte < 0 ? planOf(from.slice(1, end - 1), text, clock, null, depth + 1) : planOf(clock.ctes![cte].tokens, text, { ...clock, ctes: clock.ctes!.slice(0, cte) }, null, depth + 1)
  return { table: source.table, source, qualifiers: cte < 0 ? alias : [clock.ctes![cte].name, ...alias] }
}

/** PostHog's sessions table as the query of the events that computes it (hogql-sessions.ts), its columns named as PostHog's. */
function sessionsPlan(clock: QueryClock, depth: number): HogqlQueryPlan {
  const text = sessionsQuery(clock.bounce ?? DEFAULT_BOUNCE)
  const plan = planOf(tokenize(text), text, { ...clock, ctes: [] }, null, depth)
  return { ...plan, columns: plan.columns.map((c) => ({ ...c, name: SESSION_RENAMED.get(c.name) ?? c.name })) }
}

/** Lower and upper bounds on `timestamp` that the top-level conjuncts of WHERE set (a BETWEEN's product of two too). */
function timeBounds(where: HogqlNode | null): { after?: number; before?: number } {
  const bounds: { after?: number; before?: number } = {}
  const conjuncts = (where === null ? [] : where.op === 'and' ? where.args : [where]).flatMap((c) => (c.op === '*' && c.args.every((a) => COMPARISONS.has(a.op)) ? c.args : [c]))
  for (const c of conjuncts) {
    if (!COMPARISONS.has(c.op) || !('args' in c)) continue
    let [l, r] = c.args as HogqlNode[]
    let op: string = c.op
    if (r.op === 'field' && r.field === 'timestamp') {
      ;[l, r] = [r, l]
      op = ({ '<': '>', '<=': '>=', '>': '<', '>=': '<=' } as Record<string, string>)[op] ?? op
    }
    if (l.op !== 'field' || l.field !== 'timestamp' || readsEvents(r)) continue
    const v = evaluateHogql(r, () => null)
    if (typeof v !== 'number' || !Number.isFinite(v)) continue
    if (op === '>' || op === '>=' || op === '=') bounds.after = Math.max(bounds.after ?? -Infinity, Math.floor(v))
    if (op === '<' || op === '<=' || op === '=') bounds.before = Math.min(bounds.before ?? Infinity, op === '<' ? Math.ceil(v) : Math.floor(v) + 1)
  }
  return bounds
}

function readsWhole(node: HogqlNode): boolean {
  return (node.op === 'field' && node.field === 'properties') || ('args' in node && node.args.some(readsWhole))
}

/** The innermost plan: its table is what the stores read, with its paths, stored columns, time bounds and persons. */
export function innermost(plan: HogqlQueryPlan): HogqlQueryPlan {
  return plan.source === null ? plan : innermost(plan.source)
}

/** The plan with the innermost one's person properties resolved (`personPaths`, read from persons.db). */
export function withPersons(plan: HogqlQueryPlan, persons: readonly PersonProperty[]): HogqlQueryPlan {
  return plan.source === null ? { ...plan, persons } : { ...plan, source: withPersons(plan.source, persons) }
}

/** `defaultLimit`: the rows of a query without LIMIT (100 at the query API, PostHog's 50,000 for an export). */
export function parseHogqlQuery(input: string, clock: QueryClock, defaultLimit = DEFAULT_RETURNED_ROWS, values: PlaceholderValues = {}): HogqlQueryPlan {
  const { tokens, text } = queryTokens(input, values, clock.filters)
  return topPlan(tokens, text, clock, defaultLimit)
}

/** A query's text (a last `;` dropped) and its tokens, placeholders filled. */
export function queryTokens(input: string, values: PlaceholderValues, filters?: QueryClock['filters']): { tokens: Token[]; text: string } {
  if (input.length > MAX_QUERY_LENGTH) throw refuse(`The query is longer than ${MAX_QUERY_LENGTH} characters.`)
  const text = input.replace(/;\s*$/, '')
  return { tokens: fillPlaceholders(tokenize(text), values, filters), text }
}

/** The plan of a whole query's tokens (one SELECT, or WITH … SELECT), with the subqueries of its INs. */
export function topPlan(tokens: Token[], text: string, clock: QueryClock, defaultLimit: number): HogqlQueryPlan {
  const inSets: InSet[] = []
  const kept: Lookup[] = []
  const inQuery = inSubqueries((sub, at) => planOf(sub, text, at, null, 1), inSets)
  return { ...planOf(tokens, text, { ...clock, inQuery, lookup: lookups(kept), readFilters: filtersCondition }, defaultLimit, 0), inSets, lookups: kept }
}

/**
 * The plan of a SELECT's tokens; `defaultLimit` null for a subquery, whose rows are all read without LIMIT. `given`:
 * FROM's table as read already (a join's side: hogql-join.ts).
 */
function planOf(tokens: Token[], text: string, clock: QueryClock, defaultLimit: number | null, depth: number, given?: From): HogqlQueryPlan {
  if (isWord(tokens[0], 'with')) {
    const { ctes, select } = readWith(tokens)
    return planOf(select, text, { ...clock, ctes: [...(clock.ctes ?? []), ...ctes] }, defaultLimit, depth)
  }
  if (!isWord(tokens[0], 'select')) throw refuse(tokens.length === 0 ? 'The query is empty.' : 'A query here is one SELECT … FROM events (or persons, or groups).')
  // A JOIN's words are FROM's.
  const clauses = clauseAt(tokens).filter(({ word }, i, all) => !JOIN_CLAUSES.has(word) || !all.slice(0, i).some((c) => c.word === 'from'))
  const order = ['select', 'distinct', 'from', 'where', 'group', 'having', 'order', 'limitby', 'limit']
  let last = -1
  const parts = new Map<string, Token[]>()
  clauses.forEach(({ word: written, at }, i) => {
    if (written === 'offset') throw refuse(OFFSET_NOT_ALLOWED_MESSAGE)
    // `LIMIT n BY …` is a clause of its own, before LIMIT.
    const word = written === 'limit' && isWord(tokens[at + 2], 'by') ? 'limitby' : written
    const rank = order.indexOf(word)
    if (word === 'with') throw refuse('WITH begins a query here, before its SELECT: WITH name AS (SELECT …) SELECT … FROM name.')
    if (word === 'union') throw refuse('UNION joins whole queries here (SELECT … UNION ALL SELECT …), not the queries within one.')
    if (rank < 0) throw refuse(`${written.toUpperCase()} is not read in HogQL queries here: they read a table (events, persons, groups, sessions or person_distinct_ids), a subquery or a join with SELECT, WHERE, GROUP BY, HAVING, ORDER BY and LIMIT.`)
    if (rank <= last || (word === 'distinct' && at !== 1)) throw refuse(`${written.toUpperCase()} stands where it can't be read: a query is SELECT [DISTINCT] … FROM events [WHERE …] [GROUP BY …] [HAVING …] [ORDER BY …] [LIMIT n BY …] [LIMIT n].`)
    last = rank
    const multi = word === 'group' || word === 'order'
    if (multi && !isWord(tokens[at + 1], 'by')) throw refuse(`${word.toUpperCase()} must be followed by BY.`)
    parts.set(word, tokens.slice(at + (multi ? 2 : 1), clauses[i + 1]?.at ?? tokens.length))
  })
  const from = parts.get('from')
  // Without FROM, one row and no field (ClickHouse's system.one): every name is an unknown column of no table.
  const around = clock
  const helpers = { from: (t: Token[]) => fromOf(t, text, around, depth), plan: (t: Token[], side: From) => planOf(t, text, around, null, depth, side) }
  const joining = from !== undefined && given === undefined && joins(from) ? new JoinReader(from, clock, helpers) : null
  const { table, source, qualifiers } = given ?? (joining !== null ? { table: 'join' as const, source: null, qualifiers: [] } : from === undefined ? { table: 'one' as const, source: null, qualifiers: [] } : fromOf(from, text, clock, depth))
  const sourceColumns = from === undefined ? [] : source?.columns.slice(0, source.shown).map((c, i) => ({ name: c.name, node: () => columnRef(source.columns, i, 'sub') }))
  clock = joining?.clock ?? { ...clock, table, qualifiers, source: sourceColumns && { columns: sourceColumns } }
  // DISTINCT, a clause word here, holds the columns after it.
  const distinct = parts.has('distinct')
  const items = splitCommas(parts.get(distinct ? 'distinct' : 'select')!, 'SELECT').flatMap((part) => itemsOf(part, text, table, source, joining))
  const aliases = new Set(items.flatMap((i) => (i.aliased ? [i.name] : [])))
  const columns = items.map(({ name, body }): QueryColumn => {
    const parsed = wholeOrLater(body, clock, aliases)
    return parsed === null ? { name, expr: LATER, math: null, time: null, type: '' } : columnOf(name, parsed.expr, parsed.math, clock.zone)
  })
  let where: HogqlNode | null = null
  // A condition of one table of a join moves into its query.
  const whereTokens = joining === null ? parts.get('where') : joining.pushDown(parts.get('where'), aliases)
  if (whereTokens !== undefined) {
    where = expression(whereTokens, clock, false, whereScope(columns, aliases)).expr
    if (where.type === 'text') throw refuse("WHERE takes a condition, not a text: compare it, as in properties.plan = 'pro'.")
  }
  const groupTokens = parts.get('group')
  const groupBy = (groupTokens === undefined ? [] : splitCommas(groupTokens, 'GROUP BY')).map((part) => {
    const at = aliased(part, columns, items.length)
    if (at !== null && columns[at].math !== null) throw refuse(`GROUP BY ${columns[at].name} names an aggregation.`)
    if (at !== null && columns[at].expr === LATER) throw refuse(`GROUP BY ${columns[at].name} names a column computed from others: group by an expression of the events.`)
    return at !== null ? columns[at].expr : expression(part, clock, false).expr
  })
  const shown = columns.length
  const scope: GroupScope = { clock, columns, groupBy, aliases }
  const grouped = groupBy.length > 0 || columns.some((c, i) => c.math !== null || (c.expr === LATER && callsAggregation(items[i].body)))
  if (distinct && grouped && groupBy.some((g) => !columns.some((c) => c.math === null && same(g, c.expr)))) {
    throw refuse('SELECT DISTINCT with a GROUP BY expression that is not a column is not read here.')
  }
  // A column of the keys (`lower(event)` … GROUP BY event), then one over aggregations (`sum(x) / count()`), reads
  // the groups' columns: those that are none yet are added, hidden.
  const overKeys = (c: QueryColumn) => c.expr !== LATER && c.math === null && readsEvents(c.expr) && !groupBy.some((g) => same(g, c.expr))
  for (const late of [(c: QueryColumn) => grouped && overKeys(c), (c: QueryColumn) => c.expr === LATER]) {
    items.forEach(({ name, body }, i) => {
      if (!late(columns[i])) return
      if (distinct && grouped && columns[i].expr === LATER) throw refuse(`SELECT DISTINCT with an aggregation within a column's expression (${name}) is not read here.`)
      const expr = overGroups(body, scope, grouped ? `Column ${name} is neither aggregated nor in GROUP BY: add it to GROUP BY, or aggregate it.` : null)
      columns[i] = columnOf(name, expr, null, clock.zone)
    })
  }
  const havingTokens = parts.get('having')
  if (havingTokens !== undefined && !grouped) throw refuse('HAVING filters groups: the query groups (GROUP BY) or aggregates.')
  if (havingTokens !== undefined && distinct) throw refuse('SELECT DISTINCT with HAVING is not read here.')
  const condition = havingTokens === undefined ? null : having(havingTokens, scope)
  const keyScope: KeyScope = { ...scope, shown, text, grouped, distinct }
  const orderTokens = parts.get('order')
  const orderBy = orderTokens === undefined ? [] : orderKeys(orderTokens, keyScope)
  const byTokens = parts.get('limitby')
  const limited = byTokens === undefined ? null : limitBy(byTokens, keyScope)
  const limitTokens = parts.get('limit')
  let limit = defaultLimit ?? Infinity
  if (limitTokens !== undefined) {
    if (limitTokens.some((t) => t.kind === 'punct' && t.value === ',')) throw refuse(OFFSET_NOT_ALLOWED_MESSAGE)
    const [n, ...rest] = limitTokens
    if (n?.kind !== 'number' || !Number.isSafeInteger(n.value) || rest.length > 0) throw refuse('LIMIT takes a whole number here (LIMIT 100), after a LIMIT n BY columns if any (LIMIT 1 BY distinct_id LIMIT 100).')
    limit = Math.min(n.value, MAX_SELECT_RETURNED_ROWS)
  }
  for (const at of [...orderBy.map((o) => o.column), ...(limited?.columns ?? [])]) if (at !== null && givesArray(columns[at].math)) throw arrayRead(columns[at])
  const paginated = limitTokens === undefined && defaultLimit !== null
  const join = joining?.finish() ?? null
  const below = source?.columns ?? join?.columns
  if (below !== undefined && columns.some((c) => picksOne(c.math) || keepsValues(c.math))) throw refuse(`any(), argMin(), argMax(), groupArray(), groupUniqArray() and topK() read values by their time; a ${join ? 'join' : 'subquery'}'s rows have no time here: use min() or max().`)
  // A subquery's (or a join's) column read whole keeps its type (count()'s UInt64).
  columns.forEach((c) => {
    if (below !== undefined && c.math === null && c.expr.op === 'field' && isSourceRef(c.expr.field)) c.type = below[Number(c.expr.field.slice(4))].type
  })
  const nodes = [...columns.map((c) => c.expr), ...(where ? [where] : []), ...groupBy, ...orderBy.map((o) => o.expr)]
  const paths = uniquePaths(nodes.flatMap((n) => hogqlProperties(n, 'event')))
  const personPaths = uniquePaths(nodes.flatMap((n) => hogqlProperties(n, 'person')))
  const read = paths.length + personPaths.length
  if (read > MAX_QUERY_PATHS) throw refuse(`The query reads ${read} properties; a query here reads at most ${MAX_QUERY_PATHS}.`)
  return {
    table,
    source,
    columns,
    shown,
    distinct,
    where,
    grouped,
    groupBy,
    having: condition,
    orderBy,
    limitBy: limited,
    fetch: paginated ? limit + 1 : limit,
    paginated,
    ...timeBounds(where),
    paths,
    personPaths,
    persons: [],
    readsProperties: nodes.some(readsWhole),
    stored: table === 'events' ? STORED_FIELDS.filter((name) => nodes.some((n) => hogqlFields(n).includes(name))) : [],
    join,
    inSets: [],
    lookups: [],
    scan: table === 'events' && source === null && !grouped && !distinct && limited === null && orderBy[0]?.expr.op === 'field' && orderBy[0].expr.field === 'timestamp' ? (orderBy[0].desc ? 'desc' : 'asc') : null,
  }
}
