/**
 * Organisations as PostHog's OrganizationViewSet answers them (scope `organization:read`): the list of the
 * key's organisations, one organisation (`@current`: the organisation of the key's current project, so it
 * agrees with /api/projects/@current/), and its projects (PostHog's ProjectViewSet under the organisation).
 * Another organisation's id answers 404, as one that does not exist.
 */
import { pageEnvelope, parsePage } from '../../common/pagination.js'
import { organizationObject, organizationSlugs, type Organization, type Principal, type ProjectFacts } from '../../management/index.js'
import type { PersonReader } from '../../persons/index.js'
import { PAGE_QUERY, type OperationDoc } from '../../schemas/openapi.js'
import { paginated } from '../../schemas/shared.js'
import { apiRoute, type ApiContext } from '../api.js'
import type { Router } from '../router.js'
import { projectFacts, projectListItem } from './projects.js'

const ORG = '/api/organizations/:organization_id/'

export const ORGANIZATION_OPERATIONS = [
  { operationId: 'organizations_list', method: 'get', path: '/api/organizations/', summary: "The key's organisations.", tag: 'organizations', scope: 'organization:read', query: PAGE_QUERY, responses: { 200: 'PaginatedOrganizationList' } },
  { operationId: 'organizations_retrieve', method: 'get', path: ORG, stringParams: ['organization_id'], summary: 'One organisation (`@current`: that of the current project), with its projects.', tag: 'organizations', scope: 'organization:read', responses: { 200: 'Organization' } },
  { operationId: 'organizations_projects_list', method: 'get', path: `${ORG}projects/`, stringParams: ['organization_id'], summary: "The organisation's projects the key may reach, oldest first.", tag: 'organizations', scope: 'project:read', query: PAGE_QUERY, responses: { 200: 'PaginatedProjectBasicList' } },
] as const satisfies readonly OperationDoc[]

const ORGANIZATION = { type: 'object', properties: { id: { type: 'string' }, name: { type: 'string' }, slug: { type: 'string' }, membership_level: { type: ['integer', 'null'] }, teams: { type: 'array' }, projects: { type: 'array' } }, additionalProperties: true }

export const ORGANIZATION_COMPONENTS = { Organization: ORGANIZATION, PaginatedOrganizationList: paginated(ORGANIZATION) }

/** OrganizationSerializer for the principal: its membership, and the projects it may reach. */
export function organizationFor(api: ApiContext, facts: ProjectFacts, principal: Principal, org: Organization) {
  const accounts = api.management.accounts
  return organizationObject(org, {
    facts,
    slug: organizationSlugs(accounts.organizations()).get(org.id)!,
    membershipLevel: accounts.membershipLevel(org.id, principal.user.id),
    memberCount: accounts.memberCount(org.id),
    projects: api.management.auth.visibleProjects(principal).filter((p) => p.organization_id === org.id),
  })
}

export function registerOrganizationRoutes(router: Router, api: ApiContext, persons: PersonReader | undefined, maxBodyBytes: number): void {
  const auth = api.management.auth
  const facts = projectFacts(persons)
  const [list, retrieve, projects] = ORGANIZATION_OPERATIONS
  router.add(list.method, list.path, apiRoute(api, { scope: list.scope }, (req) => {
    const orgs = auth.visibleOrganizations(req.principal)
    const page = parsePage(req.query)
    const results = orgs.slice(page.offset, page.offset + page.limit).map((o) => organizationFor(api, facts, req.principal, o))
    return pageEnvelope(req.baseUrl, req.ctx.path, req.query, page, orgs.length, results)
  }), { maxBodyBytes })
  const named = (principal: Principal, id: string) => {
    auth.organization(principal, id) // 404 for an organisation out of reach
    return auth.visibleOrganization(principal, id)!
  }
  router.add(retrieve.method, retrieve.path, apiRoute(api, { scope: retrieve.scope }, (req) =>
    organizationFor(api, facts, req.principal, named(req.principal, req.params.organization_id))), { maxBodyBytes })
  router.add(projects.method, projects.path, apiRoute(api, { scope: projects.scope }, (req) => {
    const org = named(req.principal, req.params.organization_id)
    const visible = auth.visibleProjects(req.principal).filter((p) => p.organization_id === org.id)
    const page = parsePage(req.query)
    const results = visible.slice(page.offset, page.offset + page.limit).map((p) => projectListItem(p, facts))
    return pageEnvelope(req.baseUrl, req.ctx.path, req.query, page, visible.length, results)
  }), { maxBodyBytes })
}
