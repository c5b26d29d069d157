/**
 * A HogQL query of SELECTs joined by UNION ALL (or UNION DISTINCT), HogQL's set of queries: each planned as a query of
 * its own (hogql-query.ts) and run by its store; the answer is their rows in turn (each distinct row once for UNION
 * DISTINCT), named and typed as the first's, as ClickHouse answers it. Each keeps its own ORDER BY and LIMIT (HogQL's
 * grammar gives the set none of its own); one without LIMIT reads at most the answer's rows and one more.
 */
import type { QueryClock } from './hogql-clock.js'
import { MAX_SELECT_RETURNED_ROWS, queryTokens, topPlan, type HogqlQueryPlan, type QueryColumn } from './hogql-query.js'
import type { PlaceholderValues } from './hogql-placeholders.js'
import { closesAtEnd, HogqlMathError, isPunct, isWord, type Token } from './hogql-tokens.js'

export interface HogqlQuerySet {
  /** The SELECTs, in order: one without UNION. */
  parts: HogqlQueryPlan[]
  /** The answer's columns: named as the first SELECT's, typed as the first SELECT's that gives each other than NULL. */
  columns: QueryColumn[]
  /** UNION DISTINCT: each row once. */
  distinct: boolean
  /** Whether some SELECT has no LIMIT: the answer then has `limit` rows at most and says whether there were more. */
  paginated: boolean
  /** The rows the answer holds at most. */
  limit: number
}

const MAX_PARTS = 20
const refuse = (detail: string) => new HogqlMathError(detail)

/** A column's kind as a UNION matches them: ClickHouse finds no type for a text and a number, nor (here) for a date and a date and time. */
function kind(c: QueryColumn): string | null {
  if (c.time !== null) return c.time === 'date' ? 'a date' : 'a date and time'
  if (c.math === null && c.expr.type === 'null') return null
  return /String|UUID/.test(c.type) ? 'a text' : 'a number'
}

/** The query's SELECTs, split at UNION ALL or UNION DISTINCT outside parentheses, each planned. */
export function parseHogqlQuerySet(input: string, clock: QueryClock, defaultLimit: number, values: PlaceholderValues = {}): HogqlQuerySet {
  const { tokens, text } = queryTokens(input, values, clock.filters)
  const parts: Token[][] = [[]]
  let depth = 0
  let distinct: boolean | null = null
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]
    if (isPunct(t, '(')) depth++
    else if (isPunct(t, ')')) depth--
    if (depth !== 0 || !isWord(t, 'union')) {
      parts[parts.length - 1].push(t)
      continue
    }
    const mode = isWord(tokens[i + 1], 'all') ? false : isWord(tokens[i + 1], 'distinct') ? true : null
    if (mode === null) throw refuse('UNION is written UNION ALL or UNION DISTINCT here, as HogQL reads it.')
    if (distinct !== null && mode !== distinct) throw refuse('A query here joins its SELECTs with UNION ALL or with UNION DISTINCT, not both.')
    if (parts.length === MAX_PARTS) throw refuse(`A query here joins at most ${MAX_PARTS} SELECTs.`)
    distinct = mode
    parts.push([])
    i++
  }
  // `(SELECT …) UNION ALL (SELECT …)`: a SELECT in parentheses is that SELECT.
  const plans = parts.map((part) => topPlan(parts.length > 1 && isPunct(part[0], '(') && closesAtEnd(part, 0) ? part.slice(1, -1) : part, text, clock, defaultLimit))
  // Each column as the first SELECT that gives it other than NULL names and types it: its rows are written so.
  const columns = plans[0].columns.slice(0, plans[0].shown).map((c, i) => plans.map((p) => p.columns[i]).find((other) => other !== undefined && kind(other) !== null) ?? c)
  plans.forEach((plan, k) => {
    if (plan.shown !== columns.length) throw refuse(`The SELECTs of a UNION give as many columns each: the first gives ${columns.length}, SELECT ${k + 1} gives ${plan.shown}.`)
    plan.columns.slice(0, plan.shown).forEach((c, i) => {
      const [a, b] = [kind(columns[i]), kind(c)]
      if (a !== null && b !== null && a !== b) throw refuse(`Column ${i + 1} of the UNION is ${a} in one SELECT and ${b} in SELECT ${k + 1}.`)
    })
  })
  const paginated = plans.some((p) => p.paginated)
  return { parts: plans, columns: columns.map((c, i) => ({ ...c, name: plans[0].columns[i].name })), distinct: distinct ?? false, paginated, limit: paginated ? defaultLimit : MAX_SELECT_RETURNED_ROWS }
}
