/**
 * /api/projects/:project_id/experiment_saved_metrics/ — PostHog's shared experiment metrics: list (by name,
 * `search` and `event` filters), create, read, change and delete (204; experiments lose the link). What each
 * write checks is the domain's (src/experiments/saved-metrics/). The operation table is also published by
 * /api/schema/.
 */
import { systemClock } from '../../common/clock.js'
import { pageEnvelope, parsePage } from '../../common/pagination.js'
import { SavedMetrics } from '../../experiments/index.js'
import { savedMetricCreateSchema, savedMetricPageSchema, savedMetricSchema, savedMetricUpdateSchema } from '../../schemas/experiment-saved-metric.js'
import { compileSerializer } from '../../schemas/index.js'
import { PAGE_QUERY, type OperationDoc } from '../../schemas/openapi.js'
import { answer, intParam, noContent, projectRoute, type ApiContext, type ApiResult, type ProjectApiRequest } from '../api.js'
import type { Router } from '../router.js'

const METRICS = '/api/projects/:project_id/experiment_saved_metrics'
const TAG = 'experiment_saved_metrics'

const LIST_QUERY = [
  ...PAGE_QUERY,
  { name: 'search', description: 'Every word (split on spaces and commas) in the name, the description or a tag, ignoring case.', schema: { type: 'string' } },
  { name: 'event', description: 'Only metrics whose query names this event.', schema: { type: 'string' } },
] as const

export const SAVED_METRIC_OPERATIONS = [
  { operationId: 'experiment_saved_metrics_list', method: 'get', path: `${METRICS}/`, summary: 'List shared experiment metrics by name.', tag: TAG, scope: 'experiment_saved_metric:read', query: LIST_QUERY, responses: { 200: 'PaginatedExperimentSavedMetricList' } },
  { operationId: 'experiment_saved_metrics_create', method: 'post', path: `${METRICS}/`, summary: 'Create a shared metric that experiments link with `saved_metrics_ids`.', tag: TAG, scope: 'experiment_saved_metric:write', requestBody: 'ExperimentSavedMetricCreate', responses: { 201: 'ExperimentSavedMetric' } },
  { operationId: 'experiment_saved_metrics_retrieve', method: 'get', path: `${METRICS}/:id/`, summary: 'A shared experiment metric.', tag: TAG, scope: 'experiment_saved_metric:read', responses: { 200: 'ExperimentSavedMetric' } },
  { operationId: 'experiment_saved_metrics_partial_update', method: 'patch', path: `${METRICS}/:id/`, summary: 'Change a shared metric; experiments linking it read the new query (its uuid stays).', tag: TAG, scope: 'experiment_saved_metric:write', requestBody: 'ExperimentSavedMetricUpdate', responses: { 200: 'ExperimentSavedMetric' } },
  { operationId: 'experiment_saved_metrics_destroy', method: 'delete', path: `${METRICS}/:id/`, summary: 'Delete a shared metric; the experiments linking it lose the link.', tag: TAG, scope: 'experiment_saved_metric:write', responses: { 204: null } },
] as const satisfies readonly OperationDoc[]

export const SAVED_METRIC_COMPONENTS = {
  ExperimentSavedMetric: savedMetricSchema,
  ExperimentSavedMetricCreate: savedMetricCreateSchema,
  ExperimentSavedMetricUpdate: savedMetricUpdateSchema,
  PaginatedExperimentSavedMetricList: savedMetricPageSchema,
}

type OperationId = (typeof SAVED_METRIC_OPERATIONS)[number]['operationId']

export function registerSavedMetricRoutes(router: Router, api: ApiContext, maxBodyBytes: number): void {
  const m = api.management
  const metrics = new SavedMetrics({ db: m.db, clock: systemClock, accounts: m.accounts, actions: m.actions })
  const json = { metric: compileSerializer(savedMetricSchema), page: compileSerializer(savedMetricPageSchema) }
  const id = (req: ProjectApiRequest) => intParam(req.params.id)
  const handlers: Record<OperationId, (req: ProjectApiRequest) => ApiResult> = {
    experiment_saved_metrics_list: (req) => {
      const page = parsePage(req.query)
      const { count, results } = metrics.list(req.project, req.query, page)
      return answer(200, json.page(pageEnvelope(req.baseUrl, req.ctx.path, req.query, page, count, results)))
    },
    experiment_saved_metrics_create: (req) => answer(201, json.metric(metrics.create(req.project, req.body, req.principal.user.id))),
    experiment_saved_metrics_retrieve: (req) => answer(200, json.metric(metrics.get(req.project, id(req)))),
    experiment_saved_metrics_partial_update: (req) => answer(200, json.metric(metrics.update(req.project, id(req), req.body))),
    experiment_saved_metrics_destroy: (req) => {
      metrics.delete(req.project, id(req))
      return noContent()
    },
  }
  for (const op of SAVED_METRIC_OPERATIONS) {
    router.add(op.method, op.path, projectRoute(api, { scope: op.scope }, handlers[op.operationId]), { maxBodyBytes })
  }
}
