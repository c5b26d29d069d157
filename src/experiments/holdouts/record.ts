/**
 * An experiment holdout as stored (one row of `experiment_holdouts`) and as the API answers it, and what a
 * holdout writes into the flag of each experiment that names it (PostHog's `holdout_filters_for_flag`).
 */
import { isPlainObject, type JsonObject } from '../../common/json.js'
import type { UserSummary } from '../../management/index.js'

export interface HoldoutRecord {
  id: number
  team_id: number
  name: string
  description: string | null
  /** PostHog's release groups; each carries `variant: "holdout-<id>"`, which the server sets. */
  filters: JsonObject[]
  created_by_id: number | null
  created_at: string
  updated_at: string
}

export type HoldoutRow = Omit<HoldoutRecord, 'filters'> & { filters: string }

/** PostHog's ExperimentHoldoutSerializer, in its field order. */
export interface HoldoutObject {
  id: number
  name: string
  description: string | null
  filters: JsonObject[]
  created_by: UserSummary | null
  created_at: string
  updated_at: string
  user_access_level: 'editor'
}

export function toHoldoutRecord(row: HoldoutRow): HoldoutRecord {
  let filters: unknown
  try {
    filters = JSON.parse(row.filters)
  } catch {
    filters = []
  }
  return { ...row, filters: Array.isArray(filters) ? filters.filter(isPlainObject) : [] }
}

export function toHoldoutObject(h: HoldoutRecord, creator: UserSummary | null): HoldoutObject {
  return {
    id: h.id,
    name: h.name,
    description: h.description,
    filters: h.filters,
    created_by: creator,
    created_at: h.created_at,
    updated_at: h.updated_at,
    // Skylark has no per-object access control: whoever may reach the API may edit.
    user_access_level: 'editor',
  }
}

/** The variant the flag serves held-out people, and the value results break down by. */
export const holdoutVariant = (id: number): string => `holdout-${id}`

/** PostHog's `_get_filters_with_holdout_id`: every group's `variant` is the holdout's own, whatever was sent. */
export function withHoldoutVariant(id: number, filters: readonly JsonObject[]): JsonObject[] {
  return filters.map((group) => ({ ...group, variant: holdoutVariant(id) }))
}

/**
 * The flag's `holdout` for an experiment with this holdout (or none): the id and the first group's rollout
 * percentage as `exclusion_percentage`. Only the first group counts, and its properties are not used, as in
 * PostHog: the flag service holds out `exclusion_percentage` % of everyone by the `holdout-<id>` hash.
 */
export function holdoutFiltersForFlag(holdout: Pick<HoldoutRecord, 'id' | 'filters'> | null): { holdout: JsonObject | null } {
  if (!holdout || holdout.filters.length === 0) return { holdout: null }
  return { holdout: { id: holdout.id, exclusion_percentage: holdout.filters[0]!.rollout_percentage ?? null } }
}
