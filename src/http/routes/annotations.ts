/**
 * /api/projects/:project_id/annotations/ — PostHog's annotations API: list, create, read and change; DELETE
 * is refused with 405 and no body after the key and scope checks, as PostHog's ForbidDestroyModel (PATCH
 * `{"deleted": true}` soft-deletes). The rules are the domain's (src/management/annotations/). The operation
 * table is also published by /api/schema/.
 */
import { pageEnvelope, parsePage } from '../../common/pagination.js'
import { annotationPageSchema, annotationSchema, annotationWriteSchema } from '../../schemas/annotation.js'
import { compileSerializer } from '../../schemas/index.js'
import { PAGE_QUERY, type OperationDoc } from '../../schemas/openapi.js'
import { answer, intParam, projectRoute, type ApiContext, type ApiResult, type ProjectApiRequest } from '../api.js'
import type { Router } from '../router.js'

const ANNOTATIONS = '/api/projects/:project_id/annotations'
const TAG = 'annotations'
/** PostHog's AnnotationsLimitOffsetPagination: a page of 1000 unless `limit` says otherwise. */
const PAGE_SIZE = 1000

const text = (name: string, description: string) => ({ name, description, schema: { type: 'string' } })

export const ANNOTATION_OPERATIONS = [
  {
    operationId: 'annotations_list',
    method: 'get',
    path: `${ANNOTATIONS}/`,
    summary: "The project's annotations and its organisation's organisation-scoped ones, newest `date_marker` first (undated first of all); not the soft-deleted.",
    tag: TAG,
    scope: 'annotation:read',
    query: [
      { ...PAGE_QUERY[0]!, description: 'Page size (default 1000, at most 1000).' },
      PAGE_QUERY[1]!,
      text('scope', 'Only this scope (`insight` is `dashboard_item`); another value is refused.'),
      text('date_from', 'Only `date_marker` at or after this ISO 8601 time.'),
      text('date_to', 'Only `date_marker` at or before this ISO 8601 time.'),
      text('search', 'Only annotations whose content holds every word of this, case-insensitively.'),
      text('hidden_in_user_interface', '`true`, `1` or `yes`: the hidden only; anything else: the shown.'),
      text('is_emoji', '`true`, `1` or `yes`: none (emoji annotations are comments in PostHog now); anything else: no narrowing.'),
    ],
    responses: { 200: 'PaginatedAnnotationList' },
  },
  { operationId: 'annotations_create', method: 'post', path: `${ANNOTATIONS}/`, summary: 'Create an annotation.', tag: TAG, scope: 'annotation:write', requestBody: 'AnnotationWrite', responses: { 201: 'Annotation' } },
  { operationId: 'annotations_retrieve', method: 'get', path: `${ANNOTATIONS}/:id/`, summary: 'An annotation the project sees (not a soft-deleted one).', tag: TAG, scope: 'annotation:read', responses: { 200: 'Annotation' } },
  {
    operationId: 'annotations_partial_update',
    method: 'patch',
    path: `${ANNOTATIONS}/:id/`,
    summary: 'Change an annotation (a soft-deleted one too, to restore it with `{"deleted": false}`); it becomes this project\'s.',
    tag: TAG,
    scope: 'annotation:write',
    requestBody: 'AnnotationWrite',
    responses: { 200: 'Annotation' },
  },
  { operationId: 'annotations_destroy', method: 'delete', path: `${ANNOTATIONS}/:id/`, summary: 'Refused: annotations are soft-deleted with PATCH.', tag: TAG, scope: 'annotation:write', responses: { 405: null } },
] as const satisfies readonly OperationDoc[]

export const ANNOTATION_COMPONENTS = {
  Annotation: annotationSchema,
  AnnotationWrite: annotationWriteSchema,
  PaginatedAnnotationList: annotationPageSchema,
}

type OperationId = (typeof ANNOTATION_OPERATIONS)[number]['operationId']

export function registerAnnotationRoutes(router: Router, api: ApiContext, maxBodyBytes: number): void {
  const annotations = api.management.annotations
  const json = { annotation: compileSerializer(annotationSchema), page: compileSerializer(annotationPageSchema) }
  const userId = (req: ProjectApiRequest) => req.principal.user.id
  const handlers: Record<OperationId, (req: ProjectApiRequest) => ApiResult> = {
    annotations_list: (req) => {
      const page = parsePage(req.query, PAGE_SIZE)
      const { count, results } = annotations.list(req.project, req.query, page)
      return answer(200, json.page(pageEnvelope(req.baseUrl, req.ctx.path, req.query, page, count, results)))
    },
    annotations_create: (req) => answer(201, json.annotation(annotations.create(req.project, req.body, userId(req)))),
    annotations_retrieve: (req) => answer(200, json.annotation(annotations.get(req.project, intParam(req.params.id)))),
    annotations_partial_update: (req) => answer(200, json.annotation(annotations.update(req.project, intParam(req.params.id), req.body, userId(req)))),
    annotations_destroy: () => answer(405),
  }
  for (const op of ANNOTATION_OPERATIONS) {
    router.add(op.method, op.path, projectRoute(api, { scope: op.scope }, handlers[op.operationId]), { maxBodyBytes })
  }
}
