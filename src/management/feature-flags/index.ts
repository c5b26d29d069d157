/**
 * Feature flag management: CRUD with PostHog's validation, optimistic versions, soft delete, activity
 * and role access. Evaluation lives elsewhere; it reads flags through `definitions.ts`.
 */
export { DEFAULT_FILTERS, normaliseTags } from './apply.js'
export { activeFlagDefinitions, liveFlagDefinitions, type FlagDefinition } from './definitions.js'
export { parseFlagListQuery, type FlagListFilter } from './list-query.js'
export type { FeatureFlagRecord } from './record.js'
export { FlagRoleAccess, ROLE_EDIT_DENIED, type RoleAccessObject } from './role-access.js'
export { canEditFlag, isSimpleFlag, minimalFlag, type FeatureFlagObject, type MinimalFlag, type Viewer } from './serialize.js'
export { flagStatus, flagStatusReason, rolloutInfo } from './status.js'
export { EDIT_DENIED, FLAG_SCOPE, FeatureFlags } from './service.js'
export { isParseableDate, validateFilters, validateKey, type FlagLookups } from './validation.js'
