/**
 * Projects, where users and PostHog's tools find their project id and key: GET /api/projects/ (PostHog's
 * basic project objects), GET and PATCH /api/projects/:id/ and the same project as its one environment under
 * /api/environments/:id/ (`@current` works on both). PATCH changes `name`, `anonymize_ips` and `timezone`
 * (management/project-settings.ts); the project directory is reloaded at once, so capture drops IPs from the
 * next event on without a restart.
 */
import { pageEnvelope, parsePage } from '../../common/pagination.js'
import type { Management, Project } from '../../management/index.js'
import { parseProjectPatch, projectObject, requireProjectAdmin, teamBasic, type ProjectFacts } from '../../management/index.js'
import type { PersonReader } from '../../persons/index.js'
import { PAGE_QUERY, type OperationDoc } from '../../schemas/openapi.js'
import { freeFormObject, nullable, paginated } from '../../schemas/shared.js'
import { BOUNCE_MODES } from '../../storage/events/index.js'
import { apiRoute, projectRoute, type ApiContext, type ProjectApiRequest } from '../api.js'
import type { Router } from '../router.js'

const P = '/api/projects/:project_id/'
const E = '/api/environments/:project_id/'

export const PROJECT_OPERATIONS = [
  { operationId: 'projects_list', method: 'get', path: '/api/projects/', summary: "The key's projects, oldest first.", tag: 'projects', scope: 'project:read', query: PAGE_QUERY, responses: { 200: 'PaginatedProjectBasicList' } },
  { operationId: 'projects_retrieve', method: 'get', path: P, summary: 'A project and its settings (`@current`: the key\'s first project).', tag: 'projects', scope: 'project:read', responses: { 200: 'Project' } },
  { operationId: 'projects_partial_update', method: 'patch', path: P, summary: 'Change `name`, `anonymize_ips` or `timezone` (an IANA zone name; organisation admins), `test_account_filters` or the bounce rate `modifiers`; other settings only to the value answered.', tag: 'projects', scope: 'project:write', requestBody: 'PatchedProject', responses: { 200: 'Project' } },
  { operationId: 'environments_retrieve', method: 'get', path: E, summary: 'The project as its one environment (PostHog\'s team object).', tag: 'environments', scope: 'project:read', responses: { 200: 'Project' } },
  { operationId: 'environments_partial_update', method: 'patch', path: E, summary: 'As PATCH on the project.', tag: 'environments', scope: 'project:write', requestBody: 'PatchedProject', responses: { 200: 'Project' } },
] as const satisfies readonly OperationDoc[]

const PROJECT_BASIC = { type: 'object', properties: { id: { type: 'integer' }, uuid: { type: 'string' }, organization: { type: 'string' }, project_id: { type: 'integer' }, api_token: { type: 'string' }, name: { type: 'string' } }, additionalProperties: true }

const TIMEZONE = {
  type: 'string',
  maxLength: 240,
  description: "An IANA zone name (default UTC): the wall clock of the project's scheduled cron changes, each keeping the zone it was made in.",
}

const MODIFIERS = nullable({
  type: 'object',
  properties: {
    bounceRateDurationSeconds: nullable({ type: 'number', minimum: 1, maximum: 120, description: 'A session lasting this long or more never bounces (default 10).' }),
    bounceRatePageViewMode: nullable({
      type: 'string',
      enum: [...BOUNCE_MODES, null],
      description: 'What counts as more than one page: pageviews and autocaptures (the default; uniq_urls reads alike), or pageviews, screens and autocaptures together.',
    }),
  },
  additionalProperties: false,
  description: "HogQL modifiers: skylark keeps the bounce rate's two, which experiments' `$is_bounce` reads. A PATCH merges them into the project's; null clears them.",
})

export const PROJECT_COMPONENTS = {
  ProjectBasic: PROJECT_BASIC,
  PaginatedProjectBasicList: paginated(PROJECT_BASIC),
  Project: { type: 'object', properties: { id: { type: 'integer' }, name: { type: 'string' }, anonymize_ips: { type: 'boolean' }, timezone: TIMEZONE, api_token: { type: 'string' }, modifiers: MODIFIERS }, additionalProperties: true },
  PatchedProject: { ...freeFormObject, properties: { name: { type: 'string', minLength: 1, maxLength: 200 }, anonymize_ips: { type: 'boolean' }, timezone: TIMEZONE, modifiers: MODIFIERS } },
}

/** ingested_event and group types from persons.db; a server without it knows of neither. */
export function projectFacts(persons: PersonReader | undefined): ProjectFacts {
  return {
    ingested: (id) => persons?.definitions.hasEvents(id) ?? false,
    groupTypes: (id) => persons?.groupTypes(id).map((t) => ({ group_type: t.group_type, group_type_index: t.group_type_index, name_singular: t.name_singular, name_plural: t.name_plural })) ?? [],
  }
}

/** The project list's item: PostHog's basic project, and what skylark's list answered before it. */
export function projectListItem(project: Project, facts: ProjectFacts) {
  return { ...teamBasic(project, facts), anonymize_ips: project.anonymize_ips === 1, created_at: project.created_at, updated_at: project.updated_at }
}

function patchProject(management: Management, req: ProjectApiRequest): Project {
  const level = management.accounts.membershipLevel(req.project.organization_id, req.principal.user.id)
  const changes = parseProjectPatch(req.body, req.project, management.accounts)
  requireProjectAdmin(changes, level)
  if (Object.values(changes).every((v) => v === undefined)) return req.project
  const updated = management.accounts.updateProject(req.project.id, changes)
  // Capture reads anonymize_ips from the directory's memory: refresh it before answering.
  management.projects.reload()
  return updated
}

export function registerProjectRoutes(router: Router, api: ApiContext, persons: PersonReader | undefined, maxBodyBytes: number): void {
  const m = api.management
  const facts = projectFacts(persons)
  const full = (req: ProjectApiRequest, project: Project) => projectObject(project, m.accounts.membershipLevel(project.organization_id, req.principal.user.id), facts)
  const handlers: Record<string, Parameters<typeof projectRoute>[2]> = {
    retrieve: (req) => full(req, req.project),
    partial_update: (req) => full(req, patchProject(m, req)),
  }
  for (const op of PROJECT_OPERATIONS) {
    const action = op.operationId.replace(/^(projects|environments)_/, '')
    if (action === 'list') {
      router.add(op.method, op.path, apiRoute(api, { scope: op.scope }, (req) => {
        const visible = m.auth.visibleProjects(req.principal)
        const page = parsePage(req.query)
        const results = visible.slice(page.offset, page.offset + page.limit).map((p) => projectListItem(p, facts))
        return pageEnvelope(req.baseUrl, req.ctx.path, req.query, page, visible.length, results)
      }), { maxBodyBytes })
    } else {
      router.add(op.method, op.path, projectRoute(api, { scope: op.scope }, handlers[action]!), { maxBodyBytes })
    }
  }
}
