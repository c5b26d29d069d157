/**
 * Reading stored events: GET /api/projects/:id/events/ (scope `query:read`), as PostHog's events list reads its
 * query: `event`, `distinct_id`, `person_id` (all of that person's distinct ids), `after` (strict) and `before`
 * (ISO 8601, epoch, or relative such as `-1d`; `before` defaults to 5 s from now so that events stamped in the
 * future do not lead the list), `properties` (event and person property filters; see property-filters.ts) and `orderBy` (`["-timestamp"]`,
 * newest first, the default, or `["timestamp"]`). Also the project's ingestion warnings.
 */
import { AppError, ValidationError } from '../../common/errors.js'
import { pageEnvelope, parsePage } from '../../common/pagination.js'
import { parseRelativeDate } from '../../common/relative-dates.js'
import { parseTimestamp } from '../../ingestion/timestamps.js'
import type { PersonReader } from '../../persons/index.js'
import { chainToElements, type EventFilter, type EventStore } from '../../storage/events/index.js'
import { projectRoute, type ApiContext } from '../api.js'
import type { Router } from '../router.js'
import { asIs, parsePropertyFilters, refuseUnsupported, type FilterKinds } from './property-filters.js'

/** PostHog's default upper bound: now plus this. */
const BEFORE_NOW_MS = 5000

/** Filters of PostHog's events list that skylark does not evaluate (actions, HogQL). */
const UNSUPPORTED = ['action_id', 'where', 'select']

function timeParam(query: URLSearchParams, name: string, now: number): number | undefined {
  const raw = query.get(name)
  if (raw === null || raw === '') return undefined
  const ms = parseTimestamp(raw) ?? parseRelativeDate(raw, now)
  if (ms === null) throw new ValidationError('invalid_input', `${name} must be an ISO 8601 timestamp or a relative date such as -1d.`, name)
  return ms
}

/**
 * How much distinct-id text a person property filter may resolve to. ClickHouse 18.16 takes no query
 * parameters, so the ids are written into the query, which the server refuses past 256 KiB (max_query_size).
 */
const PERSON_FILTER_MAX_CHARS = 128 * 1024

/**
 * Event property filters as they are; person property filters (with persons.db at hand) as the distinct ids of
 * the persons they match now, as PostHog's events list joins them when persons are not on the events.
 */
function eventFilterKinds(persons: PersonReader | undefined, teamId: number): FilterKinds {
  const kinds = new Map([['event', asIs]])
  if (persons) {
    kinds.set('person', (filter) => {
      const distinctIds = persons.listing.distinctIdsMatching(teamId, [filter], PERSON_FILTER_MAX_CHARS)
      if (distinctIds === null) {
        throw new ValidationError('invalid_input', `The person filter on ${filter.key} matches too many persons to list their events; narrow it.`, 'properties')
      }
      return { distinctIds }
    })
  }
  return { byDefault: 'event', kinds }
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

export function registerEventRoutes(router: Router, api: ApiContext, events: EventStore, persons: PersonReader | undefined, maxBodyBytes: number): void {
  router.add(
    'get',
    '/api/projects/:project_id/events/',
    projectRoute(api, { scope: 'query:read' }, async (req) => {
      const q = req.query
      refuseUnsupported(q, persons ? UNSUPPORTED : [...UNSUPPORTED, 'person_id'])
      const now = Date.now()
      const after = timeParam(q, 'after', now)
      const before = timeParam(q, 'before', now)
      const upper = before ?? now + BEFORE_NOW_MS
      const filter: EventFilter = {
        teamId: req.project.id,
        event: q.get('event') || undefined,
        distinctId: q.get('distinct_id') ?? undefined,
        // Stored times are whole milliseconds, so "after t" is "from the next millisecond on".
        after: after === undefined ? undefined : Math.floor(after) + 1,
        before: upper,
        properties: parsePropertyFilters(q.get('properties'), eventFilterKinds(persons, req.project.id)),
      }
      const personId = q.get('person_id')
      // An unknown person has no events: an empty list, never the unfiltered one.
      if (persons && personId) filter.distinctIds = persons.listing.distinctIdsOfPerson(req.project.id, personId) ?? []
      const page = { ...parsePage(q), ascending: ascendingParam(q.get('orderBy')) }
      let count: number
      let results
      try {
        ;[count, results] = await Promise.all([events.count(filter), events.list(filter, page)])
      } catch (error) {
        if (error instanceof AppError) throw error
        throw new AppError('service_unavailable', { detail: 'The event store is not reachable right now.', retryAfter: 5 })
      }
      // The links keep the default bound the first page had: events arriving meanwhile would shift the pages.
      const linkQuery = new URLSearchParams(q)
      if (before === undefined) linkQuery.set('before', new Date(upper).toISOString())
      return pageEnvelope(
        req.baseUrl,
        req.ctx.path,
        linkQuery,
        page,
        count,
        results.map((e) => ({ ...e, elements: chainToElements(e.elements_chain) })),
      )
    }),
    { maxBodyBytes },
  )
  if (persons) {
    router.add(
      'get',
      '/api/projects/:project_id/ingestion_warnings/',
      projectRoute(api, { scope: 'project:read' }, (req) => {
        const page = parsePage(req.query)
        const total = persons.listing.countIngestionWarnings(req.project.id)
        const results = persons.listing.listIngestionWarnings(req.project.id, page.limit, page.offset)
        return pageEnvelope(req.baseUrl, req.ctx.path, req.query, page, total, results)
      }),
      { maxBodyBytes },
    )
  }
}
