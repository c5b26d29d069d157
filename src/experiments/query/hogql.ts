/**
 * `{"query": {"kind": "HogQLQuery", "query": "SELECT …"}}` at the query endpoint: the plan (storage's
 * hogql-query.ts) run by the event store, answered as PostHog's HogQLQueryResponse: `results` (rows of values),
 * `columns`, `types` (`[name, ClickHouse type]`), `hogql` (the query as read), and without a LIMIT in the query
 * `hasMore`, `limit` and `offset`, as PostHog's HogQLHasMorePaginator. Dates and times are written as PostHog's JSON
 * writes a datetime of the project's zone (`2024-01-31T12:00:00.123000Z`, or with the zone's offset). Answers are
 * computed at each request (is_cached false): new events are seen at once.
 */
import { iso } from '../../common/clock.js'
import { ValidationError } from '../../common/errors.js'
import type { JsonObject } from '../../common/json.js'
import { isoformat } from '../../common/time-zones.js'
import type { Project } from '../../management/index.js'
import { DEFAULT_RETURNED_ROWS, HogqlMathError, parseHogqlQuery, type EventStore, type HogqlQueryPlan } from '../../storage/events/index.js'

/** A datetime as PostHog's JSON writes one: Python's isoformat, UTC's offset as Z. */
function datetimeText(ms: number, zone: string): string {
  const text = isoformat(Math.round(ms * 1000), zone)
  return text.endsWith('+00:00') ? `${text.slice(0, -6)}Z` : text
}

function planOf(query: JsonObject, project: Project, nowMs: number): HogqlQueryPlan {
  if (typeof query.query !== 'string') throw new ValidationError('invalid', 'query: a HogQLQuery needs its query, a text (SELECT … FROM events).', 'query')
  if (query.values !== undefined && query.values !== null && Object.keys(query.values as object).length > 0) {
    throw new ValidationError('invalid', 'query: placeholders ({name} and values) are not read here.', 'values')
  }
  try {
    return parseHogqlQuery(query.query, { now: nowMs, zone: project.timezone })
  } catch (error) {
    if (error instanceof HogqlMathError) throw new ValidationError('invalid', error.message, null)
    throw error
  }
}

export async function answerHogqlQuery(events: EventStore, project: Project, query: JsonObject, nowMs: number): Promise<JsonObject> {
  const plan = planOf(query, project, nowMs)
  const rows = await events.hogqlQuery(project.id, plan)
  const limit = plan.paginated ? DEFAULT_RETURNED_ROWS : plan.fetch
  const results = rows.slice(0, limit).map((row) => row.map((value, i) => (plan.columns[i].datetime && typeof value === 'number' ? datetimeText(value, project.timezone) : value)))
  return {
    results,
    columns: plan.columns.map((c) => c.name),
    types: plan.columns.map((c) => [c.name, c.type]),
    hogql: query.query as string,
    ...(plan.paginated ? { hasMore: rows.length > limit, limit, offset: 0 } : {}),
    timezone: project.timezone,
    is_cached: false,
    last_refresh: iso(nowMs),
    query_status: null,
    error: null,
    timings: [],
  }
}
