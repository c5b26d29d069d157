/**
 * The flag object the API answers: stored fields plus the derived ones (`is_simple_flag`,
 * `rollout_percentage`, `status`, `experiment_set`, `can_edit`, …). Related rows are loaded once per
 * request for all flags being answered.
 */
import type { JsonObject } from '../../common/json.js'
import { userSummary, type Accounts, type UserSummary } from '../accounts.js'
import { toPublicFeature, type PublicEarlyAccessFeature } from '../early-access/serialize.js'
import type { EarlyAccessRepository } from '../early-access/repository.js'
import { FlagAccessLevel } from '../roles.js'
import { mapConditionProperties, type FeatureFlagRecord } from './record.js'
import type { FlagRepository } from './repository.js'
import { flagStatus, type FlagStatus } from './status.js'

export interface FeatureFlagObject {
  id: number
  name: string
  key: string
  filters: JsonObject
  deleted: boolean
  active: boolean
  created_by: UserSummary | null
  created_at: string
  updated_at: string
  version: number
  last_modified_by: UserSummary | null
  is_simple_flag: boolean
  rollout_percentage: number | null
  ensure_experience_continuity: boolean
  experiment_set: number[]
  surveys: JsonObject[]
  features: PublicEarlyAccessFeature[]
  rollback_conditions: unknown
  performed_rollback: boolean
  can_edit: boolean
  tags: string[]
  evaluation_tags: string[]
  evaluation_contexts: string[]
  usage_dashboard: number | null
  analytics_dashboards: number[]
  has_enriched_analytics: boolean
  user_access_level: 'editor' | 'viewer'
  is_remote_configuration: boolean
  has_encrypted_payloads: boolean
  status: FlagStatus
  evaluation_runtime: string
  bucketing_identifier: string | null
  last_called_at: string | null
  is_used_in_replay_settings: boolean
}

/** The flag as other objects embed it (PostHog's MinimalFeatureFlagSerializer): experiments, early-access features. */
export interface MinimalFlag {
  id: number
  team_id: number
  name: string
  key: string
  filters: JsonObject
  deleted: boolean
  active: boolean
  ensure_experience_continuity: boolean
  has_encrypted_payloads: boolean
  version: number
  evaluation_runtime: string
  evaluation_tags: string[]
}

export function minimalFlag(flag: FeatureFlagRecord): MinimalFlag {
  return {
    id: flag.id,
    team_id: flag.team_id,
    name: flag.name,
    key: flag.key,
    filters: flag.filters,
    deleted: flag.deleted,
    active: flag.active,
    ensure_experience_continuity: flag.ensure_experience_continuity,
    has_encrypted_payloads: flag.has_encrypted_payloads,
    version: flag.version,
    evaluation_runtime: flag.evaluation_runtime,
    evaluation_tags: flag.evaluation_tags,
  }
}

/** Who is looking: decides `can_edit`. */
export interface Viewer {
  userId: number
  /** Organisation admin or owner. */
  isAdmin: boolean
  /** The roles the user is a member of, each with its `feature_flags_access_level`. */
  roles: ReadonlyMap<string, number>
}

/**
 * PostHog's `can_user_edit_feature_flag` (role-based access, no organisation-wide setting, so "can always
 * edit" by default): the creator and organisation admins may; otherwise the user's highest role level
 * decides, the default when in no role. "Can always edit" (37) may edit every flag; "can only view" (21)
 * only the flags whose role access names one of the user's roles.
 */
export function canEditFlag(flag: Pick<FeatureFlagRecord, 'created_by_id'>, viewer: Viewer, flagRoleIds: readonly string[]): boolean {
  if (viewer.isAdmin || (flag.created_by_id !== null && flag.created_by_id === viewer.userId)) return true
  const levels = [...viewer.roles.values()]
  const level = levels.length === 0 ? FlagAccessLevel.edit : Math.max(...levels)
  if (level === FlagAccessLevel.view) return flagRoleIds.some((id) => viewer.roles.has(id))
  return level === FlagAccessLevel.edit
}

const groupsOf = (filters: JsonObject): JsonObject[] => (Array.isArray(filters.groups) ? (filters.groups as JsonObject[]) : [])

export function isSimpleFlag(filters: JsonObject): boolean {
  const groups = groupsOf(filters)
  if (groups.length !== 1) return false
  const props = groups[0].properties
  return (!Array.isArray(props) || props.length === 0) && (filters.aggregation_group_type_index ?? null) === null
}

/** Everything related to a batch of flags, loaded with one query per kind. */
export interface SerializeContext {
  viewer: Viewer
  nowMs: number
  user(id: number | null): UserSummary | null
  experimentIds: Map<number, number[]>
  roleIds: Map<number, string[]>
  cohortNames: Map<number, string>
  features: Map<number, PublicEarlyAccessFeature[]>
}

function cohortIds(flags: readonly FeatureFlagRecord[]): number[] {
  const ids = new Set<number>()
  for (const flag of flags) {
    for (const g of groupsOf(flag.filters)) {
      for (const p of (Array.isArray(g.properties) ? g.properties : []) as JsonObject[]) {
        if (p.type === 'cohort' && Number.isInteger(Number(p.value))) ids.add(Number(p.value))
      }
    }
  }
  return [...ids]
}

export function serializeContext(
  repo: FlagRepository,
  features: EarlyAccessRepository,
  accounts: Accounts,
  teamId: number,
  flags: readonly FeatureFlagRecord[],
  viewer: Viewer,
  nowMs: number,
): SerializeContext {
  const ids = flags.map((f) => f.id)
  const users = new Map<number, UserSummary | null>()
  return {
    viewer,
    nowMs,
    user(id) {
      if (id === null) return null
      if (!users.has(id)) {
        const user = accounts.userById(id)
        users.set(id, user ? userSummary(user) : null)
      }
      return users.get(id) ?? null
    },
    experimentIds: repo.experimentIds(ids),
    roleIds: repo.roleAccessRoleIds(ids),
    cohortNames: repo.cohortNames(teamId, cohortIds(flags)),
    features: new Map([...features.ofFlags(ids)].map(([id, list]) => [id, list.map(toPublicFeature)])),
  }
}

/** Cohort conditions carry the cohort's name in answers (`cohort_name`), never in storage. */
function withCohortNames(filters: JsonObject, names: Map<number, string>): JsonObject {
  return mapConditionProperties(filters, 'groups', (p) => (p.type === 'cohort' ? { ...p, cohort_name: names.get(Number(p.value)) ?? null } : p))
}

export function toFeatureFlagObject(flag: FeatureFlagRecord, ctx: SerializeContext): FeatureFlagObject {
  const simple = isSimpleFlag(flag.filters)
  const canEdit = canEditFlag(flag, ctx.viewer, ctx.roleIds.get(flag.id) ?? [])
  const first = groupsOf(flag.filters)[0]
  return {
    id: flag.id,
    name: flag.name,
    key: flag.key,
    filters: withCohortNames(flag.filters, ctx.cohortNames),
    deleted: flag.deleted,
    active: flag.active,
    created_by: ctx.user(flag.created_by_id),
    created_at: flag.created_at,
    updated_at: flag.updated_at,
    version: flag.version,
    last_modified_by: ctx.user(flag.last_modified_by_id),
    is_simple_flag: simple,
    rollout_percentage: simple ? ((first?.rollout_percentage as number | null | undefined) ?? null) : null,
    ensure_experience_continuity: flag.ensure_experience_continuity,
    experiment_set: ctx.experimentIds.get(flag.id) ?? [],
    surveys: [],
    features: ctx.features.get(flag.id) ?? [],
    rollback_conditions: flag.rollback_conditions,
    performed_rollback: flag.performed_rollback,
    can_edit: canEdit,
    tags: flag.tags,
    evaluation_tags: flag.evaluation_tags,
    evaluation_contexts: flag.evaluation_tags,
    usage_dashboard: flag.usage_dashboard_id,
    analytics_dashboards: flag.analytics_dashboards,
    has_enriched_analytics: flag.has_enriched_analytics,
    user_access_level: canEdit ? 'editor' : 'viewer',
    is_remote_configuration: flag.is_remote_configuration,
    has_encrypted_payloads: flag.has_encrypted_payloads,
    status: flagStatus(flag, ctx.nowMs),
    evaluation_runtime: flag.evaluation_runtime,
    bucketing_identifier: flag.bucketing_identifier,
    last_called_at: null,
    // skylark serves no session-replay settings, so no flag gates a recording
    is_used_in_replay_settings: false,
  }
}
