/**
 * GET /api/users/@me/ — who a personal key belongs to, as PostHog's UserViewSet answers it (scope
 * `user:read`, which PostHog exempts from a key's project and organisation limits): the user, its current
 * organisation in full, all its organisations in brief, and its current project as a team. "Current" is
 * what `@current` resolves to on /api/projects/ and /api/organizations/. Any other user id is refused as
 * PostHog refuses a non-staff user (skylark has no staff users).
 */
import { AppError } from '../../common/errors.js'
import { organizationBasic, organizationSlugs, userObject } from '../../management/index.js'
import type { PersonReader } from '../../persons/index.js'
import type { OperationDoc } from '../../schemas/openapi.js'
import { apiRoute, type ApiContext } from '../api.js'
import type { Router } from '../router.js'
import { organizationFor } from './organizations.js'
import { projectFacts } from './projects.js'

export const USER_OPERATIONS = [
  { operationId: 'users_retrieve', method: 'get', path: '/api/users/:uuid/', summary: 'The key\'s user (`@me`), with its current organisation and project; other users are refused.', tag: 'users', scope: 'user:read', responses: { 200: 'User' } },
] as const satisfies readonly OperationDoc[]

export const USER_COMPONENTS = {
  User: { type: 'object', properties: { uuid: { type: 'string' }, distinct_id: { type: 'string' }, email: { type: 'string' }, organization: { type: ['object', 'null'] }, organizations: { type: 'array' }, team: { type: ['object', 'null'] } }, additionalProperties: true },
}

export function registerUserRoutes(router: Router, api: ApiContext, persons: PersonReader | undefined, maxBodyBytes: number): void {
  const { accounts, auth } = api.management
  const facts = projectFacts(persons)
  const [op] = USER_OPERATIONS
  router.add(op.method, op.path, apiRoute(api, { scope: op.scope }, (req) => {
    if (req.params.uuid !== '@me') {
      throw new AppError('permission_denied', { detail: "As a non-staff user you're only allowed to access the `@me` user instance." })
    }
    const { user } = req.principal
    const current = auth.current(req.principal)
    const slugs = organizationSlugs(accounts.organizations())
    return userObject(user, {
      facts,
      team: current.project,
      organization: current.organization ? organizationFor(api, facts, req.principal, current.organization) : null,
      organizations: accounts.organizationsOf(user.id).map((o) => organizationBasic(o, slugs.get(o.id)!, accounts.membershipLevel(o.id, user.id))),
    })
  }), { maxBodyBytes })
}
