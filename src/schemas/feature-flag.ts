/**
 * Feature flags and their role access on the wire. The request schemas are what the validators compile
 * (unknown top-level fields are stripped, wrong types rejected); the response schemas are what the
 * serializers compile. `filters`, its payloads and `rollback_conditions` are free-form: their
 * known parts are type-checked on the way in and every key is kept on the way out.
 */
import { publicEarlyAccessFeatureSchema } from './early-access-feature.js'
import { anyJson, freeFormObject, paginated, userSummarySchema, type JsonSchema } from './shared.js'

export const EVALUATION_RUNTIMES = ['server', 'client', 'all'] as const
export const BUCKETING_IDENTIFIERS = ['distinct_id', 'device_id'] as const
/** PostHog's `creation_context` choices. */
export const CREATION_CONTEXTS = ['feature_flags', 'experiments', 'surveys', 'early_access_features', 'web_experiments', 'product_tours'] as const

/** One condition of a release group: `{key, value, operator?, type?, group_type_index?, negation?}`. */
export const propertyFilterSchema: JsonSchema = {
  type: 'object',
  additionalProperties: true,
  required: ['key'],
  properties: {
    key: { type: ['string', 'integer'] },
    value: anyJson,
    operator: { type: ['string', 'null'] },
    type: { type: 'string' },
    group_type_index: { type: ['integer', 'null'] },
    negation: { type: 'boolean' },
  },
}

const releaseGroupSchema: JsonSchema = {
  type: 'object',
  additionalProperties: true,
  properties: {
    properties: { type: 'array', items: propertyFilterSchema },
    rollout_percentage: { type: ['number', 'null'] },
    variant: { type: ['string', 'null'] },
    description: { type: ['string', 'null'] },
  },
}

const variantSchema: JsonSchema = {
  type: 'object',
  additionalProperties: true,
  required: ['key'],
  properties: {
    key: { type: 'string' },
    name: { type: ['string', 'null'] },
    rollout_percentage: { type: 'number' },
  },
}

export const flagFiltersSchema: JsonSchema = {
  type: 'object',
  additionalProperties: true,
  properties: {
    groups: { type: 'array', items: releaseGroupSchema },
    multivariate: {
      type: ['object', 'null'],
      additionalProperties: true,
      properties: { variants: { type: 'array', items: variantSchema } },
    },
    aggregation_group_type_index: { type: ['integer', 'null'] },
    // Checked by the flag rules so the message is PostHog's ("Payloads must be passed as a dictionary").
    payloads: anyJson,
    super_groups: { type: 'array', items: releaseGroupSchema },
    // null is what PostHog's experiments write for "no holdout"
    holdout_groups: { type: ['array', 'null'], items: releaseGroupSchema },
  },
}

/** Writable fields, in PostHog's serializer order (the first broken field is the one reported). */
const writableFlagProperties: Record<string, JsonSchema> = {
  name: { type: 'string', description: "The flag's description (the field is called name for backwards compatibility)." },
  key: { type: 'string' },
  filters: flagFiltersSchema,
  deleted: { type: 'boolean' },
  active: { type: 'boolean' },
  created_at: { type: 'string', format: 'date-time' },
  version: { type: 'integer', description: 'The version the change is based on; a different stored version answers 409.' },
  ensure_experience_continuity: { type: 'boolean' },
  rollback_conditions: anyJson,
  performed_rollback: { type: 'boolean' },
  tags: { type: 'array', items: { type: 'string' } },
  evaluation_tags: { type: 'array', items: { type: 'string' } },
  evaluation_contexts: { type: 'array', items: { type: 'string' }, description: "PostHog's current name for evaluation_tags (either is taken; contexts wins)." },
  analytics_dashboards: { type: 'array', items: { type: 'integer' } },
  has_enriched_analytics: { type: 'boolean' },
  is_remote_configuration: { type: 'boolean' },
  has_encrypted_payloads: { type: 'boolean' },
  evaluation_runtime: { type: 'string', enum: [...EVALUATION_RUNTIMES] },
  bucketing_identifier: {
    type: ['string', 'null'],
    enum: [...BUCKETING_IDENTIFIERS, '', null],
    description: 'What person conditions hash: device_id for $device_id; distinct_id, blank or null for the distinct id.',
  },
  creation_context: { type: 'string', enum: [...CREATION_CONTEXTS], description: 'The product the flag was made in (write-only; PostHog reads it for analytics).' },
  _create_in_folder: { type: 'string', description: "PostHog's folder for the new flag (write-only; skylark has no folders)." },
  _should_create_usage_dashboard: { type: 'boolean', description: 'Create the flag\'s usage dashboard with it (default true; create only).' },
}

export const featureFlagCreateSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['key'],
  properties: writableFlagProperties,
}

export const featureFlagUpdateSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    ...writableFlagProperties,
    original_flag: {
      ...anyJson,
      description: 'The flag as the client last read it: with a stale `version`, the change is refused (409) only for fields someone else changed since.',
    },
  },
}

export interface FeatureFlagWrite {
  name?: string
  key?: string
  filters?: Record<string, unknown>
  deleted?: boolean
  active?: boolean
  created_at?: string
  version?: number
  ensure_experience_continuity?: boolean
  rollback_conditions?: unknown
  performed_rollback?: boolean
  tags?: string[]
  evaluation_tags?: string[]
  evaluation_contexts?: string[]
  analytics_dashboards?: number[]
  has_enriched_analytics?: boolean
  is_remote_configuration?: boolean
  has_encrypted_payloads?: boolean
  evaluation_runtime?: (typeof EVALUATION_RUNTIMES)[number]
  bucketing_identifier?: (typeof BUCKETING_IDENTIFIERS)[number] | '' | null
  creation_context?: (typeof CREATION_CONTEXTS)[number]
  _create_in_folder?: string
  _should_create_usage_dashboard?: boolean
  original_flag?: unknown
}

const nullableUser: JsonSchema = { ...userSummarySchema, type: ['object', 'null'] }

export const featureFlagSchema: JsonSchema = {
  type: 'object',
  properties: {
    id: { type: 'integer' },
    name: { type: 'string' },
    key: { type: 'string' },
    filters: freeFormObject,
    deleted: { type: 'boolean' },
    active: { type: 'boolean' },
    created_by: nullableUser,
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
    version: { type: 'integer' },
    last_modified_by: nullableUser,
    is_simple_flag: { type: 'boolean' },
    rollout_percentage: { type: ['number', 'null'] },
    ensure_experience_continuity: { type: 'boolean' },
    experiment_set: { type: 'array', items: { type: 'integer' } },
    surveys: { type: 'array', items: freeFormObject },
    features: { type: 'array', items: publicEarlyAccessFeatureSchema, description: 'The early access features linked to the flag, as posthog-js reads them.' },
    rollback_conditions: anyJson,
    performed_rollback: { type: 'boolean' },
    can_edit: { type: 'boolean' },
    tags: { type: 'array', items: { type: 'string' } },
    evaluation_tags: { type: 'array', items: { type: 'string' } },
    evaluation_contexts: { type: 'array', items: { type: 'string' } },
    usage_dashboard: { type: ['integer', 'null'] },
    analytics_dashboards: { type: 'array', items: { type: 'integer' } },
    has_enriched_analytics: { type: 'boolean' },
    user_access_level: { type: 'string', enum: ['editor', 'viewer'] },
    is_remote_configuration: { type: 'boolean' },
    has_encrypted_payloads: { type: 'boolean' },
    status: { type: 'string', enum: ['ACTIVE', 'STALE', 'DELETED'] },
    evaluation_runtime: { type: 'string', enum: [...EVALUATION_RUNTIMES] },
    bucketing_identifier: { type: ['string', 'null'], enum: [...BUCKETING_IDENTIFIERS, '', null] },
    last_called_at: { type: ['string', 'null'], format: 'date-time' },
    is_used_in_replay_settings: { type: 'boolean' },
  },
  required: ['id', 'name', 'key', 'filters', 'deleted', 'active', 'created_by', 'created_at', 'version'],
}

export const featureFlagPageSchema: JsonSchema = paginated(featureFlagSchema)

export const flagStatusSchema: JsonSchema = {
  type: 'object',
  properties: { status: { type: 'string', enum: ['active', 'stale', 'deleted', 'unknown'] }, reason: { type: 'string' } },
  required: ['status', 'reason'],
}

export const dependentFlagsSchema: JsonSchema = {
  type: 'array',
  items: { type: 'object', properties: { id: { type: 'integer' }, key: { type: 'string' }, name: { type: 'string', description: 'The name, or the key when the name is blank.' } }, required: ['id', 'key', 'name'] },
}

const flagIdList: JsonSchema = { type: 'array', items: { type: ['integer', 'string'] }, description: 'Flag ids (integers or strings of digits).' }

export const flagIdsSchema: JsonSchema = { type: 'object', properties: { ids: flagIdList } }

export const bulkKeysSchema: JsonSchema = {
  type: 'object',
  properties: { keys: { type: 'object', additionalProperties: { type: 'string' } }, warning: { type: 'string' } },
  required: ['keys'],
}

export const matchingIdsSchema: JsonSchema = {
  type: 'object',
  properties: { ids: { type: 'array', items: { type: 'integer' } }, total: { type: 'integer' } },
  required: ['ids', 'total'],
}

export const bulkDeleteRequestSchema: JsonSchema = {
  type: 'object',
  properties: {
    filters: { type: 'object', additionalProperties: true, description: 'List filters: active, created_by_id, search, type, evaluation_runtime, excluded_properties, tags, has_evaluation_tags.' },
    ids: flagIdList,
  },
}

export const bulkDeleteSchema: JsonSchema = {
  type: 'object',
  properties: {
    deleted: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          id: { type: 'integer' },
          key: { type: 'string' },
          rollout_state: { type: 'string', enum: ['fully_rolled_out', 'not_rolled_out', 'partial'] },
          active_variant: { type: ['string', 'null'] },
        },
        required: ['id', 'key', 'rollout_state', 'active_variant'],
      },
    },
    errors: { type: 'array', items: { type: 'object', properties: { id: anyJson, key: { type: 'string' }, reason: { type: 'string' } }, required: ['id', 'reason'] } },
  },
  required: ['deleted', 'errors'],
}

export const roleAccessCreateSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['role_id'],
  properties: { role_id: { type: 'string', format: 'uuid' } },
}

export interface RoleAccessWrite {
  role_id: string
}

export const roleSchema: JsonSchema = {
  type: 'object',
  properties: {
    id: { type: 'string', format: 'uuid' },
    name: { type: 'string' },
    feature_flags_access_level: { type: 'integer' },
    created_at: { type: 'string', format: 'date-time' },
    created_by: nullableUser,
    members: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          id: { type: 'string' },
          role_id: { type: 'string' },
          user: userSummarySchema,
          joined_at: { type: 'string', format: 'date-time' },
        },
      },
    },
    associated_flags: {
      type: 'array',
      items: { type: 'object', properties: { id: { type: 'integer' }, key: { type: 'string' } } },
    },
  },
  required: ['id', 'name', 'feature_flags_access_level', 'created_at', 'created_by'],
}

export const roleAccessSchema: JsonSchema = {
  type: 'object',
  properties: {
    id: { type: 'integer' },
    feature_flag: featureFlagSchema,
    role: roleSchema,
    role_id: { type: 'string', format: 'uuid' },
    added_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
  },
  required: ['id', 'feature_flag', 'role', 'role_id', 'added_at', 'updated_at'],
}

export const roleAccessPageSchema: JsonSchema = paginated(roleAccessSchema)
