/**
 * /api/projects/:project_id/early_access_feature/ — PostHog's early access feature API: list, create, read,
 * change and delete (204). What each write does to the linked flag is the domain's
 * (src/management/early-access/). The operation table is also published by /api/schema/.
 */
import { pageEnvelope, parsePage } from '../../common/pagination.js'
import {
  earlyAccessFeatureCreateSchema,
  earlyAccessFeaturePageSchema,
  earlyAccessFeatureSchema,
  earlyAccessFeatureUpdateSchema,
} from '../../schemas/early-access-feature.js'
import { compileSerializer } from '../../schemas/index.js'
import { PAGE_QUERY, type OperationDoc } from '../../schemas/openapi.js'
import { answer, noContent, projectRoute, type ApiContext, type ApiResult, type ProjectApiRequest } from '../api.js'
import type { Router } from '../router.js'

const FEATURES = '/api/projects/:project_id/early_access_feature'
const TAG = 'early_access_feature'

export const EARLY_ACCESS_FEATURE_OPERATIONS = [
  { operationId: 'early_access_feature_list', method: 'get', path: `${FEATURES}/`, summary: 'List early access features, oldest first.', tag: TAG, scope: 'early_access_feature:read', query: PAGE_QUERY, responses: { 200: 'PaginatedEarlyAccessFeatureList' } },
  {
    operationId: 'early_access_feature_create',
    method: 'post',
    path: `${FEATURES}/`,
    summary: 'Create an early access feature, linking `feature_flag_id` or creating its flag; in an active stage the flag serves people who opt in.',
    tag: TAG,
    scope: 'early_access_feature:write',
    requestBody: 'EarlyAccessFeatureCreate',
    responses: { 201: 'EarlyAccessFeature' },
  },
  { operationId: 'early_access_feature_retrieve', method: 'get', path: `${FEATURES}/:id/`, stringParams: ['id'], summary: 'An early access feature.', tag: TAG, scope: 'early_access_feature:read', responses: { 200: 'EarlyAccessFeature' } },
  {
    operationId: 'early_access_feature_partial_update',
    method: 'patch',
    path: `${FEATURES}/:id/`,
    stringParams: ['id'],
    summary: "Change an early access feature; a new stage turns its flag's enrollment on or off.",
    tag: TAG,
    scope: 'early_access_feature:write',
    requestBody: 'EarlyAccessFeatureUpdate',
    responses: { 200: 'EarlyAccessFeature' },
  },
  { operationId: 'early_access_feature_destroy', method: 'delete', path: `${FEATURES}/:id/`, stringParams: ['id'], summary: 'Delete an early access feature; its flag stays, with enrollment off.', tag: TAG, scope: 'early_access_feature:write', responses: { 204: null } },
] as const satisfies readonly OperationDoc[]

export const EARLY_ACCESS_FEATURE_COMPONENTS = {
  EarlyAccessFeature: earlyAccessFeatureSchema,
  EarlyAccessFeatureCreate: earlyAccessFeatureCreateSchema,
  EarlyAccessFeatureUpdate: earlyAccessFeatureUpdateSchema,
  PaginatedEarlyAccessFeatureList: earlyAccessFeaturePageSchema,
}

type OperationId = (typeof EARLY_ACCESS_FEATURE_OPERATIONS)[number]['operationId']

export function registerEarlyAccessFeatureRoutes(router: Router, api: ApiContext, maxBodyBytes: number): void {
  const features = api.management.earlyAccess
  const json = { feature: compileSerializer(earlyAccessFeatureSchema), page: compileSerializer(earlyAccessFeaturePageSchema) }
  const userId = (req: ProjectApiRequest) => req.principal.user.id
  const handlers: Record<OperationId, (req: ProjectApiRequest) => ApiResult> = {
    early_access_feature_list: (req) => {
      const page = parsePage(req.query)
      const { count, results } = features.list(req.project, page)
      return answer(200, json.page(pageEnvelope(req.baseUrl, req.ctx.path, req.query, page, count, results)))
    },
    early_access_feature_create: (req) => answer(201, json.feature(features.create(req.project, req.body, userId(req)))),
    early_access_feature_retrieve: (req) => answer(200, json.feature(features.get(req.project, req.params.id))),
    early_access_feature_partial_update: (req) => answer(200, json.feature(features.update(req.project, req.params.id, req.body, userId(req)))),
    early_access_feature_destroy: (req) => {
      features.delete(req.project, req.params.id, userId(req))
      return noContent()
    },
  }
  for (const op of EARLY_ACCESS_FEATURE_OPERATIONS) {
    router.add(op.method, op.path, projectRoute(api, { scope: op.scope }, handlers[op.operationId]), { maxBodyBytes })
  }
}
