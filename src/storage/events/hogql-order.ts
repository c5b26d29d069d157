/**
 * A HogQL query's ORDER BY, LIMIT n BY and LIMIT (hogql-query.ts). An ORDER BY key is a column (by alias, by number,
 * or as an expression equal to one's), a hidden column of a query that groups (an aggregation, a key, or an
 * expression of them), or else an expression of each event. LIMIT n BY keys, ClickHouse's, keep the first n rows in
 * order of each of their values, after ORDER BY and before LIMIT; they are read as ORDER BY's, and each must be a
 * column: the stores compare the rows' values.
 */
import type { HogqlNode } from './hogql-math.js'
import { aliased, callsAggregation, columnAt, LATER, overGroups, same, wholeOrLater, type GroupScope } from './hogql-query-columns.js'
import { HogqlMathError, isWord, splitCommas, type Token } from './hogql-tokens.js'

/** An ORDER BY key: a column, or (in a query that neither groups nor is DISTINCT) an expression of each event. */
export interface OrderKey {
  column: number | null
  expr: HogqlNode
  desc: boolean
  /** NULLS FIRST: NULL, then NaN, before the values (else after them, NaN then NULL, either way). */
  nullsFirst?: true
}

/** LIMIT n BY columns: at most n rows of each of their values. */
export interface LimitBy {
  n: number
  columns: number[]
}

/** What ORDER BY's keys read beyond an expression over the groups. */
export interface KeyScope extends GroupScope {
  shown: number
  text: string
  grouped: boolean
  distinct: boolean
}

const refuse = (detail: string) => new HogqlMathError(detail)

/** ORDER BY's keys (`clause` ORDER BY), or LIMIT BY's (no direction read). */
export function orderKeys(tokens: Token[], scope: KeyScope, clause: 'ORDER BY' | 'LIMIT BY' = 'ORDER BY'): OrderKey[] {
  return splitCommas(tokens, clause).map((part): OrderKey => {
    let desc = false
    let nullsFirst = false
    if (clause === 'ORDER BY') {
      // NULLS LAST is how both stores order without it.
      if (part.length > 2 && isWord(part[part.length - 2], 'nulls') && ['first', 'last'].some((w) => isWord(part[part.length - 1], w))) {
        nullsFirst = isWord(part[part.length - 1], 'first')
        part = part.slice(0, -2)
      }
      const end = part[part.length - 1]
      if (['asc', 'ascending', 'desc', 'descending'].some((w) => isWord(end, w))) {
        desc = (end.value as string).toLowerCase().startsWith('desc')
        part = part.slice(0, -1)
      }
    }
    return { ...keyAt(part, scope, clause), desc, ...(nullsFirst ? { nullsFirst } : {}) }
  })
}

/** One key's column, or (in a query that neither groups nor is DISTINCT, ordering) its expression of each event. */
function keyAt(part: Token[], scope: KeyScope, clause: 'ORDER BY' | 'LIMIT BY'): { column: number | null; expr: HogqlNode } {
  const { clock, columns, shown, text, grouped, distinct, groupBy, aliases } = scope
  const at = aliased(part, columns, shown)
  if (at !== null) return { column: at, expr: columns[at].expr }
  const parsed = wholeOrLater(part, clock, aliases)
  const written = text.slice(part[0].start, part[part.length - 1].end)
  if (parsed !== null) {
    const match = columns.findIndex((c) => same(c.math, parsed.math) && same(c.expr, parsed.expr))
    if (match >= 0) return { column: match, expr: parsed.expr }
  }
  const { math, expr } = parsed ?? { math: null, expr: LATER }
  // An aggregation, a key or an expression of them the answer doesn't show is a hidden column, as HAVING's are.
  if (grouped && !distinct) {
    if (math !== null || groupBy.some((g) => same(g, expr))) return { column: columnAt(columns, math, expr, clock.zone), expr }
    const over = overGroups(part, scope, `${clause} ${written} must name a column, an aggregation or a GROUP BY expression of this query, or an expression of them, as it groups.`)
    return { column: columnAt(columns, null, over, clock.zone), expr: over }
  }
  if (parsed === null ? callsAggregation(part) : math !== null) throw refuse(`${clause} ${written} orders by an aggregation: ${distinct ? 'SELECT DISTINCT orders by its columns' : 'the query must group (GROUP BY) or aggregate'}.`)
  if (distinct) throw refuse(`${clause} ${written} must name a column of this query, as it is DISTINCT.`)
  if (clause === 'LIMIT BY') throw refuse(`LIMIT BY ${written} must name a column of this query here: select it, as in SELECT distinct_id, … LIMIT 1 BY distinct_id.`)
  // An expression of the columns' aliases reads their expressions.
  return { column: null, expr: parsed === null ? overGroups(part, scope, null) : expr }
}

/** `LIMIT n BY keys`, its tokens after LIMIT: n, then BY's keys, read as ORDER BY's and each a column. */
export function limitBy(tokens: Token[], scope: KeyScope): LimitBy {
  const [n, , ...keys] = tokens
  if (n?.kind !== 'number' || !Number.isSafeInteger(n.value) || keys.length === 0) throw refuse('LIMIT … BY takes a whole number and columns here, as in LIMIT 1 BY distinct_id.')
  return { n: n.value, columns: orderKeys(keys, scope, 'LIMIT BY').map((k) => k.column!) }
}
