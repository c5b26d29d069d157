/**
 * PostHog serves its team-scoped viewsets (events, persons, groups, dashboards, ingestion warnings, query, logs, metrics) under
 * `/api/environments/:team_id/` as well as under `/api/projects/:team_id/`, its "grandfathered" paths
 * (posthog/api/__init__.py, `register_grandfathered_environment_nested_viewset`); current tools such as
 * PostHog's MCP server call the first. A skylark project is its own one environment, so the same handlers
 * answer both, with the same scopes.
 */
import type { OperationDoc } from '../../schemas/openapi.js'
import type { Router } from '../router.js'

const ENVIRONMENT_SCOPED = /^\/api\/projects\/:project_id\/(events|persons|groups|dashboards|ingestion_warnings|query|logs|metrics)\//

const environmentPath = (pattern: string) => pattern.replace('/api/projects/', '/api/environments/')

/** Adds the environment path of every environment-scoped route registered so far. */
export function registerEnvironmentAliases(router: Router): void {
  for (const route of router.routes()) {
    if (ENVIRONMENT_SCOPED.test(route.pattern)) router.add(route.method, environmentPath(route.pattern), route.handler, route.options)
  }
}

/** The OpenAPI operations of those paths, named as PostHog names them (`environments_…`). */
export function environmentOperations(operations: readonly OperationDoc[]): OperationDoc[] {
  return operations
    .filter((op) => ENVIRONMENT_SCOPED.test(op.path))
    .map((op) => ({ ...op, operationId: `environments_${op.operationId}`, path: environmentPath(op.path) }))
}
