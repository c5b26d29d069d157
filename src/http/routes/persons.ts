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
import { parsePropertyFilters } from './property-filters.js'

/** PostHog's display name: email, name or username property, else the first distinct id. */
function displayName(person: PersonWithDistinctIds): string {
  for (const key of ['email', 'name', 'username']) {
    const value = person.properties[key]
    if (typeof value === 'string' && value !== '') return value
  }
  return person.distinct_ids[0] ?? person.uuid
}

export function personObject(person: PersonWithDistinctIds) {
  return {
    id: person.uuid,
    uuid: person.uuid,
    name: displayName(person),
    distinct_ids: person.distinct_ids,
    properties: person.properties,
    is_identified: person.is_identified,
    created_at: person.created_at,
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
        properties: parsePropertyFilters(q.get('properties'), ['person']),
      }
      const teamId = req.project.id
      const results = persons.listPersons(teamId, { ...filter, ...page }).map(personObject)
      return pageEnvelope(req.baseUrl, req.ctx.path, q, page, persons.countPersons(teamId, filter), results)
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
      const results = persons.listGroups(teamId, index, page.limit, page.offset, filter)
      return pageEnvelope(req.baseUrl, req.ctx.path, req.query, page, persons.countGroups(teamId, index, filter), results)
    }),
    options,
  )
  router.add(
    'get',
    '/api/projects/:project_id/groups_types/',
    projectRoute(api, { scope: 'group:read' }, (req) => persons.groupTypes(req.project.id)),
    options,
  )
}
