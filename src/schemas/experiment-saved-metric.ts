/**
 * Shared ("saved") experiment metrics on the wire: the object, its request bodies (documentation: the domain
 * reads them field by field with DRF's messages, src/experiments/saved-metrics/input.ts), and an experiment's
 * link to one as its `saved_metrics` answer.
 */
import { freeFormObject, paginated, userSummarySchema, type JsonSchema } from './shared.js'

const query: JsonSchema = {
  type: 'object',
  additionalProperties: true,
  description:
    "An `ExperimentMetric` (`metric_type` mean, funnel, ratio or retention), checked as an experiment's inline metrics are. It gets a `uuid` of its own, kept for life.",
}

const writable: Record<string, JsonSchema> = {
  name: { type: 'string', maxLength: 400, description: 'Unique within the project, ignoring case.' },
  description: { type: ['string', 'null'], maxLength: 400 },
  query,
  tags: { type: 'array', items: { type: 'string' }, description: 'Stored trimmed, lower-case, once each.' },
}

export const savedMetricCreateSchema: JsonSchema = { type: 'object', properties: writable, required: ['name', 'query'] }

export const savedMetricUpdateSchema: JsonSchema = { type: 'object', properties: writable }

export const savedMetricSchema: JsonSchema = {
  type: 'object',
  properties: {
    id: { type: 'integer' },
    name: { type: 'string' },
    description: { type: ['string', 'null'] },
    query: freeFormObject,
    created_by: { ...userSummarySchema, type: ['object', 'null'] },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
    tags: { type: 'array', items: { type: 'string' } },
    user_access_level: { type: 'string', enum: ['editor'] },
  },
  required: ['id', 'name', 'description', 'query', 'created_by', 'created_at', 'updated_at', 'tags', 'user_access_level'],
}

export const savedMetricPageSchema: JsonSchema = paginated(savedMetricSchema)

/** One of an experiment's `saved_metrics` (PostHog's ExperimentToSavedMetricSerializer). */
export const savedMetricLinkSchema: JsonSchema = {
  type: 'object',
  properties: {
    id: { type: 'integer' },
    experiment: { type: 'integer' },
    saved_metric: { type: 'integer' },
    metadata: { ...freeFormObject, description: '`type`: `primary` or `secondary`, the list the metric counts in.' },
    created_at: { type: 'string', format: 'date-time' },
    query: { ...freeFormObject, description: "The shared metric's query with its `fingerprint` for this experiment's settings." },
    name: { type: 'string' },
  },
  required: ['id', 'experiment', 'saved_metric', 'metadata', 'created_at', 'query', 'name'],
}
