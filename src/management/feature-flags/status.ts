/**
 * PostHog's flag status (FeatureFlagStatusChecker) and the rollout state its bulk delete reports, read from
 * the stored filters only: skylark does not track `last_called_at`, so there is no usage-based `INACTIVE`
 * (PostHog's rule would call every flag older than 30 days that was never called inactive).
 */
import { isPlainObject, type JsonObject } from '../../common/json.js'
import type { FeatureFlagRecord } from './record.js'

export type FlagStatus = 'ACTIVE' | 'STALE' | 'DELETED'

const THIRTY_DAYS_MS = 30 * 24 * 3600 * 1000

const groupsOf = (filters: JsonObject): JsonObject[] => (Array.isArray(filters.groups) ? (filters.groups as JsonObject[]) : [])
const variantsOf = (filters: JsonObject): JsonObject[] => {
  const multivariate = filters.multivariate
  return isPlainObject(multivariate) && Array.isArray(multivariate.variants) ? (multivariate.variants as JsonObject[]) : []
}
/** Python truthiness of `filters.multivariate`: a non-empty object. */
const isMultivariate = (filters: JsonObject) => isPlainObject(filters.multivariate) && Object.keys(filters.multivariate).length > 0
const fullyRolledOut = (g: JsonObject) => g.rollout_percentage === 100 && (!Array.isArray(g.properties) || g.properties.length === 0)

/** The variant a multivariate flag always serves, or null when its evaluations can still vary. */
function alwaysVariant(filters: JsonObject): string | null {
  const full = groupsOf(filters).filter(fullyRolledOut)
  if (full.length === 0) return null
  const override = full.find((g) => typeof g.variant === 'string' && g.variant !== '')?.variant as string | undefined
  const variant = variantsOf(filters).find((v) => v.rollout_percentage === 100)?.key as string | undefined
  return override ?? variant ?? null
}

/** An active boolean flag with no filters at all, or a condition without properties at 100 %. */
const alwaysTrue = (filters: JsonObject) => Object.keys(filters).length === 0 || groupsOf(filters).some(fullyRolledOut)

/** The status and PostHog's sentence for it. */
export function flagStatusReason(flag: FeatureFlagRecord, nowMs: number): { status: FlagStatus; reason: string } {
  if (flag.deleted) return { status: 'DELETED', reason: 'Flag has been deleted' }
  if (flag.active && Date.parse(flag.created_at) < nowMs - THIRTY_DAYS_MS) {
    if (isMultivariate(flag.filters)) {
      const variant = alwaysVariant(flag.filters)
      if (variant !== null) return { status: 'STALE', reason: `This flag will always use the variant "${variant}"` }
    } else if (alwaysTrue(flag.filters)) {
      return { status: 'STALE', reason: 'This boolean flag will always evaluate to "true"' }
    }
  }
  return { status: 'ACTIVE', reason: 'Flag is active and being evaluated' }
}

/** Deleted, or stale when an active flag older than 30 days can only evaluate one way. */
export function flagStatus(flag: FeatureFlagRecord, nowMs: number): FlagStatus {
  return flagStatusReason(flag, nowMs).status
}

export interface RolloutInfo {
  rollout_state: 'fully_rolled_out' | 'not_rolled_out' | 'partial'
  active_variant: string | null
}

/** What bulk delete reports of each flag it deleted (PostHog's `_get_flag_rollout_info`: active or not). */
export function rolloutInfo(filters: JsonObject): RolloutInfo {
  if (isMultivariate(filters)) {
    const variant = alwaysVariant(filters)
    if (variant !== null) return { rollout_state: 'fully_rolled_out', active_variant: variant }
  } else if (alwaysTrue(filters)) {
    return { rollout_state: 'fully_rolled_out', active_variant: null }
  }
  const groups = groupsOf(filters)
  if (groups.length > 0 && groups.every((g) => g.rollout_percentage === 0)) return { rollout_state: 'not_rolled_out', active_variant: null }
  return { rollout_state: 'partial', active_variant: null }
}
