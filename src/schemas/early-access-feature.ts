/**
 * Early access features on the wire: the management object, its request bodies (documentation: the domain
 * reads them field by field with DRF's messages, see src/management/early-access/input.ts), and the public form
 * posthog-js reads, which a flag object also lists in `features`.
 */
import { anyJson, minimalFeatureFlagSchema, paginated, userSummarySchema, type JsonSchema } from './shared.js'

/** PostHog's `EarlyAccessFeature.Stage`. */
export const EARLY_ACCESS_STAGES = ['draft', 'concept', 'alpha', 'beta', 'general-availability', 'archived'] as const

const stage: JsonSchema = {
  type: 'string',
  enum: [...EARLY_ACCESS_STAGES],
  description: 'Moving to alpha, beta or general-availability serves the flag to people who opted in (`feature_enrollment`); any other stage stops it.',
}

const assigneeWrite: JsonSchema = {
  type: ['object', 'null'],
  description: '`{"type": "user", "id": <user id>}` or `{"type": "role", "id": "<role id>"}` of the organisation; null unassigns. Defaults to the creator.',
  properties: { type: { type: 'string', enum: ['user', 'role'] }, id: { type: ['integer', 'string'] } },
}

const writable: Record<string, JsonSchema> = {
  name: { type: 'string', maxLength: 200 },
  description: { type: 'string' },
  stage,
  documentation_url: { type: 'string', maxLength: 800, description: 'A URL (http, https, ftp or ftps), or blank.' },
  payload: { ...anyJson, description: 'Any JSON; answered as `{}` when empty.' },
  assignee: assigneeWrite,
}

export const earlyAccessFeatureCreateSchema: JsonSchema = {
  type: 'object',
  properties: {
    ...writable,
    feature_flag_id: {
      type: 'integer',
      description:
        'A flag of the project to link (not already linked, not group-based, not multivariate). Without it a flag is created from the name (key: its slug, rollout 0%).',
    },
  },
  required: ['name', 'stage'],
}

export const earlyAccessFeatureUpdateSchema: JsonSchema = {
  type: 'object',
  properties: {
    ...writable,
    rollout_to_all: { type: 'boolean', description: 'With a move to general-availability: the flag serves everyone (one condition at 100%) instead of the enrolled.' },
  },
}

export const earlyAccessFeatureSchema: JsonSchema = {
  type: 'object',
  properties: {
    id: { type: 'string', format: 'uuid' },
    feature_flag: minimalFeatureFlagSchema,
    name: { type: 'string' },
    description: { type: 'string' },
    stage: { type: 'string', enum: [...EARLY_ACCESS_STAGES] },
    documentation_url: { type: 'string' },
    payload: anyJson,
    created_at: { type: 'string', format: 'date-time' },
    created_by: { ...userSummarySchema, type: ['object', 'null'] },
    assignee: {
      type: ['object', 'null'],
      properties: { type: { type: 'string', enum: ['user', 'role'] }, id: { type: ['integer', 'string'] } },
      required: ['type', 'id'],
    },
    user_access_level: { type: 'string', enum: ['editor'] },
  },
  required: ['id', 'feature_flag', 'name', 'description', 'stage', 'documentation_url', 'payload', 'created_at', 'created_by', 'assignee', 'user_access_level'],
}

export const earlyAccessFeaturePageSchema: JsonSchema = paginated(earlyAccessFeatureSchema)

/** PostHog's MinimalEarlyAccessFeatureSerializer, which posthog-js's `EarlyAccessFeature` mirrors. */
export const publicEarlyAccessFeatureSchema: JsonSchema = {
  type: 'object',
  properties: {
    id: { type: 'string', format: 'uuid' },
    name: { type: 'string' },
    description: { type: 'string' },
    stage: { type: 'string', enum: [...EARLY_ACCESS_STAGES] },
    documentationUrl: { type: 'string' },
    flagKey: { type: ['string', 'null'] },
    payload: anyJson,
    assignee: {
      type: ['object', 'null'],
      description: 'A display name only: the list is public.',
      properties: { type: { type: 'string', enum: ['user', 'role'] }, name: { type: 'string' } },
      required: ['type', 'name'],
    },
  },
  required: ['id', 'name', 'description', 'stage', 'documentationUrl', 'flagKey', 'payload', 'assignee'],
}

export const publicEarlyAccessFeatureListSchema: JsonSchema = {
  type: 'object',
  properties: { earlyAccessFeatures: { type: 'array', items: publicEarlyAccessFeatureSchema } },
  required: ['earlyAccessFeatures'],
}
