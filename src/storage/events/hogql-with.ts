/**
 * A HogQL query's WITH clause (hogql-query.ts reads the SELECT after it): `WITH name AS (SELECT …)`, a common table
 * expression that FROM reads by name as a subquery (PostHog's CTE of a subquery), and `WITH expression AS name`,
 * ClickHouse's constant that the query reads by name (PostHog's CTE of a column), each separated by commas.
 */
import { closesAtEnd, HogqlMathError, isPunct, isWord, splitCommas, type Token } from './hogql-tokens.js'

/** A named query: FROM reads `name` as the subquery `tokens` (without their parentheses). */
export interface Cte {
  name: string
  tokens: Token[]
}

const refuse = (detail: string) => new HogqlMathError(detail)

/**
 * `tokens` with each reading of `name` (not a key after a dot, a function, a qualifier or an alias being given)
 * replaced by `expr` in parentheses, placed where the name stood, so that a column reading it is named as written.
 */
function substituted(tokens: Token[], name: string, expr: Token[]): Token[] {
  return tokens.flatMap((t, i) => {
    const reads = t.kind === 'name' && !t.quoted && t.value === name && !isPunct(tokens[i - 1], '.') && !isPunct(tokens[i + 1], '(') && !isPunct(tokens[i + 1], '.') && !isWord(tokens[i - 1], 'as')
    return reads ? [{ kind: 'punct', value: '(', start: t.start, end: t.start } as Token, ...expr, { kind: 'punct', value: ')', start: t.end, end: t.end } as Token] : [t]
  })
}

/**
 * The CTEs of a query that begins with WITH, and the SELECT after it, every constant's name in that SELECT and in
 * the later CTEs read as its expression.
 */
export function readWith(tokens: Token[]): { ctes: Cte[]; select: Token[] } {
  let depth = 0
  const at = tokens.findIndex((t, i) => {
    if (isPunct(t, '(')) depth++
    else if (isPunct(t, ')')) depth--
    return i > 0 && depth === 0 && isWord(t, 'select')
  })
  if (at < 0) throw refuse('WITH is followed by its SELECT here, as in WITH recent AS (SELECT … FROM events) SELECT count() FROM recent.')
  const ctes: Cte[] = []
  let select = tokens.slice(at)
  const parts = splitCommas(tokens.slice(1, at), 'WITH')
  parts.forEach((part, i) => {
    const [name, as, open, first] = part
    if (name.kind === 'name' && isWord(as, 'as') && isPunct(open, '(') && isWord(first, 'select') && closesAtEnd(part, 2)) {
      ctes.push({ name: name.value, tokens: part.slice(3, -1) })
      return
    }
    const alias = part[part.length - 1]
    if (part.length < 3 || alias.kind !== 'name' || !isWord(part[part.length - 2], 'as')) {
      throw refuse('WITH names queries (name AS (SELECT …)) or expressions (expression AS name) here, separated by commas.')
    }
    const expr = part.slice(0, -2)
    select = substituted(select, alias.value, expr)
    for (const later of parts.slice(i + 1)) later.splice(0, later.length, ...substituted(later, alias.value, expr))
  })
  return { ctes, select }
}
