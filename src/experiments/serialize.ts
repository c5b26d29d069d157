/**
 * The experiment object the API answers: stored fields, the embedded flag summary, the creator, `status`
 * and the flag's config projected into `parameters` (both derived from the flag, as PostHog does), and the
 * holdout. `saved_metrics` is left empty here: the service fills it from the experiment's links
 * (saved-metrics/links.ts).
 */
import type { JsonObject } from '../common/json.js'
import { minimalFlag, type FeatureFlagRecord, type MinimalFlag, type UserSummary } from '../management/index.js'
import type { EXPERIMENT_STATUSES } from '../schemas/experiment.js'
import { projectFlagConfig } from './flag-config.js'
import type { HoldoutObject } from './holdouts/index.js'
import type { ExperimentRecord } from './record.js'

export type ExperimentStatusLabel = (typeof EXPERIMENT_STATUSES)[number]


export interface ExperimentObject {
  id: number
  name: string
  description: string
  start_date: string | null
  end_date: string | null
  feature_flag_key: string
  feature_flag: MinimalFlag | null
  holdout: HoldoutObject | null
  holdout_id: number | null
  exposure_cohort: number | null
  parameters: JsonObject | null
  secondary_metrics: JsonObject[]
  saved_metrics: JsonObject[]
  filters: JsonObject
  archived: boolean
  deleted: boolean
  created_by: UserSummary | null
  created_at: string
  updated_at: string
  type: string
  status: ExperimentStatusLabel
  exposure_criteria: JsonObject | null
  metrics: JsonObject[] | null
  metrics_secondary: JsonObject[] | null
  stats_config: JsonObject | null
  scheduling_config: unknown
  running_time_calculation: JsonObject | null
  excluded_variants: string[] | null
  primary_metrics_ordered_uuids: string[] | null
  secondary_metrics_ordered_uuids: string[] | null
  only_count_matured_users: boolean
  conclusion: string | null
  conclusion_comment: string | null
  is_legacy: boolean
}


/** PostHog's `status`: a launched, not ended experiment whose flag is off is `paused`. */
export function statusLabel(e: Pick<ExperimentRecord, 'start_date' | 'end_date'>, flag: Pick<FeatureFlagRecord, 'active'> | null): ExperimentStatusLabel {
  if (e.start_date === null) return 'draft'
  if (e.end_date !== null) return 'stopped'
  return flag && !flag.active ? 'paused' : 'running'
}

export function toExperimentObject(e: ExperimentRecord, flag: FeatureFlagRecord | null, creator: UserSummary | null, holdout: HoldoutObject | null = null): ExperimentObject {
  return {
    id: e.id,
    name: e.name,
    description: e.description,
    start_date: e.start_date,
    end_date: e.end_date,
    feature_flag_key: flag?.key ?? '',
    feature_flag: flag ? minimalFlag(flag) : null,
    holdout,
    holdout_id: holdout?.id ?? null,
    exposure_cohort: e.exposure_cohort_id,
    parameters: projectFlagConfig(e.parameters, flag),
    secondary_metrics: e.secondary_metrics,
    saved_metrics: [],
    filters: e.filters,
    archived: e.archived,
    deleted: e.deleted,
    created_by: creator,
    created_at: e.created_at,
    updated_at: e.updated_at,
    type: e.type,
    status: statusLabel(e, flag),
    exposure_criteria: e.exposure_criteria,
    metrics: e.metrics,
    metrics_secondary: e.metrics_secondary,
    stats_config: e.stats_config,
    scheduling_config: e.scheduling_config,
    running_time_calculation: e.running_time_calculation,
    excluded_variants: e.excluded_variants,
    primary_metrics_ordered_uuids: e.primary_metrics_ordered_uuids,
    secondary_metrics_ordered_uuids: e.secondary_metrics_ordered_uuids,
    only_count_matured_users: e.only_count_matured_users,
    conclusion: e.conclusion,
    conclusion_comment: e.conclusion_comment,
    // PostHog's legacy-engine metric kinds; skylark refuses them on write, so only a hand-edited row has them.
    is_legacy: [...(e.metrics ?? []), ...(e.metrics_secondary ?? [])].some((m) => m.kind === 'ExperimentTrendsQuery' || m.kind === 'ExperimentFunnelsQuery'),
  }
}
