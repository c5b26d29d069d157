/**
 * /api/projects/:project_id/experiment_holdouts/ — PostHog's ExperimentHoldoutViewSet: list (newest first),
 * create, read, change and delete (204), under its own `experiment_holdout` scope as in PostHog. What a change
 * does to the flags of the holdout's experiments is the domain's (src/experiments/holdouts/). The operation
 * table is also published by /api/schema/.
 */
import { systemClock } from '../../common/clock.js'
import { pageEnvelope, parsePage } from '../../common/pagination.js'
import { ExperimentHoldouts } from '../../experiments/index.js'
import {
  experimentHoldoutCreateSchema,
  experimentHoldoutPageSchema,
  experimentHoldoutSchema,
  experimentHoldoutUpdateSchema,
} from '../../schemas/experiment-holdout.js'
import { compileSerializer } from '../../schemas/index.js'
import { PAGE_QUERY, type OperationDoc } from '../../schemas/openapi.js'
import { answer, intParam, noContent, projectRoute, type ApiContext, type ApiResult, type ProjectApiRequest } from '../api.js'
import type { Router } from '../router.js'

const HOLDOUTS = '/api/projects/:project_id/experiment_holdouts'
const TAG = 'experiment_holdouts'

export const EXPERIMENT_HOLDOUT_OPERATIONS = [
  { operationId: 'experiment_holdouts_list', method: 'get', path: `${HOLDOUTS}/`, summary: 'List holdouts, newest first.', tag: TAG, scope: 'experiment_holdout:read', query: PAGE_QUERY, responses: { 200: 'PaginatedExperimentHoldoutList' } },
  {
    operationId: 'experiment_holdouts_create',
    method: 'post',
    path: `${HOLDOUTS}/`,
    summary: 'Create a holdout; its groups get the variant `holdout-<id>`.',
    tag: TAG,
    scope: 'experiment_holdout:write',
    requestBody: 'ExperimentHoldoutCreate',
    responses: { 201: 'ExperimentHoldout', 400: 'Error' },
  },
  { operationId: 'experiment_holdouts_retrieve', method: 'get', path: `${HOLDOUTS}/:id/`, summary: 'A holdout.', tag: TAG, scope: 'experiment_holdout:read', responses: { 200: 'ExperimentHoldout' } },
  {
    operationId: 'experiment_holdouts_partial_update',
    method: 'patch',
    path: `${HOLDOUTS}/:id/`,
    summary: "Change a holdout; new filters move into the flags of every experiment using it.",
    tag: TAG,
    scope: 'experiment_holdout:write',
    requestBody: 'ExperimentHoldoutUpdate',
    responses: { 200: 'ExperimentHoldout', 400: 'Error' },
  },
  { operationId: 'experiment_holdouts_destroy', method: 'delete', path: `${HOLDOUTS}/:id/`, summary: 'Delete a holdout; its experiments and their flags are left without one.', tag: TAG, scope: 'experiment_holdout:write', responses: { 204: null } },
] as const satisfies readonly OperationDoc[]

export const EXPERIMENT_HOLDOUT_COMPONENTS = {
  ExperimentHoldout: experimentHoldoutSchema,
  ExperimentHoldoutCreate: experimentHoldoutCreateSchema,
  ExperimentHoldoutUpdate: experimentHoldoutUpdateSchema,
  PaginatedExperimentHoldoutList: experimentHoldoutPageSchema,
}

type OperationId = (typeof EXPERIMENT_HOLDOUT_OPERATIONS)[number]['operationId']

export function registerExperimentHoldoutRoutes(router: Router, api: ApiContext, maxBodyBytes: number): void {
  const m = api.management
  const holdouts = new ExperimentHoldouts({ db: m.db, clock: systemClock, accounts: m.accounts, featureFlags: m.featureFlags })
  const json = { holdout: compileSerializer(experimentHoldoutSchema), page: compileSerializer(experimentHoldoutPageSchema) }
  const userId = (req: ProjectApiRequest) => req.principal.user.id
  const id = (req: ProjectApiRequest) => intParam(req.params.id)
  const handlers: Record<OperationId, (req: ProjectApiRequest) => ApiResult> = {
    experiment_holdouts_list: (req) => {
      const page = parsePage(req.query)
      const { count, results } = holdouts.list(req.project, page)
      return answer(200, json.page(pageEnvelope(req.baseUrl, req.ctx.path, req.query, page, count, results)))
    },
    experiment_holdouts_create: (req) => answer(201, json.holdout(holdouts.create(req.project, req.body, userId(req)))),
    experiment_holdouts_retrieve: (req) => answer(200, json.holdout(holdouts.get(req.project, id(req)))),
    experiment_holdouts_partial_update: (req) => answer(200, json.holdout(holdouts.update(req.project, id(req), req.body, userId(req)))),
    experiment_holdouts_destroy: (req) => {
      holdouts.delete(req.project, id(req), userId(req))
      return noContent()
    },
  }
  for (const op of EXPERIMENT_HOLDOUT_OPERATIONS) {
    router.add(op.method, op.path, projectRoute(api, { scope: op.scope }, handlers[op.operationId]), { maxBodyBytes })
  }
}
