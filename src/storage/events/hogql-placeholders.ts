/**
 * A HogQLQuery's placeholders (`{name}`, PostHog's `values`): each replaced, before the query is read, by tokens of
 * its value as a constant (a text, a number, true, false or null, or a list of them for IN), so no value is ever
 * read as HogQL. `{filters}` without a value is PostHog's placeholder of the query's filters (its date range here):
 * `true` when the query gives none, as PostHog reads it then, else a mark the parser reads as the condition of the
 * range on the table it stands in (filtersCondition: `timestamp` of events, `$start_timestamp` of sessions,
 * `created_at` of groups, as PostHog's ReplaceFilters picks), and of its property filters (read as HogQL by
 * hogql-property-expr.ts). `{filters.dateRange.from}` and `{filters.dateRange.to}` are the bounds themselves.
 */
import { iso } from '../../common/clock.js'
import type { QueryClock } from './hogql-clock.js'
import { markDatetime } from './hogql-time-marks.js'
import type { HogqlNode } from './hogql-math.js'
import { parseQueryExpression } from './hogql-read.js'
import { FILTERS_MARK, HogqlMathError, isPunct, tokenize, type Token } from './hogql-tokens.js'

/** The values a query's placeholders name (PostHog's `values`). */
export type PlaceholderValues = Readonly<Record<string, unknown>>

const MAX_LIST = 1000

const punct = (value: string, at: Token): Token => ({ kind: 'punct', value, start: at.start, end: at.end })

/** The tokens of one scalar value, placed where the placeholder `at` stood. */
function scalar(value: unknown, name: string, at: Token): Token[] {
  const { start, end } = at
  if (typeof value === 'string') return [{ kind: 'text', value, start, end }]
  if (typeof value === 'boolean' || value === null) return [{ kind: 'name', value: String(value), quoted: false, start, end }]
  if (typeof value === 'number' && Number.isFinite(value)) {
    const n: Token = { kind: 'number', value: Math.abs(value), start, end }
    return value < 0 || Object.is(value, -0) ? [punct('(', at), punct('-', at), n, punct(')', at)] : [n]
  }
  throw new HogqlMathError(`The value of {${name}} is a text, a number, true, false, null or a list of them here.`)
}

/** `{filters}`, `{filters.dateRange.from}` or `{filters.dateRange.to}`, as the query's filters (`filters`) make them. */
function filtersTokens(chain: string[], filters: QueryClock['filters'], at: Token): Token[] {
  const { start, end } = at
  if (chain.length === 1) return [filters === undefined ? { kind: 'name', value: 'true', quoted: false, start, end } : punct(FILTERS_MARK, at)]
  const which = chain.join('.') === 'filters.dateRange.from' ? 'from' : chain.join('.') === 'filters.dateRange.to' ? 'to' : null
  if (which === null) throw new HogqlMathError(`The placeholder {${chain.join('.')}} is not read: the filters' placeholders are {filters}, {filters.dateRange.from} and {filters.dateRange.to}.`)
  const bound = filters?.[which]
  if (bound === undefined) throw new HogqlMathError(`{filters.dateRange.${which}} reads the query's filters.dateRange.date_${which}, which it does not give.`)
  return [{ kind: 'name', value: 'toDateTime', quoted: false, start, end }, punct('(', at), { kind: 'text', value: iso(bound), start, end }, punct(')', at)]
}

/**
 * `{filters}` where the query gives filters: the date range's bounds on the table the query reads, `to` exclusive
 * and `from` inclusive, as PostHog's ReplaceFilters writes them; `true` without bounds.
 */
export function filtersCondition(clock: QueryClock): HogqlNode {
  const sessions = clock.source?.columns.some((c) => c.name === '$start_timestamp') === true
  const table = clock.table ?? 'events'
  if (!sessions && (clock.source !== undefined || (table !== 'events' && table !== 'groups' && table !== 'join'))) {
    throw new HogqlMathError("{filters} is read in a SELECT of the events, sessions or groups table (PostHog's: it is not of the table read here).")
  }
  const field = parseQueryExpression(tokenize(sessions ? '$start_timestamp' : table === 'groups' ? 'created_at' : 'timestamp'), clock, false).expr
  const bound = (op: '<' | '>=', ms: number): HogqlNode => ({ op, type: 'number', args: [field, markDatetime({ op: 'number', type: 'number', value: ms })] })
  const { from, to, where } = clock.filters ?? {}
  // PostHog reads session filters of sessions and group filters of groups; skylark's are of events (and their persons).
  if (where !== undefined && (sessions || table === 'groups')) throw new HogqlMathError('{filters} reads its property filters in a SELECT of the events table here.')
  const conditions = [...(where === undefined ? [] : [parseQueryExpression(tokenize(where), clock, false).expr]), ...(to === undefined ? [] : [bound('<', to)]), ...(from === undefined ? [] : [bound('>=', from)])]
  return conditions.length === 0 ? { op: 'number', type: 'number', value: 1 } : conditions.length === 1 ? conditions[0] : { op: 'and', type: 'number', args: conditions }
}

/** `tokens` with each `{name}` replaced by its value's tokens; `filters`: the query's, which `{filters}` reads. */
export function fillPlaceholders(tokens: Token[], values: PlaceholderValues, filters?: QueryClock['filters']): Token[] {
  const out: Token[] = []
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]
    if (t.kind !== 'punct' || (t.value !== '{' && t.value !== '}')) {
      out.push(t)
      continue
    }
    // A name, or names joined by dots (`filters.dateRange.from`).
    let close = i + 2
    while (isPunct(tokens[close], '.') && tokens[close + 1]?.kind === 'name') close += 2
    if (t.value === '}' || tokens[i + 1]?.kind !== 'name' || !isPunct(tokens[close], '}')) throw new HogqlMathError(`A placeholder is a name in braces, as in {name}, at position ${t.start}.`)
    const chain = tokens.slice(i + 1, close).flatMap((n) => (n.kind === 'name' ? [n.value] : []))
    const at: Token = { ...t, end: tokens[close].end }
    i = close
    const name = chain.join('.')
    if (chain[0] === 'filters' && !Object.hasOwn(values, name)) {
      out.push(...filtersTokens(chain, filters, at))
      continue
    }
    if (!Object.hasOwn(values, name)) throw new HogqlMathError(`The placeholder {${name}} has no value: give it in the query's values${chain[0] === 'variables' ? " (SQL variables, PostHog's insight variables, are not read here)" : ''}.`)
    const value = values[name]
    if (!Array.isArray(value)) {
      out.push(...scalar(value, name, at))
      continue
    }
    if (value.length === 0 || value.length > MAX_LIST) throw new HogqlMathError(`The list {${name}} holds 1 to ${MAX_LIST} values here.`)
    out.push(punct('(', at))
    value.forEach((item, k) => out.push(...(k > 0 ? [punct(',', at)] : []), ...scalar(item, name, at)))
    out.push(punct(')', at))
  }
  return out
}
