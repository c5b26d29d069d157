/**
 * What reads a HogQL query's parts (hogql-parse.ts, with hogql-query.ts): its time and zone, the table or subquery
 * whose fields it reads, and the names and hooks the query around it gives.
 */
import type { BounceRule } from './experiment-types.js'
import type { HogqlNode } from './hogql-math.js'
import type { LookupOf } from './hogql-lookups.js'
import type { QueryTable } from './hogql-tables.js'
import type { RegexEngine } from './sqlite-actions.js'
import type { Token } from './hogql-tokens.js'
import type { Cte } from './hogql-with.js'

export interface QueryClock {
  now: number
  /** The project's time zone: a date and time without an offset is its wall clock, as PostHog reads it. */
  zone: string
  /** The table whose fields the query reads (events unless said). */
  table?: QueryTable
  /** A query of a subquery (`FROM (SELECT …) [AS alias]`) reads its columns by name. */
  source?: { columns: ReadonlyArray<{ name: string; node: () => HogqlNode }> }
  /** The names that may stand before a field and a dot: the table's and its alias (`events.event`, `e.event`). */
  qualifiers?: readonly string[]
  /** The queries WITH names (hogql-with.ts), which FROM reads by name, the innermost WITH's last. */
  ctes?: readonly Cte[]
  /** When a session bounces, for the sessions table's `$is_bounce` (DEFAULT_BOUNCE when absent). */
  bounce?: BounceRule
  /** A query of a join (hogql-join.ts) reads each name through it: the tokens from `at`, as a node, and where it ends. */
  joined?: (tokens: readonly Token[], at: number) => { node: HogqlNode; end: number }
  /**
   * The query's `filters` as read (PostHog's HogQLFilters): its date range's bounds (ms), each absent when open, and
   * its property filters (and the project's test account filters) as a HogQL condition (hogql-property-expr.ts).
   */
  filters?: { from?: number; to?: number; where?: string }
  /** `{filters}` where the query gives filters: the condition of the bounds on the table read here (hogql-placeholders.ts). */
  readFilters?: (clock: QueryClock) => HogqlNode
  /**
   * `x IN (SELECT …)`, and `(SELECT …)` as a value (`left` null): plans the subquery (its tokens, read where `clock`
   * reads) and gives the node its values fill (hogql-in.ts).
   */
  inQuery?: (tokens: Token[], left: HogqlNode | null, clock: QueryClock) => HogqlNode
  /** What an event's group or person has now (`group_<n>.properties.<path>`, `person.created_at` …): the node its values fill (hogql-lookups.ts). */
  lookup?: (of: LookupOf) => HogqlNode
  /** The stores' regex engine, which a query's regex calls' patterns must compile in (hogql-regex.ts). */
  regex?: RegexEngine
}
