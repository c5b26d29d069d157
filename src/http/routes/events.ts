/**
 * Reading stored events (scope `query:read`, as PostHog's EventViewSet):
 * GET /api/projects/:id/events/, as PostHog's events list reads its query: `event`, `distinct_id`, `person_id`
 * (all of that person's distinct ids), `after` (strict) and `before` (ISO 8601, epoch, or relative such as
 * `-1d`; `before` defaults to 5 s from now so that events stamped in the future do not lead the list),
 * `properties` (event, person and cohort property filters; see property-filters.ts) and `orderBy` (`["-timestamp"]`,
 * newest first, the default, or `["timestamp"]`);
 * GET events/:id/, one event by uuid, as the list gives it;
 * GET events/values/?key=&event_name=, the distinct values of a property on the named events of the last
 * seven days, as PostHog's values action answers them.
 * Also the project's ingestion warnings (`project:read`).
 */
import { AppError, ValidationError } from '../../common/errors.js'
import { normaliseUuid } from '../../common/ids.js'
import type { JsonObject } from '../../common/json.js'
import { pageEnvelope, parsePage } from '../../common/pagination.js'
import { NAIVE_ISO, parseRelativeDate } from '../../common/relative-dates.js'
import { wallToInstant, zoneOffsetMs } from '../../common/time-zones.js'
import { parseTimestamp } from '../../ingestion/timestamps.js'
import { actionCondition, cohortMembership, evaluatedCohortsNamed, performedReader, storesCanRun, type Actions, type Cohorts, type PerformedReader } from '../../management/index.js'
import type { PersonReader } from '../../persons/index.js'
import { CSV_QUERY, PAGE_QUERY, type OperationDoc } from '../../schemas/openapi.js'
import { freeFormObject } from '../../schemas/shared.js'
import {
  chainToElements,
  hogqlFilter,
  readsPersons,
  VALUE_COLUMNS,
  type EventFilter,
  type EventPropertyFilter,
  type EventStore,
  type PropertyNode,
  type PropertyValuesQuery,
  type StoredEvent,
  type ValueColumn,
} from '../../storage/events/index.js'
import { answer, projectRoute, type ApiContext, type ProjectApiRequest } from '../api.js'
import { csvAnswer, csvHeaders, listRead } from '../csv.js'
import type { Router } from '../router.js'
import { asIs, propertiesJson, readPropertyFilters, refuseHogql, refuseUnsupported } from './property-filters.js'
import { valueNames } from './value-names.js'

const PROJECT = '/api/projects/:project_id'
const param = (name: string, description: string) => ({ name, description, schema: { type: 'string' } })

export const EVENT_OPERATIONS = [
  {
    operationId: 'events_list',
    method: 'get',
    path: `${PROJECT}/events/`,
    summary: "The project's events, newest first, filtered as PostHog's events list; `next` goes on from the page's last event (`before` its time, or `after` it oldest first, with `offset` counting the events of that millisecond already listed), and there is no `previous`, as in PostHog's.",
    tag: 'events',
    scope: 'query:read',
    query: [
      ...PAGE_QUERY,
      ...CSV_QUERY,
      ...['event', 'distinct_id', 'person_id', 'after', 'before', 'properties', 'orderBy'].map((name) => param(name, `PostHog's \`${name}\` filter.`)),
      param('action_id', "Only events matching this action of the project (none when it has no steps or is not the project's)."),
    ],
    responses: { 200: 'EventList' },
  },
  {
    operationId: 'events_values',
    method: 'get',
    path: `${PROJECT}/events/values/`,
    summary: 'Up to 10 distinct values of an event property on the named events of the last 7 days.',
    tag: 'events',
    scope: 'query:read',
    query: [
      param('key', 'The property (or with `is_column=true` the column: event, distinct_id, person_id, $group_0–4).'),
      param('event_name', 'An event name; repeat for several. Required with a personal API key, as in PostHog.'),
      param('value', 'Only values containing this text, in any case; shortest first.'),
      param('is_column', '`true`: `key` names a column.'),
    ],
    responses: { 200: 'EventPropertyValues' },
  },
  {
    operationId: 'events_retrieve',
    method: 'get',
    path: `${PROJECT}/events/:id/`,
    stringParams: ['id'],
    summary: 'One event, by its uuid.',
    tag: 'events',
    scope: 'query:read',
    responses: { 200: 'Event' },
  },
  {
    operationId: 'ingestion_warnings_list',
    method: 'get',
    path: `${PROJECT}/ingestion_warnings/`,
    summary: "The project's ingestion warnings, newest first.",
    tag: 'events',
    scope: 'project:read',
    query: PAGE_QUERY,
    responses: { 200: 'IngestionWarningList' },
  },
] as const satisfies readonly OperationDoc[]

const EVENT_SCHEMA = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    uuid: { type: 'string' },
    event: { type: 'string' },
    distinct_id: { type: 'string' },
    person_id: { type: ['string', 'null'] },
    properties: freeFormObject,
    timestamp: { type: 'string' },
    created_at: { type: 'string' },
    elements_chain: { type: 'string' },
    elements: { type: 'array', items: freeFormObject },
    groups: { type: 'array', items: { type: 'string' } },
  },
}
const page = (items: Record<string, unknown>) => ({
  type: 'object',
  properties: { count: { type: 'integer' }, next: { type: ['string', 'null'] }, previous: { type: ['string', 'null'] }, results: { type: 'array', items } },
})

export const EVENT_COMPONENTS = {
  Event: EVENT_SCHEMA,
  EventList: page(EVENT_SCHEMA),
  EventPropertyValues: {
    type: 'object',
    properties: { results: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' } } } }, refreshing: { type: 'boolean' } },
  },
  IngestionWarningList: page(freeFormObject),
}

/** PostHog's default upper bound: now plus this. */
const BEFORE_NOW_MS = 5000

/** Filters of PostHog's events list that skylark does not evaluate (HogQL). */
const UNSUPPORTED = ['where', 'select']

/** No event meets it: an empty list of distinct ids. */
const NO_EVENTS: PropertyNode = { distinctIds: [] }

/**
 * `action_id` as PostHog's events list reads it: the project's action (a deleted one too) as a condition on the
 * events; an unknown one, or one without steps, lists nothing.
 */
function actionFilter(actions: Actions, teamId: number, raw: string | null): PropertyNode | null {
  if (raw === null || raw === '') return null
  if (!/^\s*\d{1,15}\s*$/.test(raw)) throw new ValidationError('invalid_input', 'action_id must be an integer.', 'action_id')
  const action = actions.byId(teamId, Number(raw))
  return action && action.steps.length > 0 ? actionCondition(action.steps) : NO_EVENTS
}

/** `after` or `before` as PostHog's relative_date_parse reads it with the project's timezone. */
function timeParam(query: URLSearchParams, name: string, now: number, zone: string): number | undefined {
  const raw = query.get(name)
  if (raw === null || raw === '') return undefined
  const absolute = parseTimestamp(raw)
  const ms = absolute !== null && NAIVE_ISO.test(raw.trim()) ? wallToInstant(zone, absolute) : (absolute ?? parseRelativeDate(raw, now, zone))
  if (ms === null) throw new ValidationError('invalid_input', `${name} must be an ISO 8601 timestamp or a relative date such as -1d.`, name)
  return ms
}

/**
 * How much distinct-id text a person property filter may resolve to. ClickHouse 18.16 takes no query
 * parameters, so the ids are written into the query, which the server refuses past 256 KiB (max_query_size).
 */
const PERSON_FILTER_MAX_CHARS = 128 * 1024

/**
 * The `properties` of the events list: event property filters as they are, HogQL ones as their condition
 * (hogql-math.ts's subset); person property filters, HogQL ones on person properties and cohort filters (with
 * persons.db at hand) as the distinct ids of the persons they match now, as PostHog's events list joins them when
 * persons are not on the events. A dynamic cohort a filter names is evaluated first, its behavioural conditions
 * read by `performed`. The persons are found after the parse, in order, by the persons read thread (a person
 * filter scans the project's persons).
 */
async function eventPropertyFilters(raw: string | null, teamId: number, persons: PersonReader | undefined, cohorts: Cohorts, performed: PerformedReader): Promise<PropertyNode[] | undefined> {
  const personFilters: Array<{ what: string; condition: PropertyNode; node: { distinctIds: readonly string[] } }> = []
  const byPersons = (what: string, condition: PropertyNode) => {
    const node = { distinctIds: [] as readonly string[] }
    personFilters.push({ what, condition, node })
    return node
  }
  const kinds = new Map<string, (filter: EventPropertyFilter) => PropertyNode>([
    ['event', asIs],
    [
      'hogql',
      (filter) => {
        const refuse = (detail: string) => refuseHogql(filter, detail)
        const condition = hogqlFilter(filter, refuse, storesCanRun)
        if (!readsPersons(condition, refuse)) return condition
        return persons ? byPersons(`The HogQL filter ${JSON.stringify(filter.key)}`, condition) : refuse('Person properties are not read here.')
      },
    ],
  ])
  const tree = propertiesJson(raw)
  let cohort: ((leaf: JsonObject) => PropertyNode) | undefined
  if (persons) {
    kinds.set('person', (filter) => byPersons(`The person filter on ${filter.key}`, filter))
    const cohortById = (team: number, id: number) => cohorts.record(team, id)
    const evaluated = await evaluatedCohortsNamed(tree, cohortById, teamId, performed, Date.now())
    cohort = (leaf) => byPersons(`The cohort filter on cohort ${JSON.stringify(leaf.value)}`, cohortMembership(leaf, cohortById, teamId, 'properties', evaluated))
  }
  const properties = readPropertyFilters(tree, { byDefault: 'event', kinds, regex: storesCanRun, cohort })
  for (const { what, condition, node } of personFilters) {
    const distinctIds = await persons!.scans.listing.distinctIdsMatching(teamId, [condition], PERSON_FILTER_MAX_CHARS)
    if (distinctIds === null) throw new ValidationError('invalid_input', `${what} matches too many persons to list their events; narrow it.`, 'properties')
    node.distinctIds = distinctIds
  }
  return properties
}

/** True for oldest first. */
function ascendingParam(raw: string | null): boolean {
  if (raw === null || raw === '') return false
  let parsed: unknown
  try {
    parsed = JSON.parse(raw)
  } catch {
    parsed = undefined
  }
  if (Array.isArray(parsed) && parsed.length === 1 && (parsed[0] === 'timestamp' || parsed[0] === '-timestamp')) return parsed[0] === 'timestamp'
  throw new ValidationError('invalid_input', 'orderBy must be ["timestamp"] or ["-timestamp"].', 'orderBy')
}

/** PostHog's values action: this many distinct values, seen in the days since midnight (UTC) this many days ago. */
const VALUES_LIMIT = 10
const VALUES_DAYS = 7
const DAY_MS = 86_400_000

/** An event as the list answers it: the stored event and its elements read from the chain. */
function eventObject(event: StoredEvent) {
  return { ...event, elements: chainToElements(event.elements_chain) }
}

/** A read of the event store; a store that does not answer is a 503 the client may retry. */
export async function fromStore<T>(read: Promise<T>): Promise<T> {
  try {
    return await read
  } catch (error) {
    if (error instanceof AppError) throw error
    throw new AppError('service_unavailable', { detail: 'The event store is not reachable right now.', retryAfter: 5 })
  }
}

function valuesQuery(req: ProjectApiRequest): PropertyValuesQuery {
  const q = req.query
  const key = q.get('key')
  if (!key) throw new ValidationError('invalid', 'You must provide a key', 'key')
  // PostHog refuses a personal API key (skylark's only kind) without event_name: the scan stays on named events.
  const eventNames = q.getAll('event_name')
  if (eventNames.length === 0) throw new ValidationError('invalid', 'The event_name parameter is required when using a personal API key.', 'event_name')
  // PostHog lists custom event names for this key from its own list of system events, which skylark does not
  // keep; ad hoc `properties_<key>` filters are not evaluated. Never an unfiltered answer in their place.
  if (key === 'custom_event') throw new ValidationError('invalid', 'skylark does not list custom event names; list events instead.', 'key')
  for (const name of new Set(q.keys())) {
    if (name.startsWith('properties_')) throw new ValidationError('invalid', `skylark does not filter values by ${name}.`, name)
  }
  const isColumn = (q.get('is_column') ?? 'false').toLowerCase() === 'true'
  if (isColumn && !(VALUE_COLUMNS as readonly string[]).includes(key)) {
    throw new ValidationError('invalid', `Events have no column ${key}; skylark reads ${VALUE_COLUMNS.join(', ')}.`, 'key')
  }
  // PostHog's runner: from the project's midnight seven days back to the end of its today, on its wall clock.
  const zone = req.project.timezone
  const now = Date.now()
  const today = Math.floor((now + (zoneOffsetMs(zone, now) ?? 0)) / DAY_MS) * DAY_MS
  return {
    filter: { teamId: req.project.id, event: eventNames, after: wallToInstant(zone, today - VALUES_DAYS * DAY_MS), before: wallToInstant(zone, today + DAY_MS) },
    source: isColumn ? { column: key as ValueColumn } : { property: key },
    search: q.get('value') || undefined,
    limit: VALUES_LIMIT,
  }
}

/**
 * The next page as PostHog's events list links it, from the last event's time (`before` it, or `after` it when
 * oldest first), so each page is read from an index bound instead of skipping every event before it: an offset
 * made paging through 200,000 events take 20 s. Events at that same millisecond are told apart by how many of
 * them were already listed (`offset`, in the stores' order of time then uuid), so none is lost or repeated. Null
 * where that count is unknown (a page that started at a caller's offset inside a run of equal times): the plain
 * offset link serves then.
 */
function nextCursor(results: readonly StoredEvent[], page: { offset: number; limit: number; ascending: boolean }, bound: number | undefined): Record<string, string> | null {
  const last = results.at(-1)
  if (last === undefined) return null
  const time = Date.parse(last.timestamp)
  const ties = results.filter((e) => Date.parse(e.timestamp) === time).length
  // The events the page skipped (its offset) are at or beyond its first event's time: ties of `time` only if the page starts there.
  const atBound = bound !== undefined && (page.ascending ? bound === time : bound === time + 1)
  let skipped = 0
  if (page.offset > 0 && Date.parse(results[0]!.timestamp) === time) {
    if (!atBound) return null
    skipped = page.offset
  }
  const edge = new Date(page.ascending ? time - 1 : time + 1).toISOString()
  // `ties` counts the last event itself, so the offset is never 0.
  return { [page.ascending ? 'after' : 'before']: edge, offset: String(ties + skipped), limit: String(page.limit) }
}

export function registerEventRoutes(router: Router, api: ApiContext, events: EventStore, persons: PersonReader | undefined, maxBodyBytes: number): void {
  const performed = performedReader(events, api.management.actions)
  const handlers = {
    events_list: async (req: ProjectApiRequest) => {
      const q = req.query
      refuseUnsupported(q, persons ? UNSUPPORTED : [...UNSUPPORTED, 'person_id'])
      const now = Date.now()
      const after = timeParam(q, 'after', now, req.project.timezone)
      const before = timeParam(q, 'before', now, req.project.timezone)
      const upper = before ?? now + BEFORE_NOW_MS
      const filter: EventFilter = {
        teamId: req.project.id,
        event: q.get('event') || undefined,
        distinctId: q.get('distinct_id') ?? undefined,
        // Stored times are whole milliseconds, so "after t" is "from the next millisecond on".
        after: after === undefined ? undefined : Math.floor(after) + 1,
        before: upper,
        properties: await eventPropertyFilters(q.get('properties'), req.project.id, persons, api.management.cohorts, performed),
      }
      const action = actionFilter(api.management.actions, req.project.id, q.get('action_id'))
      if (action) filter.properties = [...(filter.properties ?? []), action]
      const personId = q.get('person_id')
      // An unknown person has no events: an empty list, never the unfiltered one.
      if (persons && personId) filter.distinctIds = persons.listing.distinctIdsOfPerson(req.project.id, personId) ?? []
      const { csv, page: limits } = listRead(req)
      const page = { ...limits, ascending: ascendingParam(q.get('orderBy')) }
      const listed = events.list(filter, page)
      // A CSV page has no count, as PostHog's renderer drops it.
      if (csv) return csvAnswer((await fromStore(listed)).map(eventObject))
      const [count, results] = await fromStore(Promise.all([events.count(filter), listed]))
      // The links keep the default bound the first page had: events arriving meanwhile would shift the pages.
      const linkQuery = new URLSearchParams(q)
      if (before === undefined) linkQuery.set('before', new Date(upper).toISOString())
      const envelope = pageEnvelope(req.baseUrl, req.ctx.path, linkQuery, page, count, results.map(eventObject))
      const cursor = envelope.next === null ? null : nextCursor(results, page, page.ascending ? filter.after : upper)
      if (cursor) {
        for (const [name, value] of Object.entries(cursor)) linkQuery.set(name, value)
        envelope.next = `${req.baseUrl}${req.ctx.path}?${linkQuery.toString()}`
      }
      // As PostHog's events list: pages go forward only (a `previous` of a cursor page would be an offset from its own bound).
      return { ...envelope, previous: null }
    },
    // PostHog answers {results, refreshing} and lets clients cache it for 10 s.
    events_values: async (req: ProjectApiRequest) => {
      const values = await fromStore(events.propertyValues(valuesQuery(req)))
      return answer(200, { results: valueNames(values), refreshing: false }, { 'Cache-Control': 'max-age=10' })
    },
    events_retrieve: async (req: ProjectApiRequest) => {
      const uuid = normaliseUuid(req.params.id)
      if (uuid === null) throw new ValidationError('invalid', 'Invalid UUID')
      const event = await fromStore(events.get(req.project.id, uuid))
      if (!event) throw new AppError('not_found', { detail: `No events exist for event UUID ${req.params.id}` })
      return eventObject(event)
    },
    ingestion_warnings_list: async (req: ProjectApiRequest) => {
      const page = parsePage(req.query)
      const [total, results] = await Promise.all([persons!.scans.listing.countIngestionWarnings(req.project.id), persons!.scans.listing.listIngestionWarnings(req.project.id, page.limit, page.offset)])
      return pageEnvelope(req.baseUrl, req.ctx.path, req.query, page, total, results)
    },
  }
  for (const op of EVENT_OPERATIONS) {
    // The warnings live in persons.db.
    if (op.operationId === 'ingestion_warnings_list' && !persons) continue
    router.add(op.method, op.path, projectRoute(api, { scope: op.scope }, handlers[op.operationId]), { maxBodyBytes, readsHeaders: csvHeaders(op) })
  }
}
