/**
 * /api/projects/:project_id/feature_flags/ — flag CRUD (DELETE answers 405 with an empty body: flags are
 * soft-deleted with PATCH `{"deleted": true}`), activity, and role access. The operation table below is
 * both what gets registered and what /api/schema/ publishes.
 *
 * Also PostHog's other viewset actions: `:id/status`, `:id/dependent_flags`, `bulk_keys`, `matching_ids`
 * and `bulk_delete`. Their refusals use the error envelope where PostHog answers `{"error": …}`.
 *
 * Literal paths (`activity`, `matching_ids`, …) are registered before `:id` ones: the router takes the first pattern that
 * matches, so routes such as `feature_flags/local_evaluation` must be registered before these.
 */
import { pageEnvelope, parsePage } from '../../common/pagination.js'
import { activityPageEnvelope, parseActivityPage } from '../../management/index.js'
import { ACTIVITY_QUERY, activityPageSchema } from '../../schemas/activity-log.js'
import {
  bulkDeleteRequestSchema,
  bulkDeleteSchema,
  bulkKeysSchema,
  dependentFlagsSchema,
  flagIdsSchema,
  flagStatusSchema,
  matchingIdsSchema,
  featureFlagCreateSchema,
  featureFlagPageSchema,
  featureFlagSchema,
  featureFlagUpdateSchema,
  roleAccessCreateSchema,
  roleAccessPageSchema,
  roleAccessSchema,
} from '../../schemas/feature-flag.js'
import { compileSerializer } from '../../schemas/index.js'
import { PAGE_QUERY, type OperationDoc, type QueryParamDoc } from '../../schemas/openapi.js'
import { answer, intParam, noContent, projectRoute, type ApiContext, type ApiResult, type ProjectApiRequest } from '../api.js'
import type { Router } from '../router.js'

const FLAGS = '/api/projects/:project_id/feature_flags'
const TAG = 'feature_flags'

const LIST_QUERY: readonly QueryParamDoc[] = [
  ...PAGE_QUERY,
  { name: 'search', description: 'Case-insensitive match on key, name or a live experiment name.', schema: { type: 'string' } },
  { name: 'active', description: 'Only active (`true`), inactive (`false`) or stale (`STALE`) flags.', schema: { type: 'string', enum: ['true', 'false', 'STALE'] } },
  { name: 'type', description: 'Flag kind.', schema: { type: 'string', enum: ['boolean', 'multivariant', 'experiment', 'remote_config'] } },
  { name: 'created_by_id', description: 'Id of the user who created the flag.', schema: { type: 'integer' } },
  { name: 'evaluation_runtime', description: 'Only flags with this runtime.', schema: { type: 'string', enum: ['server', 'client', 'all'] } },
  { name: 'tags', description: 'JSON list of tags; flags with any of them.', schema: { type: 'string' } },
  { name: 'excluded_properties', description: 'JSON list of flag keys to leave out.', schema: { type: 'string' } },
  { name: 'order', description: 'Field to order by, `-` for descending (default `-created_at`).', schema: { type: 'string' } },
]

export const FEATURE_FLAG_OPERATIONS = [
  { operationId: 'feature_flags_list', method: 'get', path: `${FLAGS}/`, summary: 'List live feature flags.', tag: TAG, scope: 'feature_flag:read', query: LIST_QUERY, responses: { 200: 'PaginatedFeatureFlagList' } },
  { operationId: 'feature_flags_create', method: 'post', path: `${FLAGS}/`, summary: 'Create a feature flag.', tag: TAG, scope: 'feature_flag:write', requestBody: 'FeatureFlagCreate', responses: { 201: 'FeatureFlag' } },
  { operationId: 'feature_flags_matching_ids', method: 'get', path: `${FLAGS}/matching_ids/`, summary: 'Ids of the live flags the list filters match that the caller may change.', tag: TAG, scope: 'feature_flag:read', query: LIST_QUERY.filter((q) => !PAGE_QUERY.includes(q)), responses: { 200: 'FeatureFlagMatchingIds' } },
  { operationId: 'feature_flags_bulk_keys', method: 'post', path: `${FLAGS}/bulk_keys/`, summary: 'Keys of live flags by id (`{"ids": [...]}`); unreadable ids are named in `warning`.', tag: TAG, scope: 'feature_flag:read', requestBody: 'FeatureFlagIds', responses: { 200: 'FeatureFlagBulkKeys' } },
  { operationId: 'feature_flags_bulk_delete', method: 'post', path: `${FLAGS}/bulk_delete/`, summary: 'Soft-delete the flags that list filters (`filters`) or `ids` name; refusals per flag in `errors`.', tag: TAG, scope: 'feature_flag:write', requestBody: 'FeatureFlagBulkDeleteRequest', responses: { 200: 'FeatureFlagBulkDelete' } },
  { operationId: 'feature_flags_all_activity', method: 'get', path: `${FLAGS}/activity/`, summary: "Activity of the project's flags, newest first.", tag: TAG, scope: 'activity_log:read', query: ACTIVITY_QUERY, responses: { 200: 'ActivityLogPage' } },
  { operationId: 'feature_flags_retrieve', method: 'get', path: `${FLAGS}/:id/`, summary: 'A feature flag (deleted ones too).', tag: TAG, scope: 'feature_flag:read', responses: { 200: 'FeatureFlag' } },
  { operationId: 'feature_flags_partial_update', method: 'patch', path: `${FLAGS}/:id/`, summary: 'Change a feature flag; `{"deleted": true}` soft-deletes it. A stale `version` answers 409 only where `original_flag` shows someone else changed a field this change writes.', tag: TAG, scope: 'feature_flag:write', requestBody: 'FeatureFlagUpdate', responses: { 200: 'FeatureFlag', 409: 'Error' } },
  { operationId: 'feature_flags_destroy', method: 'delete', path: `${FLAGS}/:id/`, summary: 'Refused: flags are soft-deleted with PATCH.', tag: TAG, scope: 'feature_flag:write', responses: { 405: null } },
  { operationId: 'feature_flags_status', method: 'get', path: `${FLAGS}/:id/status/`, summary: 'The flag\'s status (active, stale or deleted) and why.', tag: TAG, scope: 'feature_flag:read', responses: { 200: 'FeatureFlagStatus', 404: 'Error' } },
  { operationId: 'feature_flags_dependent_flags', method: 'get', path: `${FLAGS}/:id/dependent_flags/`, summary: 'The active flags with a condition on this flag.', tag: TAG, scope: 'feature_flag:read', responses: { 200: 'FeatureFlagDependents' } },
  { operationId: 'feature_flags_activity', method: 'get', path: `${FLAGS}/:id/activity/`, summary: 'Activity of one flag, newest first.', tag: TAG, scope: 'activity_log:read', query: ACTIVITY_QUERY, responses: { 200: 'ActivityLogPage' } },
  { operationId: 'feature_flags_role_access_list', method: 'get', path: `${FLAGS}/:feature_flag_id/role_access/`, summary: 'Roles with access to the flag.', tag: TAG, scope: 'feature_flag:read', query: PAGE_QUERY, responses: { 200: 'PaginatedFeatureFlagRoleAccessList' } },
  { operationId: 'feature_flags_role_access_create', method: 'post', path: `${FLAGS}/:feature_flag_id/role_access/`, summary: 'Give a role access to the flag.', tag: TAG, scope: 'feature_flag:write', requestBody: 'FeatureFlagRoleAccessCreate', responses: { 201: 'FeatureFlagRoleAccess' } },
  { operationId: 'feature_flags_role_access_retrieve', method: 'get', path: `${FLAGS}/:feature_flag_id/role_access/:id/`, summary: 'One role access record.', tag: TAG, scope: 'feature_flag:read', responses: { 200: 'FeatureFlagRoleAccess' } },
  { operationId: 'feature_flags_role_access_destroy', method: 'delete', path: `${FLAGS}/:feature_flag_id/role_access/:id/`, summary: 'Take a role’s access away.', tag: TAG, scope: 'feature_flag:write', responses: { 204: null } },
] as const satisfies readonly OperationDoc[]

export const FEATURE_FLAG_COMPONENTS = {
  FeatureFlag: featureFlagSchema,
  FeatureFlagCreate: featureFlagCreateSchema,
  FeatureFlagUpdate: featureFlagUpdateSchema,
  PaginatedFeatureFlagList: featureFlagPageSchema,
  FeatureFlagRoleAccess: roleAccessSchema,
  FeatureFlagRoleAccessCreate: roleAccessCreateSchema,
  PaginatedFeatureFlagRoleAccessList: roleAccessPageSchema,
  ActivityLogPage: activityPageSchema,
  FeatureFlagStatus: flagStatusSchema,
  FeatureFlagDependents: dependentFlagsSchema,
  FeatureFlagIds: flagIdsSchema,
  FeatureFlagBulkKeys: bulkKeysSchema,
  FeatureFlagMatchingIds: matchingIdsSchema,
  FeatureFlagBulkDeleteRequest: bulkDeleteRequestSchema,
  FeatureFlagBulkDelete: bulkDeleteSchema,
}

type OperationId = (typeof FEATURE_FLAG_OPERATIONS)[number]['operationId']

export function registerFeatureFlagRoutes(router: Router, api: ApiContext, maxBodyBytes: number): void {
  const flags = api.management.featureFlags
  const roleAccess = api.management.flagRoleAccess
  const json = {
    flag: compileSerializer(featureFlagSchema),
    flagPage: compileSerializer(featureFlagPageSchema),
    activity: compileSerializer(activityPageSchema),
    roleAccess: compileSerializer(roleAccessSchema),
    roleAccessPage: compileSerializer(roleAccessPageSchema),
    status: compileSerializer(flagStatusSchema),
    dependents: compileSerializer(dependentFlagsSchema),
    bulkKeys: compileSerializer(bulkKeysSchema),
    matchingIds: compileSerializer(matchingIdsSchema),
    bulkDelete: compileSerializer(bulkDeleteSchema),
  }
  const userId = (req: ProjectApiRequest) => req.principal.user.id
  const activity = (req: ProjectApiRequest, flagId: number | null) => {
    const request = parseActivityPage(req.query)
    const page = flags.activity(req.project, flagId, request)
    return answer(200, json.activity(activityPageEnvelope(req.baseUrl, req.ctx.path, req.query, request, page)))
  }

  const handlers: Record<OperationId, (req: ProjectApiRequest) => ApiResult> = {
    feature_flags_list: (req) => {
      const page = parsePage(req.query)
      const { count, results } = flags.list(req.project, req.query, page, userId(req))
      return answer(200, json.flagPage(pageEnvelope(req.baseUrl, req.ctx.path, req.query, page, count, results)))
    },
    feature_flags_create: (req) => answer(201, json.flag(flags.create(req.project, req.body, userId(req)))),
    feature_flags_matching_ids: (req) => answer(200, json.matchingIds(flags.matchingIds(req.project, req.query, userId(req)))),
    feature_flags_bulk_keys: (req) => answer(200, json.bulkKeys(flags.bulkKeys(req.project, req.body))),
    feature_flags_bulk_delete: (req) => answer(200, json.bulkDelete(flags.bulkDelete(req.project, req.body, userId(req)))),
    feature_flags_all_activity: (req) => activity(req, null),
    feature_flags_retrieve: (req) => answer(200, json.flag(flags.get(req.project, intParam(req.params.id), userId(req)))),
    feature_flags_partial_update: (req) =>
      answer(200, json.flag(flags.update(req.project, intParam(req.params.id), req.body, userId(req)))),
    // PostHog forbids hard deletion: 405 with no body, after authentication and the scope check.
    feature_flags_destroy: () => answer(405),
    feature_flags_status: (req) => answer(200, json.status(flags.status(req.project, intParam(req.params.id)))),
    feature_flags_dependent_flags: (req) => answer(200, json.dependents(flags.dependentFlags(req.project, intParam(req.params.id)))),
    feature_flags_activity: (req) => activity(req, intParam(req.params.id)),
    feature_flags_role_access_list: (req) => {
      const page = parsePage(req.query)
      const flagId = intParam(req.params.feature_flag_id)
      const { count, results } = roleAccess.list(req.project, flagId, userId(req), page.limit, page.offset)
      return answer(200, json.roleAccessPage(pageEnvelope(req.baseUrl, req.ctx.path, req.query, page, count, results)))
    },
    feature_flags_role_access_create: (req) =>
      answer(201, json.roleAccess(roleAccess.create(req.project, intParam(req.params.feature_flag_id), req.body, userId(req)))),
    feature_flags_role_access_retrieve: (req) =>
      answer(200, json.roleAccess(roleAccess.get(req.project, intParam(req.params.feature_flag_id), intParam(req.params.id), userId(req)))),
    feature_flags_role_access_destroy: (req) => {
      roleAccess.delete(req.project, intParam(req.params.feature_flag_id), intParam(req.params.id), userId(req))
      return noContent()
    },
  }

  for (const op of FEATURE_FLAG_OPERATIONS) {
    router.add(op.method, op.path, projectRoute(api, { scope: op.scope }, handlers[op.operationId]), { maxBodyBytes })
  }
}
