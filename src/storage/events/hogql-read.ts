/**
 * The texts HogQL is read from here, each by hogql-parse.ts's parser: `math_hogql` (an aggregation call or an
 * expression summed), a HogQL property filter's condition, and one expression of a HogQL query.
 */
import { mathOf } from './hogql-functions.js'
import type { HogqlMath, HogqlNode } from './hogql-math.js'
import type { QueryClock } from './hogql-clock.js'
import { Parser, type QueryScope } from './hogql-parse.js'
import { HogqlMathError, tokenize, type Token } from './hogql-tokens.js'

const MAX_LENGTH = 10_000

/** Reads a `math_hogql` text, or throws HogqlMathError saying what it can't read. */
export function parseHogqlMath(text: string): HogqlMath {
  if (text.length > MAX_LENGTH) throw new HogqlMathError(`math_hogql is longer than ${MAX_LENGTH} characters.`)
  const parser = new Parser(tokenize(text), 'HogQL math')
  if (parser.tokens.length === 0) throw new HogqlMathError('math_hogql is empty.')
  const call = parser.aggregation()
  if (call === null) {
    const expr = parser.whole()
    return { aggregation: 'sum', expr }
  }
  return mathOf(call)
}

/**
 * One expression of a HogQL query (hogql-query.ts cuts the query into them): with `aggregations`, an aggregation
 * when the whole expression is one call of it (`count()`, `sumIf(properties.x, event = 'a')`), as math reads it.
 */
export function parseQueryExpression(tokens: Token[], clock: QueryClock, aggregations: boolean, scope: QueryScope | null = null): { math: HogqlMath | null; expr: HogqlNode } {
  const parser = new Parser(tokens, 'HogQL queries', clock, scope)
  if (tokens.length === 0) throw new HogqlMathError('An expression of the query is empty.')
  const call = aggregations ? parser.aggregation() : null
  if (call !== null) {
    const math = mathOf(call)
    return { math, expr: math.expr }
  }
  const expr = parser.whole()
  return { math: null, expr }
}

/**
 * Reads a HogQL property filter's expression (PostHog's `property_to_expr` parses its `key`; operator and value
 * are not read): a condition, which an event passes when it is a number other than 0. A text is no condition,
 * as ClickHouse refuses a String in WHERE; null passes nothing.
 */
export function parseHogqlCondition(text: string): HogqlNode {
  if (text.length > MAX_LENGTH) throw new HogqlMathError(`The expression is longer than ${MAX_LENGTH} characters.`)
  const parser = new Parser(tokenize(text), 'HogQL filters')
  if (parser.tokens.length === 0) throw new HogqlMathError('The expression is empty.')
  const expr = parser.whole()
  if (expr.type === 'text') throw new HogqlMathError('The expression is a text, not a condition: compare it, as in properties.plan = \'pro\'.')
  return expr
}
