/** GET /api/projects/ and /api/projects/:id/ — where users find their project id and key. */
import { pageEnvelope, parsePage } from '../../common/pagination.js'
import type { Project } from '../../management/index.js'
import { apiRoute, projectRoute, type ApiContext } from '../api.js'
import type { Router } from '../router.js'

export function projectObject(project: Project) {
  return {
    id: project.id,
    organization: project.organization_id,
    name: project.name,
    api_token: project.api_token,
    anonymize_ips: project.anonymize_ips === 1,
    timezone: 'UTC',
    created_at: project.created_at,
    updated_at: project.updated_at,
  }
}

export function registerProjectRoutes(router: Router, api: ApiContext, maxBodyBytes: number): void {
  const options = { maxBodyBytes }
  router.add(
    'get',
    '/api/projects/',
    apiRoute(api, { scope: 'project:read' }, (req) => {
      const visible = api.management.accounts
        .projectsOf(req.principal.user.id)
        .filter((p) => req.principal.key.scopedTeams === null || req.principal.key.scopedTeams.includes(p.id))
      const page = parsePage(req.query)
      const results = visible.slice(page.offset, page.offset + page.limit).map(projectObject)
      return pageEnvelope(req.baseUrl, req.ctx.path, req.query, page, visible.length, results)
    }),
    options,
  )
  router.add(
    'get',
    '/api/projects/:project_id/',
    projectRoute(api, { scope: 'project:read' }, (req) => projectObject(req.project)),
    options,
  )
}
