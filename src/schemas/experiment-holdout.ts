/**
 * Experiment holdouts on the wire: the object (also embedded in an experiment as `holdout`) and its request
 * bodies (documentation: the domain reads them field by field with PostHog's messages, see
 * src/experiments/holdouts/input.ts).
 */
import { freeFormObject, paginated, userSummarySchema, type JsonSchema } from './shared.js'

const holdoutGroup: JsonSchema = {
  ...freeFormObject,
  properties: {
    properties: { type: 'array', items: freeFormObject },
    rollout_percentage: { type: 'number', minimum: 0, maximum: 100, description: 'The share held out, in percent.' },
    variant: { type: 'string', description: 'Set by the server to `holdout-<id>`, whatever is sent.' },
  },
  required: ['rollout_percentage'],
}

const filters: JsonSchema = {
  type: 'array',
  items: holdoutGroup,
  minItems: 1,
  description:
    "Release groups of the held-out people. Only the first group's `rollout_percentage` reaches the flags of the holdout's experiments, as `filters.holdout.exclusion_percentage`; their flags serve those people `holdout-<id>`.",
}

export const experimentHoldoutCreateSchema: JsonSchema = {
  type: 'object',
  properties: { name: { type: 'string', maxLength: 400 }, description: { type: ['string', 'null'], maxLength: 400 }, filters },
  required: ['name', 'filters'],
}

export const experimentHoldoutUpdateSchema: JsonSchema = {
  type: 'object',
  properties: {
    ...(experimentHoldoutCreateSchema.properties as Record<string, JsonSchema>),
    filters: { ...filters, description: `${filters.description as string} Changing them rewrites those flags, running experiments' too.` },
  },
}

export const experimentHoldoutSchema: JsonSchema = {
  type: 'object',
  properties: {
    id: { type: 'integer' },
    name: { type: 'string' },
    description: { type: ['string', 'null'] },
    filters: { type: 'array', items: freeFormObject },
    created_by: { ...userSummarySchema, type: ['object', 'null'] },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
    user_access_level: { type: 'string', enum: ['editor'] },
  },
  required: ['id', 'name', 'description', 'filters', 'created_by', 'created_at', 'updated_at', 'user_access_level'],
}

export const experimentHoldoutPageSchema: JsonSchema = paginated(experimentHoldoutSchema)
