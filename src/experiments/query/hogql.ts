/**
 * `{"query": {"kind": "HogQLQuery", "query": "SELECT …"}}` at the query endpoint: the plan (storage's
 * hogql-query.ts) run by the event store, answered as PostHog's HogQLQueryResponse: `results` (rows of values),
 * `columns`, `types` (`[name, ClickHouse type]`), `hogql` (the query as read), and without a LIMIT in the query
 * `hasMore`, `limit` and `offset`, as PostHog's HogQLHasMorePaginator. The person properties it reads are resolved from
 * persons.db first (each text with its persons' distinct ids, as HogQL math in experiments reads them). Dates and times are written as PostHog's JSON
 * writes a datetime of the project's zone (`2024-01-31T12:00:00.123000Z`, or with the zone's offset). Answers are
 * computed at each request (is_cached false): new events are seen at once. An export of such a query
 * (management/exports, `export_context.source`) reads its rows here too.
 */
import { setImmediate } from 'node:timers/promises'
import { iso } from '../../common/clock.js'
import { parseDateBound } from '../../common/relative-dates.js'
import { ValidationError } from '../../common/errors.js'
import { isPlainObject, type JsonObject } from '../../common/json.js'
import { isoformat } from '../../common/time-zones.js'
import { compileSearchRegex } from '../../flags/index.js'
import { bounceRule, performedReader, type ActionRecord, type CohortById, type PerformedReader, type Project } from '../../management/index.js'
import { DEFAULT_RETURNED_ROWS, fillInSet, fillLookup, HogqlMathError, innermost, joinBelow, joinRows, MAX_JOIN_ROWS, parseHogqlQuerySet, propertyFiltersHogql, runHogqlQuery, runHogqlQueryOver, withPersons, type EventStore, type HogqlQueryPlan, type HogqlQuerySet, type HogqlValue, type AnswerValue, type Lookup, type LookupValues, type PersonProperty } from '../../storage/events/index.js'
import { cohortMembers, MAX_PERSON_FILTER_CHARS, type PersonMatcher } from './person-filters.js'

/**
 * What a HogQL query reads: the events, and persons.db for person properties and queries of the persons table (none:
 * such a query is refused).
 */
export interface HogqlSources {
  events: EventStore
  persons: PersonMatcher | null
  /** The project's cohorts, which `person_id IN COHORT` and {filters}' cohort filters read (none: such a query is refused). */
  cohorts?: HogqlCohorts
}

/** The cohorts by id and by name, and the reader of their behavioural conditions as of the query's now (null: refused). */
export interface HogqlCohorts {
  byId: CohortById
  idsNamed: (teamId: number, name: string) => number[]
  performed: { read: PerformedReader; now: number } | null
}

/** The cohorts as a HogQL query reads them, their behavioural conditions read from `events` as of `now`. */
export function hogqlCohorts(events: EventStore, actionById: (teamId: number, id: number) => Pick<ActionRecord, 'steps'> | null, byId: CohortById, idsNamed: HogqlCohorts['idsNamed'], now: number): HogqlCohorts {
  return { byId, idsNamed, performed: { read: performedReader(events, { byId: actionById }), now } }
}

/** PostHog's CSV_EXPORT_LIMIT (MAX_SELECT_RETURNED_ROWS): an exported query without LIMIT gives this many rows. */
export const EXPORT_RETURNED_ROWS = 50_000

/** The one row of a query without FROM, as ClickHouse's system.one: no field is read from it. */
const ONE_ROW = { uuid: '', event: '', distinct_id: '', person_id: '', timestamp: 0, texts: [] }

/** The ms a JavaScript Date holds (±275,000 years): an interval can take an expression past them. */
const MAX_DATE_MS = 8.64e15

/** Python's isoformat of a datetime of the zone (`sep` between date and time), or of its date. */
function timeText(ms: number, zone: string, time: 'datetime' | 'date', sep: 'T' | ' '): string {
  const text = isoformat(Math.round(ms * 1000), zone)
  return time === 'date' ? text.slice(0, 10) : text.replace('T', sep)
}

/** What HogQL can't read (HogqlMathError) as the 400 of the query; anything else as it is. */
const invalidQuery = (error: unknown): unknown => (error instanceof HogqlMathError ? new ValidationError('invalid', error.message, null) : error)

/**
 * The query's `filters` (PostHog's HogQLFilters), which its `{filters}` placeholders read (none read them when it has
 * none, as in PostHog): the date range's bounds, and its property filters with, under `filterTestAccounts`, the
 * project's test account filters, as one HogQL condition.
 */
function filtersOf(raw: unknown, placed: boolean, project: Project, nowMs: number): { from?: number; to?: number; where?: string } | undefined {
  if (raw === undefined || raw === null) return undefined
  const invalid = (detail: string) => new ValidationError('invalid', detail, 'filters')
  if (!isPlainObject(raw)) throw invalid('query: filters is an object: {"dateRange": {"date_from": "-7d", "date_to": null}}.')
  const unknown = Object.keys(raw).find((key) => !['dateRange', 'properties', 'filterTestAccounts'].includes(key))
  if (unknown !== undefined) throw invalid(`query: filters.${unknown} is not one of HogQLFilters' dateRange, properties and filterTestAccounts.`)
  if (!placed) return undefined
  const conditions: string[] = []
  try {
    if (raw.properties !== undefined && raw.properties !== null) conditions.push(propertyFiltersHogql(raw.properties, 'filters.properties'))
    if (raw.filterTestAccounts === true) conditions.push(propertyFiltersHogql(JSON.parse(project.test_account_filters || '[]'), "the project's test_account_filters"))
  } catch (error) {
    throw error instanceof HogqlMathError ? invalid(`query: ${error.message}`) : error
  }
  const zone = project.timezone
  const range = raw.dateRange ?? {}
  if (!isPlainObject(range)) throw invalid('query: filters.dateRange is an object: {"date_from": "-7d", "date_to": null}.')
  const bound = (key: 'date_from' | 'date_to'): number | undefined => {
    const value = range[key]
    if (value === undefined || value === null || (key === 'date_from' && value === 'all')) return undefined
    const ms = typeof value === 'string' ? parseDateBound(value, nowMs, zone) : null
    if (ms === null) throw invalid(`query: filters.dateRange.${key} must be an ISO 8601 date or date-time, or a relative date such as -7d or dStart.`)
    return ms
  }
  const [from, to] = [bound('date_from'), bound('date_to')]
  const where = conditions.length === 0 ? undefined : conditions.map((c) => `(${c})`).join(' AND ')
  return from === undefined && to === undefined && where === undefined ? undefined : { from, to, where }
}

function setOf(query: JsonObject, project: Project, nowMs: number, defaultLimit: number): HogqlQuerySet {
  if (typeof query.query !== 'string') throw new ValidationError('invalid', 'query: a HogQLQuery needs its query, a text (SELECT … FROM events).', 'query')
  const values = query.values ?? {}
  if (!isPlainObject(values)) throw new ValidationError('invalid', 'query: values maps placeholders ({name}) to their values.', 'values')
  const filters = filtersOf(query.filters, /\{\s*filters\s*[.}]/.test(query.query), project, nowMs)
  try {
    return parseHogqlQuerySet(query.query, { now: nowMs, zone: project.timezone, bounce: bounceRule(project), filters, regex: compileSearchRegex }, defaultLimit, values)
  } catch (error) {
    throw invalidQuery(error)
  }
}

async function personsOf(persons: PersonMatcher | null, teamId: number, plan: HogqlQueryPlan): Promise<PersonProperty[]> {
  if (plan.personPaths.length === 0) return []
  if (persons === null) throw new ValidationError('invalid', 'This server reads no persons: person.properties is not read in its queries.', null)
  const resolved: PersonProperty[] = []
  for (const path of plan.personPaths) {
    const values = await persons.distinctIdsByProperty(teamId, path, MAX_PERSON_FILTER_CHARS)
    if (values === null) throw new ValidationError('invalid', `The person property ${path.join('.')} covers too many persons to compute this query.`, null)
    resolved.push({ path, values })
  }
  return resolved
}

/** What the query reads of its events' groups, persons and cohorts now (`group_<n>.properties.…`, `person.created_at`, `IN COHORT` …), each value with its keys. */
async function lookupValuesOf(sources: HogqlSources, teamId: number, { of }: Lookup): Promise<{ values: LookupValues; missing?: HogqlValue }> {
  if (sources.persons === null) throw new ValidationError('invalid', 'This server reads no persons: person.<field>, group_<n>.… and IN COHORT are not read in its queries.', null)
  if (of.holder === 'cohort') {
    const { cohorts } = sources
    if (cohorts === undefined) throw new ValidationError('invalid', 'IN COHORT is not read in these queries.', null)
    const ids = typeof of.cohort === 'number' ? [of.cohort] : cohorts.idsNamed(teamId, of.cohort)
    if (ids.length !== 1) throw new ValidationError('invalid', ids.length === 0 ? `Could not find a cohort with the name ${of.cohort}.` : `Found multiple cohorts with the name ${of.cohort}.`, null)
    const { distinctIds, excluded } = await cohortMembers(sources.persons, cohorts.byId, teamId, ids[0], MAX_PERSON_FILTER_CHARS, cohorts.performed)
    return excluded ? { values: [{ text: 0, ids: distinctIds }], missing: 1 } : { values: [{ text: 1, ids: distinctIds }] }
  }
  const read = of.holder === 'person' ? `person.${of.field}` : `group_${of.index}.${'path' in of ? `properties.${of.path.join('.')}` : of.field}`
  const values = await sources.persons.lookupValues(teamId, of, MAX_PERSON_FILTER_CHARS)
  if (values === null) throw new ValidationError('invalid', `${read} covers too many ${of.holder}s to compute this query.`, null)
  return { values }
}

/** The rows of one SELECT, without the hidden columns HAVING and ORDER BY read. */
async function selectRows(sources: HogqlSources, project: Project, parsed: HogqlQueryPlan): Promise<AnswerValue[][]> {
  // `x IN (SELECT …)`: each subquery's values first, inner ones first.
  for (const set of parsed.inSets) {
    const values = (await selectRows(sources, project, set.plan)).map((row) => row[0])
    try {
      fillInSet(set, values)
    } catch (error) {
      throw invalidQuery(error)
    }
  }
  // What the events' groups and persons have, anywhere in the query (the values live in its nodes).
  for (const lookup of parsed.lookups) {
    const { values, missing } = await lookupValuesOf(sources, project.id, lookup)
    fillLookup(lookup, values, missing)
  }
  // A join: each table's query on its store, then the rows joined and the query run over them here.
  if (parsed.join !== null) {
    const sides: AnswerValue[][][] = []
    for (const side of parsed.join.sides) sides.push(await selectRows(sources, project, side))
    if (sides.some((rows) => rows.length > MAX_JOIN_ROWS)) throw new ValidationError('invalid', `A table of a join gives at most ${MAX_JOIN_ROWS} rows here: narrow it with WHERE (a condition of one table moves into its query), or aggregate it in a subquery first.`, null)
    try {
      // Joined here, pausing every few thousand rows for the requests this thread serves.
      return runHogqlQuery(parsed, await joinRows(parsed.join, sides, compileSearchRegex, () => setImmediate()), compileSearchRegex).map((row) => row.slice(0, parsed.shown))
    } catch (error) {
      throw invalidQuery(error)
    }
  }
  // A subquery's (or a WITH query's) join: its rows first, as the outermost query's, then the levels above them here.
  const below = joinBelow(parsed)
  if (below !== null) {
    const rows = await selectRows(sources, project, below)
    try {
      return runHogqlQueryOver(parsed, { plan: below, rows }, compileSearchRegex).map((row) => row.slice(0, parsed.shown))
    } catch (error) {
      throw invalidQuery(error)
    }
  }
  const plan = withPersons(parsed, await personsOf(sources.persons, project.id, innermost(parsed)))
  // Without FROM: one row of no fields, computed here (it reads nothing a store holds).
  if (plan.table === 'one') return runHogqlQuery(plan, [ONE_ROW], compileSearchRegex).map((row) => row.slice(0, plan.shown))
  if (plan.table !== 'events' && sources.persons === null) throw new ValidationError('invalid', `This server reads no persons: FROM ${plan.table} is not read in its queries.`, null)
  // persons.db holds the persons and groups whichever store holds the events.
  const rows = plan.table === 'events' ? await sources.events.hogqlQuery(project.id, plan) : await sources.persons!.hogqlQuery(project.id, plan)
  return rows.map((row) => row.slice(0, plan.shown))
}

/** The query's columns and rows (its SELECTs' in turn), at most its limit of them, dates and times written by `written` in their zone. */
async function rowsOf(sources: HogqlSources, project: Project, query: JsonObject, nowMs: number, defaultLimit: number, written: (ms: number, time: 'datetime' | 'date', zone: string) => string) {
  const set = setOf(query, project, nowMs, defaultLimit)
  let rows: unknown[][] = []
  for (const part of set.parts) {
    // UNION ALL: the SELECTs after those that fill the answer (and say there is more) are not run.
    if (!set.distinct && rows.length > set.limit) break
    rows = rows.concat(await selectRows(sources, project, part))
  }
  if (set.distinct) rows = [...new Map(rows.map((row) => [JSON.stringify(row), row])).values()]
  // NaN and infinities are null, as ClickHouse's JSON writes them (and JSON has no other way), in exports too.
  const results = rows.slice(0, set.limit).map((row) =>
    row.map((value, i) => {
      const { time, zone = project.timezone } = set.columns[i]
      if (typeof value !== 'number') return value
      if (!Number.isFinite(value)) return null
      return time === null ? value : Math.abs(value) <= MAX_DATE_MS ? written(value, time, zone) : null
    }),
  )
  return { columns: set.columns, paginated: set.paginated, results, limit: set.limit, hasMore: rows.length > set.limit }
}

export async function answerHogqlQuery(sources: HogqlSources, project: Project, query: JsonObject, nowMs: number): Promise<JsonObject> {
  // PostHog's JSON writes an aware datetime's `+00:00` as Z (DRF's encoder).
  const written = (ms: number, time: 'datetime' | 'date', zone: string) => timeText(ms, zone, time, 'T').replace(/\+00:00$/, 'Z')
  const { columns, paginated, results, limit, hasMore } = await rowsOf(sources, project, query, nowMs, DEFAULT_RETURNED_ROWS, written)
  return {
    results,
    columns: columns.map((c) => c.name),
    types: columns.map((c) => [c.name, c.type]),
    hogql: query.query as string,
    ...(paginated ? { hasMore, limit, offset: 0 } : {}),
    timezone: project.timezone,
    is_cached: false,
    last_refresh: iso(nowMs),
    query_status: null,
    error: null,
    timings: [],
  }
}

/**
 * An exported query's rows, as PostHog's csv_exporter reads a HogQLQuery's answer (LimitContext.EXPORT): each a
 * column → value object, dates and times as Python's str() writes a datetime (`2024-01-31 12:00:00.123000+00:00`).
 */
export async function hogqlExportRows(sources: HogqlSources, project: Project, query: JsonObject, nowMs: number): Promise<JsonObject[]> {
  const { columns, results } = await rowsOf(sources, project, query, nowMs, EXPORT_RETURNED_ROWS, (ms, time, zone) => timeText(ms, zone, time, ' '))
  return results.map((row) => Object.fromEntries(columns.map((c, i) => [c.name, row[i]])))
}
