/**
 * PostHog's query endpoint, `POST /api/projects/:id/query/` (and `/api/environments/:id/query/`, scope
 * `query:read`), for the one kind skylark computes: `ExperimentQuery`, the new experiment engine's results
 * that PostHog's UI and MCP tools ask for (src/experiments/query). Any other kind is a 400 naming the kinds
 * served.
 */
import type { OperationDoc } from '../../schemas/openapi.js'
import { freeFormObject } from '../../schemas/shared.js'
import { ExperimentQueryRunner, SERVED_QUERY_KINDS, type ExperimentSource } from '../../experiments/index.js'
import type { EventStore } from '../../storage/events/index.js'
import { answer, projectRoute, type ApiContext } from '../api.js'
import type { Router } from '../router.js'

export const QUERY_OPERATIONS = [
  {
    operationId: 'query_create',
    method: 'post',
    path: '/api/projects/:project_id/query/',
    summary: `Runs a query: \`{"query": {"kind": "ExperimentQuery", "experiment_id", "metric"}}\` (served kinds: ${SERVED_QUERY_KINDS.join(', ')}), answered as PostHog's ExperimentQueryResponse.`,
    tag: 'query',
    scope: 'query:read',
    requestBody: 'QueryRequest',
    responses: { 200: 'ExperimentQueryResponse', 400: 'Error' },
  },
] as const satisfies readonly OperationDoc[]

export const QUERY_COMPONENTS = {
  QueryRequest: { type: 'object', properties: { query: freeFormObject }, required: ['query'] },
  ExperimentQueryResponse: {
    type: 'object',
    properties: {
      baseline: freeFormObject,
      variant_results: { type: 'array', items: freeFormObject },
      is_cached: { type: 'boolean' },
      last_refresh: { type: 'string', format: 'date-time' },
    },
    required: ['baseline', 'variant_results', 'is_cached', 'last_refresh'],
  },
}

export function registerQueryRoutes(router: Router, api: ApiContext, events: EventStore, experiments: ExperimentSource, maxBodyBytes: number): void {
  const runner = new ExperimentQueryRunner({ events, experiments, actionById: (teamId, id) => api.management.actions.byId(teamId, id) })
  for (const op of QUERY_OPERATIONS) {
    router.add(op.method, op.path, projectRoute(api, { scope: op.scope }, async (req) => answer(200, await runner.run(req.project, req.body, Date.now()))), { maxBodyBytes })
  }
}
