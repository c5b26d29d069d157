/**
 * Read-only persons and groups API, over persons.db:
 * GET /api/projects/:project_id/persons/ (`person:read`; `?distinct_id=` narrows to that id's person),
 * GET /api/projects/:project_id/groups/?group_type_index=N (`group:read`),
 * GET /api/projects/:project_id/groups_types/ (`group:read`).
 */
import { ValidationError } from '../../common/errors.js'
import { pageEnvelope, parsePage } from '../../common/pagination.js'
import type { PersonReader, PersonWithDistinctIds } from '../../persons/index.js'
import { projectRoute, type ApiContext } from '../api.js'
import type { Router } from '../router.js'

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
      const page = parsePage(req.query)
      const distinctId = req.query.get('distinct_id') || null
      const teamId = req.project.id
      const results = persons.listPersons(teamId, { distinctId, ...page }).map(personObject)
      return pageEnvelope(req.baseUrl, req.ctx.path, req.query, page, persons.countPersons(teamId, { distinctId }), results)
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
      const results = persons.listGroups(teamId, index, page.limit, page.offset)
      return pageEnvelope(req.baseUrl, req.ctx.path, req.query, page, persons.countGroups(teamId, index), results)
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
