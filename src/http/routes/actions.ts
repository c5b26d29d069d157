/**
 * /api/projects/:project_id/actions/ — PostHog's ActionViewSet: list (live actions), create, read and change;
 * DELETE is refused with 405 and no body after the key and scope checks, as PostHog's ForbidDestroyModel
 * (PATCH `{"deleted": true}` soft-deletes). The rules are the domain's (src/management/actions/). The
 * operation table is also published by /api/schema/.
 */
import { MAX_PAGE_SIZE, pageEnvelope, parsePage } from '../../common/pagination.js'
import { actionPageSchema, actionReferencesSchema, actionSchema, actionWriteSchema } from '../../schemas/action.js'
import { compileSerializer } from '../../schemas/index.js'
import { PAGE_QUERY, type OperationDoc } from '../../schemas/openapi.js'
import { answer, intParam, projectRoute, type ApiContext, type ApiResult, type ProjectApiRequest } from '../api.js'
import type { Router } from '../router.js'

const ACTIONS = '/api/projects/:project_id/actions'
const TAG = 'actions'

const text = (name: string, description: string) => ({ name, description, schema: { type: 'string' } })

export const ACTION_OPERATIONS = [
  {
    operationId: 'actions_list',
    method: 'get',
    path: `${ACTIONS}/`,
    summary: "The project's live actions, newest first, then by name.",
    tag: TAG,
    scope: 'action:read',
    query: [
      { ...PAGE_QUERY[0]!, description: `Page size (default and at most ${MAX_PAGE_SIZE}: PostHog answers every action unless asked for fewer).` },
      PAGE_QUERY[1]!,
      text('search', 'Only actions whose name holds this, in any case.'),
      text('created_by', 'Comma-separated creator user ids; what is not an id is skipped.'),
      text('tags', 'A JSON list of tag names: actions having any of them.'),
      text('ordering', '`name`, `created_at`, `pinned_at` or `created_by` (the creator\'s name), `-` for descending; anything else keeps the default.'),
      text('include_reference_count', 'Any value: each action gets `reference_count`.'),
    ],
    responses: { 200: 'PaginatedActionList' },
  },
  { operationId: 'actions_create', method: 'post', path: `${ACTIONS}/`, summary: 'Create an action.', tag: TAG, scope: 'action:write', requestBody: 'ActionWrite', responses: { 201: 'Action', 400: 'Error' } },
  { operationId: 'actions_retrieve', method: 'get', path: `${ACTIONS}/:id/`, summary: 'An action of the project (a soft-deleted one too).', tag: TAG, scope: 'action:read', responses: { 200: 'Action' } },
  {
    operationId: 'actions_partial_update',
    method: 'patch',
    path: `${ACTIONS}/:id/`,
    summary: 'Change an action; `{"deleted": true}` soft-deletes it, `{"deleted": false}` restores it.',
    tag: TAG,
    scope: 'action:write',
    requestBody: 'ActionWrite',
    responses: { 200: 'Action', 400: 'Error' },
  },
  {
    operationId: 'actions_references',
    method: 'get',
    path: `${ACTIONS}/:id/references/`,
    summary: 'The live experiments, then cohorts, that name the action (50 at most).',
    tag: TAG,
    scope: 'action:read',
    responses: { 200: 'ActionReferenceList' },
  },
  { operationId: 'actions_destroy', method: 'delete', path: `${ACTIONS}/:id/`, summary: 'Refused: actions are soft-deleted with PATCH.', tag: TAG, scope: 'action:write', responses: { 405: null } },
] as const satisfies readonly OperationDoc[]

export const ACTION_COMPONENTS = {
  Action: actionSchema,
  ActionWrite: actionWriteSchema,
  PaginatedActionList: actionPageSchema,
  ActionReferenceList: actionReferencesSchema,
}

type OperationId = (typeof ACTION_OPERATIONS)[number]['operationId']

export function registerActionRoutes(router: Router, api: ApiContext, maxBodyBytes: number): void {
  const actions = api.management.actions
  const json = { action: compileSerializer(actionSchema), page: compileSerializer(actionPageSchema), references: compileSerializer(actionReferencesSchema) }
  const userId = (req: ProjectApiRequest) => req.principal.user.id
  const handlers: Record<OperationId, (req: ProjectApiRequest) => ApiResult> = {
    actions_list: (req) => {
      const page = parsePage(req.query, MAX_PAGE_SIZE)
      const { count, results } = actions.list(req.project, req.query, page)
      return answer(200, json.page(pageEnvelope(req.baseUrl, req.ctx.path, req.query, page, count, results)))
    },
    actions_create: (req) => answer(201, json.action(actions.create(req.project, req.body, userId(req)))),
    actions_retrieve: (req) => answer(200, json.action(actions.get(req.project, intParam(req.params.id)))),
    actions_partial_update: (req) => answer(200, json.action(actions.update(req.project, intParam(req.params.id), req.body))),
    actions_references: (req) => answer(200, json.references(actions.references(req.project, intParam(req.params.id)))),
    actions_destroy: () => answer(405),
  }
  for (const op of ACTION_OPERATIONS) {
    router.add(op.method, op.path, projectRoute(api, { scope: op.scope }, handlers[op.operationId]), { maxBodyBytes })
  }
}
