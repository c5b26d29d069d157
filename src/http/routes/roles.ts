/**
 * /api/organizations/:organization_id/roles/ and their memberships. Reading needs `organization:read`;
 * changing needs `organization:write` and an organisation admin, as in PostHog.
 */
import { AppError } from '../../common/errors.js'
import { pageEnvelope, parsePage } from '../../common/pagination.js'
import { MembershipLevel } from '../../management/index.js'
import { apiRoute, noContent, type ApiContext, type ApiRequest } from '../api.js'
import type { Router } from '../router.js'

export function registerRoleRoutes(router: Router, api: ApiContext, maxBodyBytes: number): void {
  const options = { maxBodyBytes }
  const roles = api.management.roles
  const org = (req: ApiRequest, write = false) => {
    const found = api.management.auth.organization(req.principal, req.params.organization_id)
    if (write && found.level < MembershipLevel.admin) {
      throw new AppError('permission_denied', { detail: 'You must be an organization admin to manage roles.' })
    }
    return found.id
  }
  const base = '/api/organizations/:organization_id/roles'

  router.add(
    'get',
    `${base}/`,
    apiRoute(api, { scope: 'organization:read' }, (req) => {
      const orgId = org(req)
      const page = parsePage(req.query)
      return pageEnvelope(req.baseUrl, req.ctx.path, req.query, page, roles.count(orgId), roles.list(orgId, page.limit, page.offset))
    }),
    options,
  )
  router.add(
    'post',
    `${base}/`,
    apiRoute(api, { scope: 'organization:write', status: 201 }, (req) =>
      roles.create(org(req, true), req.body, req.principal.user.id),
    ),
    options,
  )
  router.add(
    'get',
    `${base}/:role_id/`,
    apiRoute(api, { scope: 'organization:read' }, (req) => roles.get(org(req), req.params.role_id)),
    options,
  )
  router.add(
    'delete',
    `${base}/:role_id/`,
    apiRoute(api, { scope: 'organization:write' }, (req) => {
      roles.delete(org(req, true), req.params.role_id)
      return noContent()
    }),
    options,
  )
  router.add(
    'get',
    `${base}/:role_id/role_memberships/`,
    apiRoute(api, { scope: 'organization:read' }, (req) => {
      roles.get(org(req), req.params.role_id)
      const members = roles.members(req.params.role_id)
      const page = parsePage(req.query)
      return pageEnvelope(req.baseUrl, req.ctx.path, req.query, page, members.length, members.slice(page.offset, page.offset + page.limit))
    }),
    options,
  )
  router.add(
    'post',
    `${base}/:role_id/role_memberships/`,
    apiRoute(api, { scope: 'organization:write', status: 201 }, (req) => {
      const body = req.body as { user_uuid?: unknown }
      return roles.addMember(org(req, true), req.params.role_id, body?.user_uuid)
    }),
    options,
  )
  router.add(
    'delete',
    `${base}/:role_id/role_memberships/:membership_id/`,
    apiRoute(api, { scope: 'organization:write' }, (req) => {
      roles.removeMember(org(req, true), req.params.role_id, req.params.membership_id)
      return noContent()
    }),
    options,
  )
}
