/**
 * `x IN (SELECT …)` of a HogQL query: the parser hands the subquery's tokens to the query's hook (QueryClock's
 * `inQuery`), which plans it and gives a node to stand for the test; the caller runs each subquery first, inner ones
 * first, and fills its node with the values as `x = v1 or x = v2 …` (fillInSet), the form of a literal IN list, so the
 * stores run the query as one written with its values (ClickHouse's SQL as one IN). A NULL in the set holds for a
 * NULL x (isNull), as PostHog runs its queries with ClickHouse's transform_null_in = 1: `NULL IN (SELECT NULL)` is 1
 * there, where plain ClickHouse leaves NULLs out of every set.
 *
 * A scalar subquery (`count() / (SELECT count() FROM events)`) is planned and run alike, without a left side: its
 * node is a `scalar` of its column's type, filled with its one row's value, NULL without a row, and more than one
 * row refused, as ClickHouse's scalar subqueries are.
 */
import type { QueryClock } from './hogql-clock.js'
import { FUNCTION_BY_NAME, MAX_IN_TERMS, size, typedCall } from './hogql-functions.js'
import type { HogqlNode, HogqlValue } from './hogql-math.js'
import type { HogqlQueryPlan } from './hogql-query.js'
import { HogqlMathError, type Token } from './hogql-tokens.js'
import { answered, type AnswerValue } from './hogql-values.js'
import { columnRef } from './hogql-query-columns.js'
import { isDatetime } from './hogql-time-marks.js'

/** A subquery of IN: its plan, the left side it tests (none for a scalar subquery), and the node its values fill. */
export interface InSet {
  plan: HogqlQueryPlan
  left: HogqlNode | null
  node: HogqlNode
}

/** Subqueries of IN within subqueries of IN, at most. */
const MAX_NESTING = 3

/** The hook that plans each subquery of IN (`plan`) and keeps it in `sets`, inner ones first. */
export function inSubqueries(plan: (tokens: Token[], clock: QueryClock) => HogqlQueryPlan, sets: InSet[]): NonNullable<QueryClock['inQuery']> {
  let nesting = 0
  return (tokens, left, clock) => {
    if (nesting === MAX_NESTING) throw new HogqlMathError(`Subqueries of IN nest at most ${MAX_NESTING} deep here.`)
    nesting++
    let sub: HogqlQueryPlan
    try {
      sub = plan(tokens, clock)
    } finally {
      nesting--
    }
    if (sub.shown !== 1) throw new HogqlMathError(`The subquery of ${left === null ? 'a value' : 'IN'} gives one column here, not ${sub.shown}.`)
    // One value more than a set (or a value) holds is enough to refuse it.
    sub.fetch = Math.min(sub.fetch, left === null ? 2 : MAX_IN_TERMS + 1)
    // Read as a column is (an array is refused).
    const column = columnRef(sub.columns, 0)
    if (left === null) {
      if (isDatetime(column)) throw new HogqlMathError('A subquery giving a date and time is not read as a value here: compare within it, or test with x IN (SELECT …).')
      const node: HogqlNode = { op: 'scalar', type: column.type, value: null }
      sets.push({ plan: sub, left, node })
      return node
    }
    // Until filled, a test that reads the left side (the plan's paths are found in its nodes) as a date and time
    // may be read (compared with one), and that no fill leaves.
    const node: HogqlNode = { op: 'or', type: 'number', args: [{ op: '=', type: 'number', args: [left, left] }] }
    sets.push({ plan: sub, left, node })
    return node
  }
}

/** The set's node as the test of its values (the subquery's rows' one column), or a scalar's as its one value. */
export function fillInSet(set: InSet, answers: readonly AnswerValue[]): void {
  // Its one column is no array: it is read as a column (columnRef, which refuses one).
  const values = answers as readonly HogqlValue[]
  if (set.left === null) {
    if (values.length > 1) throw new HogqlMathError('Scalar subquery returned more than one row.')
    ;(set.node as { value: HogqlValue }).value = answered(values[0] ?? null)
    return
  }
  const left = set.left
  // NaN and infinities are NULL, as a store's answer writes them (ClickHouse's JSON). NULL last, where ClickHouse's
  // SQL reads it beside the list (clickhouse-hogql.ts's #inList).
  const known = values.map(answered)
  const distinct = [...new Set(known.filter((v) => v !== null)), ...(known.includes(null) ? [null] : [])]
  if (distinct.length * size(left) > MAX_IN_TERMS) throw new HogqlMathError(`The subquery of IN gives too many values here: at most ${MAX_IN_TERMS} (fewer for a left side that is no property).`)
  const equals = distinct.map((v): HogqlNode => {
    if (v === null) return typedCall(FUNCTION_BY_NAME.get('isnull')!, [left])
    return { op: '=', type: 'number', args: [left, typeof v === 'number' ? { op: 'number', type: 'number', value: v } : { op: 'text', type: 'text', value: v }] }
  })
  // None: a test no row passes (0 = 1).
  const none: HogqlNode = { op: '=', type: 'number', args: [{ op: 'number', type: 'number', value: 0 }, { op: 'number', type: 'number', value: 1 }] }
  ;(set.node as { args: HogqlNode[] }).args = equals.length === 0 ? [none] : equals
}
