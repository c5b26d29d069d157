/**
 * Experiments on the wire. The write schemas type-check the fields skylark stores (unknown fields are
 * stripped, as DRF ignores them); dates are strings checked by the experiment rules so the message is
 * DRF's. `parameters`, `filters` and `secondary_metrics` are free-form apart from the parts the rules
 * read (`feature_flag_variants`, the metric filters). Results answers are free-form objects.
 */
import { experimentHoldoutSchema } from './experiment-holdout.js'
import { savedMetricLinkSchema } from './experiment-saved-metric.js'
import { anyJson, freeFormObject, minimalFeatureFlagSchema, paginated, userSummarySchema, type JsonSchema } from './shared.js'

export const EXPERIMENT_TYPES = ['web', 'product'] as const
export const EXPERIMENT_CONCLUSIONS = ['won', 'lost', 'inconclusive', 'stopped_early', 'invalid'] as const
/** PostHog's `status` of an experiment (`exposure_frozen` is not modelled). */
export const EXPERIMENT_STATUSES = ['draft', 'running', 'paused', 'stopped'] as const

const variantSchema: JsonSchema = {
  type: 'object',
  additionalProperties: true,
  required: ['key'],
  properties: {
    key: { type: 'string' },
    name: { type: ['string', 'null'] },
    rollout_percentage: { type: 'number' },
    split_percent: { type: 'number', description: "PostHog's current name for `rollout_percentage`; wins when both are sent." },
  },
}

const parametersSchema: JsonSchema = {
  type: ['object', 'null'],
  additionalProperties: true,
  properties: {
    feature_flag_variants: { type: 'array', items: variantSchema },
    rollout_percentage: { type: ['integer', 'null'], minimum: 0, maximum: 100 },
    aggregation_group_type_index: { type: ['integer', 'null'] },
    feature_flag_payloads: { type: ['object', 'null'], additionalProperties: true },
    ensure_experience_continuity: { type: ['boolean', 'null'] },
  },
  description:
    'Flag config (`feature_flag_variants`, `rollout_percentage`, `aggregation_group_type_index`) is applied to the linked flag, never stored; answers project the flag\'s config here.',
}

/** Writable fields, in PostHog's serializer order. */
const writableExperimentProperties: Record<string, JsonSchema> = {
  name: { type: 'string', maxLength: 400 },
  description: { type: ['string', 'null'], maxLength: 400 },
  start_date: { type: ['string', 'null'], description: 'ISO 8601; setting it on a draft launches the experiment (activates its flag).' },
  end_date: { type: ['string', 'null'], description: 'ISO 8601; setting it ends the experiment.' },
  feature_flag_key: { type: 'string', description: 'An existing multivariate flag (control first) or the key of the flag to create. Immutable.' },
  holdout_id: { ...anyJson, description: "A holdout of the project (null: none); a created flag holds out its share. Only a draft's holdout can change." },
  parameters: parametersSchema,
  secondary_metrics: { type: ['array', 'null'], items: freeFormObject },
  filters: freeFormObject,
  archived: { type: 'boolean' },
  deleted: { type: 'boolean' },
  type: { type: ['string', 'null'], enum: [...EXPERIMENT_TYPES, null] },
  update_feature_flag_params: {
    type: 'boolean',
    description: 'Apply flag config sent in `feature_flag` (or `parameters`) to the flag of a launched experiment (drafts always apply it).',
  },
  feature_flag: {
    type: ['object', 'null'],
    additionalProperties: true,
    description:
      "Flag config in the flag's own shape: `{filters: {multivariate: {variants}, groups: [{properties: [], rollout_percentage}], aggregation_group_type_index, payloads}, ensure_experience_continuity}`; " +
      'wins over the same config in `parameters`. Unknown keys are refused; an object with an `id` (a GET echoed back) is ignored.',
  },
  metrics: { ...anyJson, description: "`ExperimentMetric`s (`metric_type` mean, funnel, ratio or retention); each gets a `uuid` and `fingerprint`. Stored, not computed: results come from `filters`." },
  metrics_secondary: { ...anyJson, description: 'Secondary `ExperimentMetric`s, as `metrics`.' },
  primary_metrics_ordered_uuids: { type: ['array', 'null'], items: { type: 'string' } },
  secondary_metrics_ordered_uuids: { type: ['array', 'null'], items: { type: 'string' } },
  saved_metrics_ids: {
    ...anyJson,
    description: 'Write-only. Shared metrics of the project to link: `[{"id": <id>, "metadata": {"type": "primary" | "secondary"}}]`; an update replaces the links (null unlinks all).',
  },
  stats_config: { type: ['object', 'null'], additionalProperties: true, description: '`method` bayesian (default) or frequentist, `baseline_variant_key`, …' },
  exposure_criteria: { ...anyJson, description: '`filterTestAccounts` (default true), `exposure_config`.' },
  scheduling_config: anyJson,
  running_time_calculation: { ...anyJson, description: '`minimum_detectable_effect`, `recommended_running_time`, `recommended_sample_size`, `exposure_estimate_config`.' },
  excluded_variants: { type: ['array', 'null'], items: { type: 'string' }, description: 'Variant keys left out of the analysis (not the baseline).' },
  only_count_matured_users: { type: 'boolean' },
  conclusion: { type: ['string', 'null'], enum: [...EXPERIMENT_CONCLUSIONS, null] },
  conclusion_comment: { type: ['string', 'null'], maxLength: 4000 },
  allow_unknown_events: { type: 'boolean', description: 'Write-only. Allows metrics to name events this project has not ingested (refused otherwise: most likely a typo).' },
}

export const experimentCreateSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'feature_flag_key'],
  properties: writableExperimentProperties,
}

export const experimentUpdateSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: writableExperimentProperties,
}

export interface ExperimentVariantWrite {
  key: string
  name?: string | null
  rollout_percentage?: number
  [other: string]: unknown
}

export interface ExperimentParametersWrite {
  feature_flag_variants?: ExperimentVariantWrite[]
  rollout_percentage?: number | null
  aggregation_group_type_index?: number | null
  feature_flag_payloads?: Record<string, unknown> | null
  ensure_experience_continuity?: boolean | null
  [other: string]: unknown
}

export interface ExperimentWrite {
  name?: string
  description?: string | null
  start_date?: string | null
  end_date?: string | null
  feature_flag_key?: string
  holdout_id?: unknown
  parameters?: ExperimentParametersWrite | null
  secondary_metrics?: Array<Record<string, unknown>> | null
  filters?: Record<string, unknown>
  archived?: boolean
  deleted?: boolean
  type?: (typeof EXPERIMENT_TYPES)[number] | null
  update_feature_flag_params?: boolean
  feature_flag?: Record<string, unknown> | null
  metrics?: unknown
  metrics_secondary?: unknown
  primary_metrics_ordered_uuids?: string[] | null
  secondary_metrics_ordered_uuids?: string[] | null
  saved_metrics_ids?: unknown
  stats_config?: Record<string, unknown> | null
  exposure_criteria?: unknown
  scheduling_config?: unknown
  running_time_calculation?: unknown
  excluded_variants?: string[] | null
  only_count_matured_users?: boolean
  conclusion?: (typeof EXPERIMENT_CONCLUSIONS)[number] | null
  conclusion_comment?: string | null
  allow_unknown_events?: boolean
}


export const experimentSchema: JsonSchema = {
  type: 'object',
  properties: {
    id: { type: 'integer' },
    name: { type: 'string' },
    description: { type: ['string', 'null'] },
    start_date: { type: ['string', 'null'], format: 'date-time' },
    end_date: { type: ['string', 'null'], format: 'date-time' },
    feature_flag_key: { type: 'string' },
    feature_flag: minimalFeatureFlagSchema,
    holdout: { ...experimentHoldoutSchema, type: ['object', 'null'] },
    holdout_id: { type: ['integer', 'null'] },
    exposure_cohort: { type: ['integer', 'null'] },
    parameters: anyJson,
    secondary_metrics: anyJson,
    saved_metrics: { type: 'array', items: savedMetricLinkSchema },
    filters: freeFormObject,
    archived: { type: 'boolean' },
    deleted: { type: 'boolean' },
    created_by: { ...userSummarySchema, type: ['object', 'null'] },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
    type: { type: ['string', 'null'] },
    status: {
      type: 'string',
      enum: [...EXPERIMENT_STATUSES],
      description: '`paused`: launched, not ended, its flag switched off (derived from the flag, as in PostHog).',
    },
    exposure_criteria: anyJson,
    metrics: { type: ['array', 'null'], items: freeFormObject },
    metrics_secondary: { type: ['array', 'null'], items: freeFormObject },
    stats_config: anyJson,
    scheduling_config: anyJson,
    running_time_calculation: anyJson,
    excluded_variants: { type: ['array', 'null'], items: { type: 'string' } },
    primary_metrics_ordered_uuids: { type: ['array', 'null'], items: { type: 'string' } },
    secondary_metrics_ordered_uuids: { type: ['array', 'null'], items: { type: 'string' } },
    only_count_matured_users: { type: 'boolean' },
    conclusion: { type: ['string', 'null'] },
    conclusion_comment: { type: ['string', 'null'] },
    is_legacy: { type: 'boolean', description: 'Whether `metrics` hold legacy-engine queries (never, since skylark refuses them).' },
  },
  required: ['id', 'name', 'feature_flag_key', 'feature_flag', 'exposure_cohort', 'filters', 'archived', 'created_by', 'created_at'],
}

export const experimentPageSchema: JsonSchema = paginated(experimentSchema)

/** POST …/create_exposure_cohort_for_experiment/: the experiment, plus the new cohort as PostHog answers it. */
export const experimentWithCohortSchema: JsonSchema = {
  ...experimentSchema,
  properties: { ...(experimentSchema.properties as Record<string, JsonSchema>), cohort: freeFormObject },
  required: [...(experimentSchema.required as string[]), 'cohort'],
}

/** `{result, last_refresh, is_cached}` of the results endpoints; `result` is documented in docs/architecture.md. */
export const experimentResultsSchema: JsonSchema = {
  type: 'object',
  properties: {
    result: { type: ['object', 'array'] },
    last_refresh: { type: 'string', format: 'date-time' },
    is_cached: { type: 'boolean' },
  },
  required: ['result', 'last_refresh', 'is_cached'],
}

/** GET …/experiments/requires_flag_implementation/. */
export const experimentsRequiringFlagSchema: JsonSchema = {
  type: 'object',
  properties: { result: { type: 'array', items: experimentSchema } },
  required: ['result'],
}

/** DRF's BooleanField takes these as well as JSON booleans. */
const drfBoolean: JsonSchema = { type: ['boolean', 'string', 'integer'] }

const conclusionProperties: Record<string, JsonSchema> = {
  conclusion: { type: ['string', 'null'], description: `One of ${EXPERIMENT_CONCLUSIONS.join(', ')}; stored on the experiment.` },
  conclusion_comment: { type: ['string', 'null'], maxLength: 4000 },
}

/** POST …/:id/end/ (PostHog's EndExperimentSerializer; `open_cleanup_pr` is ignored, as PostHog does off its allowlist). */
export const experimentEndSchema: JsonSchema = { type: 'object', additionalProperties: false, properties: conclusionProperties }

/** POST …/:id/ship_variant/. */
export const experimentShipVariantSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['variant_key'],
  properties: {
    ...conclusionProperties,
    variant_key: { type: 'string', description: 'The variant to roll out to 100% of the split.' },
    release_to_everyone: { ...drfBoolean, description: 'Also put a catch-all 100% condition first, so everyone gets the variant.' },
  },
}

/** POST …/:id/archive/. */
export const experimentArchiveSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    disable_feature_flag: { ...drfBoolean, description: 'Also switch the flag off (needs `feature_flag:write`) unless another live experiment uses it.' },
  },
}

/** POST …/:id/duplicate/. */
export const experimentDuplicateSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    name: { type: ['string', 'null'], description: 'Default: `<name> (Copy)`, numbered while taken.' },
    feature_flag_key: { type: ['string', 'null'], description: "Default: the source's flag, which the copy then shares." },
  },
}

export interface ExperimentActionWrite {
  conclusion?: string | null
  conclusion_comment?: string | null
  variant_key?: string
  release_to_everyone?: boolean | string | number
  disable_feature_flag?: boolean | string | number
  name?: string | null
  feature_flag_key?: string | null
}
