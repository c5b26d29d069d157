/**
 * A HogQL query's plan (hogql-query.ts) run in Node on events read in any order: the embedded store's engine, which
 * clickhouse-query.ts's SQL is held to (test/unit/fuzz/hogql-query-stores.test.ts).
 */
import { evaluateHogql, hogqlContribution, hogqlHolds, pathIndex, type ColumnRef, type HogqlField, type HogqlMath, type HogqlNode, type HogqlValue, type Moment, type PropertyPath, type SourceRef, type StoredField } from './hogql-math.js'
import { ofGroup, type HogqlQueryPlan } from './hogql-query.js'
import { compareValues, hogqlQuantile, keyOf, storeAnswer, type AnswerValue } from './hogql-values.js'
import { arrayOfValues, quantilesOf } from './hogql-array-aggregations.js'
import { personReader } from './experiment-rows.js'
import type { RegexEngine } from './sqlite-actions.js'
import { isMoment, isPair, keepsValues, picksOne } from './hogql-functions.js'

/** One event as the embedded store reads it for a query: its fields, and the texts of the plan's paths. */
export interface QueryEvent {
  uuid: string
  event: string
  distinct_id: string
  person_id: string
  timestamp: number
  /** The stored JSON text, read only when the plan reads it whole (`readsProperties`). */
  properties?: string
  texts: ReadonlyArray<string | null>
  /** The other stored columns the plan reads (`stored`); created_at in ms. */
  stored?: Partial<Record<StoredField, string | number>>
}

/** One group as persons.db reads it for a query of the groups table (`FROM groups`). */
export interface QueryGroup {
  index: number
  key: string
  /** ms */
  created_at: number
  properties?: string
  texts: ReadonlyArray<string | null>
}

/** One distinct id as persons.db reads it for a query of `person_distinct_ids`: its person's uuid now. */
export interface QueryDistinctId {
  distinct_id: string
  person_id: string
  texts: ReadonlyArray<string | null>
}

/** One person as persons.db reads it for a query of the persons table (`FROM persons`). */
export interface QueryPerson {
  id: string
  /** ms */
  created_at: number
  is_identified: number
  properties?: string
  texts: ReadonlyArray<string | null>
}

interface Aggregate {
  n: number
  sum: number
  /** For the moments: the sums of the values' squares, cubes and fourth powers, and of a pair's second values their sum, their squares' and the products'. */
  squares: number
  cubes: number
  fourths: number
  pair: { sum: number; squares: number; products: number } | null
  extreme: number | null
  keys: Set<string | number> | null
  /** A quantile's values (quantiles' too). */
  values: number[] | null
  /** any's: the value of the first row (by time, then uuid) where it is not null. */
  first: { value: HogqlValue; at: number; id: string } | null
  /** groupArray's, groupUniqArray's and topK's: each row's value that is not null, with its place in time. */
  items: Array<{ value: HogqlValue; at: number; id: string }> | null
}


/** HAVING and the columns over the groups read a group's columns, never an event's properties (hogql-query.ts). */
const NO_PROPERTIES = (): never => {
  throw new Error('An expression over the groups reads no property')
}

function final(math: HogqlMath, a: Aggregate): AnswerValue {
  if (isMoment(math.aggregation)) return a.n === 0 ? null : moment(math.aggregation, a)
  switch (math.aggregation) {
    case 'groupArray':
    case 'groupUniqArray':
    case 'topK':
      // In time, then by uuid's text, as any() reads them (ClickHouse's order is whichever it reads them in).
      return arrayOfValues(math, a.items!.sort((x, y) => x.at - y.at || (x.id < y.id ? -1 : x.id > y.id ? 1 : 0)).map((item) => item.value))
    case 'quantiles':
      return quantilesOf(math, a.values!)
    case 'count':
      return a.n
    case 'uniq':
      return a.keys!.size
    case 'sum':
      return a.n === 0 ? null : a.sum
    case 'avg':
      return a.n === 0 ? null : a.sum / a.n
    case 'quantile':
      return a.n === 0 ? null : hogqlQuantile(a.values!, math.level ?? 0.5, math.kind)
    case 'any':
    case 'last':
      return a.first?.value ?? null
    default:
      return a.extreme
  }
}

/**
 * Current ClickHouse's moments (Moments.h: from the sums of the values, their squares and products, not Welford's
 * steps), their operations in its order: a variance is trimmed at 0 where rounding takes it below, as std::max(0, v)
 * (which makes a NaN 0 too), a sample's NaN below two values; the standard deviations are their roots; skewness
 * and kurtosis the third and fourth central moments over its 1.5th and 2nd powers; the covariances and the
 * correlation (CovarMoments, CorrMoments) are not trimmed.
 */
function moment(kind: Moment, { n, sum, squares, cubes, fourths, pair }: Aggregate): number {
  const sample = kind.endsWith('Samp')
  // A pair's aggregate (isPair) has its second values' sums.
  if (pair !== null && kind === 'corr') return (n * pair.products - sum * pair.sum) / Math.sqrt((n * squares - sum * sum) * (n * pair.squares - pair.sum * pair.sum))
  if (pair !== null) return (pair.products - (sum * pair.sum) / n) / (sample ? n - 1 : n)
  const v = (squares - (sum * sum) / n) / (sample ? n - 1 : n)
  const variance = sample && n <= 1 ? Number.NaN : v > 0 ? v : 0
  // The third and fourth central moments, in Moments.h's order of operations (0 of one value), over the variance's
  // power; NaN where the variance is not above 0.
  if (kind === 'skewPop' || kind === 'skewSamp' || kind === 'kurtPop' || kind === 'kurtSamp') {
    const skew = kind.startsWith('skew')
    const central = n === 1 ? 0 : skew ? (cubes - (3 * squares - 2 * sum * sum / n) * sum / n) / n : (fourths - (4 * cubes - (6 * squares - 3 * sum * sum / n) * sum / n) * sum / n) / n
    return variance > 0 ? central / Math.pow(variance, skew ? 1.5 : 2) : Number.NaN
  }
  return kind === 'stddevPop' || kind === 'stddevSamp' ? Math.sqrt(variance) : variance
}

/** `value` (and a pair's `second`) of the row at `at` (ms) with the uuid `id` added to the aggregate. */
function add(math: HogqlMath, a: Aggregate, value: HogqlValue, at: number, id: string, second: HogqlValue = null): void {
  if (keepsValues(math)) {
    if (value !== null) a.items!.push({ value, at, id })
    return
  }
  if (picksOne(math)) {
    // ClickHouse's any is whichever value it meets first; the first in time is one both stores give alike. argMax's
    // is the last in time (then by uuid's text), as argMin's is the first.
    const later = a.first !== null && (at > a.first.at || (at === a.first.at && id > a.first.id))
    if (value !== null && (a.first === null || later === (math.aggregation === 'last'))) a.first = { value, at, id }
    return
  }
  const c = hogqlContribution(math, value)
  if (c === null) return
  if (isPair(math)) {
    // A row adds to a pair's moments where both values are numbers, as ClickHouse's Null combinator skips any NULL.
    const d = hogqlContribution(math, second) as number | null
    if (d === null) return
    a.pair!.sum += d
    a.pair!.squares += d * d
    a.pair!.products += (c as number) * d
  }
  a.n++
  if (math.aggregation === 'uniq') a.keys!.add(c)
  else if (math.aggregation === 'quantile' || math.aggregation === 'quantiles') a.values!.push(c as number)
  else if (typeof c === 'number') {
    a.sum += c
    a.squares += c * c
    a.cubes += c * c * c
    a.fourths += c * c * c * c
    if (a.extreme === null || (math.aggregation === 'min' ? c < a.extreme : c > a.extreme)) a.extreme = c
  }
}

/** The rows a plan reads: its table's, or a join's (arrays of its columns). */
export type QueryRows = Iterable<QueryEvent> | Iterable<QueryPerson> | Iterable<QueryGroup> | Iterable<QueryDistinctId> | Iterable<HogqlValue[]>

/**
 * The plan run on events read in any order (the embedded store's): the answer's rows, at most `plan.fetch`, with the
 * values the stores give (dates and times as ms, texts and arrays as storeAnswer reads them). `ordered`: the rows come in the innermost plan's `scan` order (of
 * `timestamp`), so its run may stop early.
 */
export function runHogqlQuery(plan: HogqlQueryPlan, events: QueryRows, regex: RegexEngine | null, ordered = false): AnswerValue[][] {
  return Array.from(planRows(plan, events, regex, ordered), (row) => row.map(storeAnswer))
}

/** A plan below the one run, and its rows, computed apart (a subquery's join: hogql-join.ts). */
type Below = { plan: HogqlQueryPlan; rows: AnswerValue[][] }

/** The plan run over the rows of a plan below it, given: none of its own table. */
export function runHogqlQueryOver(plan: HogqlQueryPlan, below: Below, regex: RegexEngine | null): AnswerValue[][] {
  return Array.from(planRows(plan, [], regex, false, below), (row) => row.map(storeAnswer))
}

/**
 * The plan's rows, each yielded once known: a query neither grouped nor ordered yields each as it reads it, so a query
 * of such a subquery reads its rows one by one, never all held at once.
 */
function* planRows(plan: HogqlQueryPlan, input: QueryRows, regex: RegexEngine | null, ordered: boolean, below?: Below): Generator<AnswerValue[]> {
  // A query of a subquery reads the subquery's rows: its fields (`sub_<i>`) are their values.
  const events = plan.source === null ? input : plan.source === below?.plan ? below.rows : planRows(plan.source, input, regex, ordered, below)
  // Read in the order of its first key, the run ends at the first event past the time of the fetch-th row kept: none
  // after it can come before those (the events of that time are all read, the other keys ordering them).
  const stopsEarly = ordered && plan.source === null && plan.scan !== null
  let boundary: number | null = null
  const at = pathIndex(plan.paths)
  const person = personReader(plan.persons)
  // A row's fields by name: the plan reads those of its table only (hogql-parse.ts).
  let current: QueryEvent & QueryPerson & QueryGroup & QueryDistinctId
  const property = (path: PropertyPath, ofPerson: boolean) => (ofPerson ? person(path, current.distinct_id) : (current.texts[at(path)] ?? null))
  // A join's rows (hogql-join.ts's joinRows) are arrays of its columns, as a subquery's.
  const field =
    plan.source === null && plan.join === null
      ? (name: HogqlField) => current.stored?.[name as StoredField] ?? current[name as Exclude<HogqlField, ColumnRef | StoredField | SourceRef>] ?? ''
      : (name: HogqlField) => (current as unknown as HogqlValue[])[Number(name.slice(4))]
  const value = (node: HogqlNode) => evaluateHogql(node, property, regex, field)
  type Row = { values: AnswerValue[]; keys: HogqlValue[] }
  const rows: Row[] = []
  const groups = new Map<string, { values: HogqlValue[]; aggregates: Aggregate[] }>()
  const seen = new Set<string>()
  /** DISTINCT: whether these values are new. */
  const firstSeen = (values: readonly AnswerValue[]) => {
    const key = keyOf(values)
    if (seen.has(key)) return false
    seen.add(key)
    return true
  }
  const late = plan.columns.map(ofGroup)
  // A group's columns that are none of its aggregations nor over them, read of its first row, and its aggregates.
  const newGroup = () => ({
    values: plan.columns.map((c, i) => (c.math || late[i] ? null : value(c.expr))),
    aggregates: plan.columns.map((c): Aggregate => ({ n: 0, sum: 0, squares: 0, cubes: 0, fourths: 0, pair: c.math !== null && isPair(c.math) ? { sum: 0, squares: 0, products: 0 } : null, extreme: null, keys: c.math?.aggregation === 'uniq' ? new Set() : null, values: c.math?.aggregation === 'quantile' || c.math?.aggregation === 'quantiles' ? [] : null, first: null, items: keepsValues(c.math) ? [] : null })),
  })
  // Without groups or an order, the first `fetch` rows read (of LIMIT BY's, the first n of each) are the answer.
  const readsAll = plan.grouped || plan.orderBy.length > 0
  const within = limitedBy(plan)
  if (!readsAll && plan.fetch === 0) return
  let yielded = 0
  const sortRows = (list: Row[]) => list.sort((x, y) => {
    for (let i = 0; i < plan.orderBy.length; i++) {
      const c = compareValues(x.keys[i], y.keys[i], plan.orderBy[i].desc, plan.orderBy[i].nullsFirst)
      if (c !== 0) return c
    }
    return 0
  })
  for (const event of events) {
    current = event as QueryEvent & QueryPerson & QueryGroup & QueryDistinctId
    if (boundary !== null && current.timestamp !== boundary) break
    if (plan.where !== null && !hogqlHolds(plan.where, property, regex, field)) continue
    if (plan.grouped) {
      const keyValues = plan.groupBy.map(value)
      const key = keyOf(keyValues)
      let group = groups.get(key)
      if (group === undefined) {
        group = newGroup()
        groups.set(key, group)
      }
      // The row's place in time, which any() reads: an event's, a person's or a group's.
      const [rowAt, rowId] = [current.timestamp ?? current.created_at, current.uuid ?? current.id ?? `${current.index}:${current.key}`]
      plan.columns.forEach((c, i) => {
        if (c.math === null) return
        // A pair's expression is the array of its two values (mathOf).
        const [first, second] = isPair(c.math) ? (c.expr as HogqlNode & { op: 'call' }).args : [c.expr]
        add(c.math, group.aggregates[i], value(first), rowAt, rowId, second === undefined ? null : value(second))
      })
      continue
    }
    const values = plan.columns.map((c) => value(c.expr))
    if (plan.distinct && !firstSeen(values)) continue
    if (!readsAll) {
      if (!within(values)) continue
      yield values
      if (++yielded >= plan.fetch) return
      continue
    }
    rows.push({ values, keys: plan.orderBy.map((o) => (o.column === null ? value(o.expr) : values[o.column])) })
    if (stopsEarly && rows.length === plan.fetch) boundary = current.timestamp
    // Only the first `fetch` in order are kept: sorting now and then bounds what a scan of many events holds (all
    // are, for LIMIT BY, which drops some of them).
    if (plan.orderBy.length > 0 && plan.limitBy === null && rows.length >= 2 * plan.fetch + 1000) sortRows(rows).length = plan.fetch
  }
  // An array (groupArray's) is read by the functions of arrays only (hogql-arrays.ts's items), never a key: the parser
  // refuses it anywhere else (hogql-query-columns.ts's arrayColumn and columnRef).
  const ofColumns = (values: readonly AnswerValue[]) => (name: HogqlField) => values[Number(name.slice(4))] as HogqlValue
  const kept = (values: readonly AnswerValue[]) => plan.having === null || hogqlHolds(plan.having, NO_PROPERTIES, regex, ofColumns(values))
  if (plan.grouped) {
    // Aggregations without GROUP BY make one row even of no events, as in SQL.
    // Its other columns read no event (hogql-query.ts), so they are evaluated without one.
    if (groups.size === 0 && plan.groupBy.length === 0) groups.set('', newGroup())
    for (const group of groups.values()) {
      const values = plan.columns.map((c, i) => (c.math ? final(c.math, group.aggregates[i]) : group.values[i]))
      // A column over the others reads none over the groups itself (hogql-query.ts inlines those).
      plan.columns.forEach((c, i) => {
        if (late[i]) values[i] = evaluateHogql(c.expr, NO_PROPERTIES, regex, ofColumns(values))
      })
      if (!kept(values) || (plan.distinct && !firstSeen(values))) continue
      rows.push({ values, keys: plan.orderBy.map((o) => values[o.column!] as HogqlValue) })
    }
  }
  if (plan.orderBy.length > 0) sortRows(rows)
  for (const row of (plan.limitBy === null ? rows : rows.filter((row) => within(row.values))).slice(0, plan.fetch)) yield row.values
}

/** LIMIT n BY's test of the rows in order: whether a row is among the first n of its columns' values. */
function limitedBy({ limitBy }: HogqlQueryPlan): (values: readonly AnswerValue[]) => boolean {
  if (limitBy === null) return () => true
  const seen = new Map<string, number>()
  return (values) => {
    const key = keyOf(limitBy.columns.map((i) => values[i]))
    const count = seen.get(key) ?? 0
    seen.set(key, count + 1)
    return count < limitBy.n
  }
}
