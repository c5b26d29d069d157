/**
 * /api/projects/:project_id/scheduled_changes/ — PostHog's scheduled change API: list (by `model_name` and
 * `record_id`), create, read, change and delete (204), under the flag scopes as PostHog's viewset declares.
 * Applying them is the applier's (src/management/scheduled-changes/applier.ts). The operation table is also
 * published by /api/schema/.
 */
import { pageEnvelope, parsePage } from '../../common/pagination.js'
import { compileSerializer } from '../../schemas/index.js'
import { PAGE_QUERY, type OperationDoc } from '../../schemas/openapi.js'
import { scheduledChangeCreateSchema, scheduledChangePageSchema, scheduledChangeSchema, scheduledChangeUpdateSchema } from '../../schemas/scheduled-change.js'
import { answer, intParam, noContent, projectRoute, type ApiContext, type ApiResult, type ProjectApiRequest } from '../api.js'
import type { Router } from '../router.js'

const CHANGES = '/api/projects/:project_id/scheduled_changes'
const TAG = 'scheduled_changes'
const LIST_QUERY = [
  ...PAGE_QUERY,
  { name: 'model_name', description: 'Only changes of this kind of record ("FeatureFlag").', schema: { type: 'string' } },
  { name: 'record_id', description: 'Only changes to this flag id.', schema: { type: 'string' } },
]

export const SCHEDULED_CHANGE_OPERATIONS = [
  { operationId: 'scheduled_changes_list', method: 'get', path: `${CHANGES}/`, summary: 'List scheduled changes, oldest first.', tag: TAG, scope: 'feature_flag:read', query: LIST_QUERY, responses: { 200: 'PaginatedScheduledChangeList' } },
  {
    operationId: 'scheduled_changes_create',
    method: 'post',
    path: `${CHANGES}/`,
    summary: "Schedule a change to a flag; it is applied at `scheduled_at` as its creator's PATCH, and `executed_at` or `failure_reason` says how it went.",
    tag: TAG,
    scope: 'feature_flag:write',
    requestBody: 'ScheduledChangeCreate',
    responses: { 201: 'ScheduledChange' },
  },
  { operationId: 'scheduled_changes_retrieve', method: 'get', path: `${CHANGES}/:id/`, summary: 'A scheduled change.', tag: TAG, scope: 'feature_flag:read', responses: { 200: 'ScheduledChange' } },
  {
    operationId: 'scheduled_changes_partial_update',
    method: 'patch',
    path: `${CHANGES}/:id/`,
    summary: 'Change a scheduled change (not its flag); `is_recurring: false` pauses a recurring one.',
    tag: TAG,
    scope: 'feature_flag:write',
    requestBody: 'ScheduledChangeUpdate',
    responses: { 200: 'ScheduledChange' },
  },
  { operationId: 'scheduled_changes_destroy', method: 'delete', path: `${CHANGES}/:id/`, summary: 'Cancel a scheduled change.', tag: TAG, scope: 'feature_flag:write', responses: { 204: null } },
] as const satisfies readonly OperationDoc[]

export const SCHEDULED_CHANGE_COMPONENTS = {
  ScheduledChange: scheduledChangeSchema,
  ScheduledChangeCreate: scheduledChangeCreateSchema,
  ScheduledChangeUpdate: scheduledChangeUpdateSchema,
  PaginatedScheduledChangeList: scheduledChangePageSchema,
}

type OperationId = (typeof SCHEDULED_CHANGE_OPERATIONS)[number]['operationId']

export function registerScheduledChangeRoutes(router: Router, api: ApiContext, maxBodyBytes: number): void {
  const changes = api.management.scheduledChanges
  const json = { change: compileSerializer(scheduledChangeSchema), page: compileSerializer(scheduledChangePageSchema) }
  const userId = (req: ProjectApiRequest) => req.principal.user.id
  const id = (req: ProjectApiRequest) => intParam(req.params.id)
  const handlers: Record<OperationId, (req: ProjectApiRequest) => ApiResult> = {
    scheduled_changes_list: (req) => {
      const page = parsePage(req.query)
      const { count, results } = changes.list(req.project, req.query, page)
      return answer(200, json.page(pageEnvelope(req.baseUrl, req.ctx.path, req.query, page, count, results)))
    },
    scheduled_changes_create: (req) => answer(201, json.change(changes.create(req.project, req.body, userId(req)))),
    scheduled_changes_retrieve: (req) => answer(200, json.change(changes.get(req.project, id(req)))),
    scheduled_changes_partial_update: (req) => answer(200, json.change(changes.update(req.project, id(req), req.body, userId(req)))),
    scheduled_changes_destroy: (req) => {
      changes.delete(req.project, id(req), userId(req))
      return noContent()
    },
  }
  for (const op of SCHEDULED_CHANGE_OPERATIONS) {
    router.add(op.method, op.path, projectRoute(api, { scope: op.scope }, handlers[op.operationId]), { maxBodyBytes })
  }
}
