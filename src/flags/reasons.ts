/**
 * Match reasons as the current PostHog flag service reports them (`flag_match_reason.rs`): a wire code,
 * a description, and a score. When no condition matches, the highest-scoring reason seen wins, ties going
 * to the later condition.
 */
import type { FlagReason } from './types.js'

export type MatchReason =
  | 'super_condition_value'
  | 'holdout_condition_value'
  | 'condition_match'
  | 'out_of_rollout_bound'
  | 'no_condition_match'
  | 'no_condition_match_groups_not_evaluated'
  | 'no_group_type'
  | 'flag_disabled'
  | 'missing_dependency'

/**
 * A group condition skipped for lack of a group key must not bury a person condition's real answer in
 * mixed-targeting flags, so `no_group_type` sits below `no_condition_match`.
 */
export const REASON_SCORE: Readonly<Record<MatchReason, number>> = {
  super_condition_value: 6,
  holdout_condition_value: 5,
  condition_match: 4,
  out_of_rollout_bound: 3,
  no_condition_match: 2,
  no_condition_match_groups_not_evaluated: 2,
  no_group_type: 1,
  flag_disabled: 0,
  missing_dependency: -1,
}

/** The enriched "groups not evaluated" reason keeps the old wire code; only its description differs. */
export function reasonCode(reason: MatchReason): string {
  return reason === 'no_condition_match_groups_not_evaluated' ? 'no_condition_match' : reason
}

const MATCHED = Array.from({ length: 32 }, (_, i) => `Matched condition set ${i + 1}`)

export function reasonDescription(reason: MatchReason, conditionIndex: number | null): string {
  switch (reason) {
    case 'condition_match':
      return MATCHED[conditionIndex ?? 0] ?? `Matched condition set ${(conditionIndex ?? 0) + 1}`
    case 'no_condition_match':
      return 'No matching condition set'
    case 'no_condition_match_groups_not_evaluated':
      return 'No matching condition set (group conditions were not evaluated because no group type was provided)'
    case 'out_of_rollout_bound':
      return 'Out of rollout bound'
    case 'no_group_type':
      return 'No group type'
    case 'super_condition_value':
      return 'Super condition value'
    case 'holdout_condition_value':
      return 'Holdout condition value'
    case 'flag_disabled':
      return 'Feature flag is disabled'
    case 'missing_dependency':
      return 'Flag cannot be evaluated due to missing dependency'
  }
}

/** Wire reasons by reason and condition index + 1 (a plain object: read per flag, it is faster than a Map). */
const WIRE_REASONS: Record<MatchReason, FlagReason[]> = {
  super_condition_value: [],
  holdout_condition_value: [],
  condition_match: [],
  out_of_rollout_bound: [],
  no_condition_match: [],
  no_condition_match_groups_not_evaluated: [],
  no_group_type: [],
  flag_disabled: [],
  missing_dependency: [],
}
/** Reasons of condition indexes up to this are kept (and shared); flags rarely have more than a few conditions. */
const SHARED_INDEXES = 256

/**
 * The wire reason of a match. Frozen and shared between requests: the reason only depends on these two
 * values, and a request with hundreds of flags then allocates no reason objects.
 */
export function wireReason(reason: MatchReason, conditionIndex: number | null): FlagReason {
  const slot = conditionIndex === null ? 0 : conditionIndex + 1
  const byIndex = WIRE_REASONS[reason]
  let r = byIndex[slot]
  if (r === undefined) {
    r = Object.freeze({ code: reasonCode(reason), condition_index: conditionIndex, description: reasonDescription(reason, conditionIndex) })
    if (slot <= SHARED_INDEXES) byIndex[slot] = r
  }
  return r
}

/**
 * An evaluation failure of one flag. It never leaves the engine as an exception: the flag becomes
 * `enabled: false, failed: true` with `code` as its reason, and the response reports errors.
 */
export class FlagEvaluationError extends Error {
  constructor(
    readonly code: string,
    readonly description: string,
  ) {
    super(description)
    this.name = 'FlagEvaluationError'
  }
}

export const EVALUATION_ERRORS = {
  cohortNotFound: () => new FlagEvaluationError('dependency_not_found_cohort', 'Cohort dependency not found'),
  cohortCycle: () => new FlagEvaluationError('dependency_cycle_cohort', 'Cohort dependency cycle detected'),
  cohortFilters: () => new FlagEvaluationError('cohort_filters_parsing_error', 'Failed to parse cohort filters'),
  flagData: (detail: string) => new FlagEvaluationError('flag_data_parsing_error', `Failed to parse flag data: ${detail}`),
} as const
