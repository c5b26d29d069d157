/**
 * Read-only persons and groups API, over persons.db, filtered as PostHog's:
 * GET /api/projects/:project_id/persons/ (`person:read`; `distinct_id` (that id's person), `email` (exact),
 * `search` (email containing it, or an exact distinct id or uuid), `properties` (person property filters)),
 * GET /api/projects/:project_id/groups/?group_type_index=N (`group:read`; `group_key` (key containing it),
 * `search` (properties containing it, or the exact key)),
 * GET /api/projects/:project_id/groups_types/ (`group:read`).
 */
import { ValidationError } from '../../common/errors.js'
import { pageEnvelope, parsePage } from '../../common/pagination.js'
import type { PersonReader, PersonWithDistinctIds } from '../../persons/index.js'
import { projectRoute, type ApiContext } from '../api.js'
import type { Router } from '../router.js'
import { asIs, parsePropertyFilters, type FilterKinds } from './property-filters.js'

/** Person property filters, on the persons listed. */
const PERSON_FILTERS: FilterKinds = { byDefault: 'person', kinds: new Map([['person', asIs]]) }

/** PostHog's default display-name properties, first set one wins. */
const NAME_PROPERTIES = ['email', 'Email', '$email', 'name', 'Name', 'username', 'Username', 'UserName']

/** PostHog's is_anonymous_id: five lowercase alphanumeric runs joined by dashes, as generated ids (UUIDs) are. */
const ANONYMOUS_ID = /^([a-z0-9]+-){4}[a-z0-9]+$/

/** The distinct ids as PostHog lists them: those that look chosen (not generated) first, else in stored order. */
function distinctIdsInOrder(ids: readonly string[]): string[] {
  return [...ids.filter((id) => !ANONYMOUS_ID.test(id)), ...ids.filter((id) => ANONYMOUS_ID.test(id))]
}

/** PostHog's display name: a display-name property, else the first distinct id in that order, else the uuid. */
function displayName(person: PersonWithDistinctIds, distinctIds: readonly string[]): string {
  for (const key of NAME_PROPERTIES) {
    const value = person.properties[key]
    if (typeof value === 'string' && value !== '') return value
  }
  return distinctIds[0] ?? person.uuid
}

/**
 * A person as PostHog's persons list answers it (an actor). skylark does not track when a person was last
 * seen, and has no recordings or insight data points, so those fields are null or empty.
 */
export function personObject(person: PersonWithDistinctIds) {
  const distinctIds = distinctIdsInOrder(person.distinct_ids)
  return {
    type: 'person',
    id: person.uuid,
    uuid: person.uuid,
    name: displayName(person, distinctIds),
    distinct_ids: distinctIds,
    properties: person.properties,
    is_identified: person.is_identified,
    created_at: person.created_at,
    last_seen_at: null,
    matched_recordings: [],
    value_at_data_point: null,
  }
}

const GROUP_TYPE_INDEX_REQUIRED =
  'You must pass ?group_type_index= in this URL. To get a list of valid group types, call /api/:project_id/groups_types/.'

function groupTypeIndexOf(query: URLSearchParams): number {
  const raw = query.get('group_type_index')?.trim() ?? ''
  if (raw === '') throw new ValidationError('invalid', GROUP_TYPE_INDEX_REQUIRED, 'group_type_index')
  if (!/^[-+]?\d{1,9}$/.test(raw)) throw new ValidationError('invalid', 'A valid integer is required.', 'group_type_index')
  return Number(raw)
}

export function registerPersonRoutes(router: Router, api: ApiContext, persons: PersonReader, maxBodyBytes: number): void {
  const options = { maxBodyBytes }
  router.add(
    'get',
    '/api/projects/:project_id/persons/',
    projectRoute(api, { scope: 'person:read' }, (req) => {
      const q = req.query
      const page = parsePage(q)
      const filter = {
        distinctId: q.get('distinct_id') || null,
        email: q.get('email') || null,
        search: q.get('search') || null,
        properties: parsePropertyFilters(q.get('properties'), PERSON_FILTERS),
      }
      const teamId = req.project.id
      const results = persons.listing.listPersons(teamId, { ...filter, ...page }).map(personObject)
      return pageEnvelope(req.baseUrl, req.ctx.path, q, page, persons.listing.countPersons(teamId, filter), results)
    }),
    options,
  )
  router.add(
    'get',
    '/api/projects/:project_id/groups/',
    projectRoute(api, { scope: 'group:read' }, (req) => {
      const index = groupTypeIndexOf(req.query)
      const page = parsePage(req.query)
      const teamId = req.project.id
      const filter = { groupKey: req.query.get('group_key') || null, search: req.query.get('search') || null }
      const results = persons.listing.listGroups(teamId, index, page.limit, page.offset, filter)
      return pageEnvelope(req.baseUrl, req.ctx.path, req.query, page, persons.listing.countGroups(teamId, index, filter), results)
    }),
    options,
  )
  router.add(
    'get',
    '/api/projects/:project_id/groups_types/',
    // skylark keeps neither dashboards nor column choices per group type, nor when a type was first seen.
    projectRoute(api, { scope: 'group:read' }, (req) =>
      persons.groupTypes(req.project.id).map((type) => ({ ...type, detail_dashboard: null, default_columns: null, created_at: null })),
    ),
    options,
  )
}
