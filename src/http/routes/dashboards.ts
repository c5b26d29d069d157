/**
 * Flag usage dashboards: `POST feature_flags/:id/dashboard/` creates the flag's usage dashboard (its id
 * becomes the flag's `usage_dashboard`), `POST feature_flags/:id/enrich_usage_dashboard/` adds the
 * enriched-analytics tiles, and `GET dashboards/:id/` answers the dashboard with every series computed
 * from stored events. The two actions answer PostHog's `{"success": true}`; their refusals are 400s in
 * the contract's envelope rather than PostHog's `{"success": false, "error"}`.
 */
import type { EventStore } from '../../storage/events/index.js'
import type { OperationDoc } from '../../schemas/openapi.js'
import { intParam, projectRoute, type ApiContext, type ProjectApiRequest } from '../api.js'
import type { Router } from '../router.js'

const PROJECT = '/api/projects/:project_id'
const FREE_FORM = { type: 'object', additionalProperties: true } as const

export const DASHBOARD_OPERATIONS = [
  { operationId: 'feature_flags_dashboard', method: 'post', path: `${PROJECT}/feature_flags/:id/dashboard/`, summary: "Create the flag's usage dashboard (daily calls and unique users per variant).", tag: 'feature_flags', scope: 'feature_flag:write', responses: { 200: 'Success' } },
  { operationId: 'feature_flags_enrich_usage_dashboard', method: 'post', path: `${PROJECT}/feature_flags/:id/enrich_usage_dashboard/`, summary: 'Add the enriched-analytics tiles to the usage dashboard.', tag: 'feature_flags', scope: 'feature_flag:write', responses: { 200: 'Success' } },
  { operationId: 'dashboards_retrieve', method: 'get', path: `${PROJECT}/dashboards/:id/`, summary: 'A dashboard with its series computed from stored events.', tag: 'dashboards', scope: 'dashboard:read', responses: { 200: 'Dashboard' } },
] as const satisfies readonly OperationDoc[]

export const DASHBOARD_COMPONENTS = {
  Success: { type: 'object', properties: { success: { type: 'boolean' } } },
  Dashboard: { type: 'object', properties: { id: { type: 'integer' }, name: { type: 'string' }, tiles: { type: 'array', items: FREE_FORM } }, additionalProperties: true },
}

export function registerDashboardRoutes(router: Router, api: ApiContext, events: EventStore, maxBodyBytes: number): void {
  const dashboards = api.management.dashboards
  const usageFlag = (req: ProjectApiRequest) => {
    const flag = api.management.featureFlags.get(req.project, intParam(req.params.id), req.principal.user.id)
    return { id: flag.id, key: flag.key, usage_dashboard_id: flag.usage_dashboard ?? null, has_enriched_analytics: flag.has_enriched_analytics === true }
  }
  const handlers = {
    feature_flags_dashboard: (req: ProjectApiRequest) => {
      dashboards.createUsageDashboard(req.project.id, usageFlag(req), req.principal.user.id)
      return { success: true }
    },
    feature_flags_enrich_usage_dashboard: (req: ProjectApiRequest) => {
      dashboards.enrichUsageDashboard(req.project.id, usageFlag(req))
      return { success: true }
    },
    dashboards_retrieve: (req: ProjectApiRequest) => dashboards.render(req.project, intParam(req.params.id), events),
  }
  for (const op of DASHBOARD_OPERATIONS) {
    router.add(op.method, op.path, projectRoute(api, { scope: op.scope }, handlers[op.operationId]), { maxBodyBytes })
  }
}
