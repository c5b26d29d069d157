/**
 * Annotations on the wire: the object (PostHog's AnnotationSerializer) and its request body (documentation:
 * the domain reads it field by field with DRF's messages, see src/management/annotations/input.ts).
 */
import { paginated, userSummarySchema, type JsonSchema } from './shared.js'

/** PostHog's `Annotation.Scope`; `recording` is refused on write, `insight` is read as `dashboard_item` in lists. */
export const ANNOTATION_SCOPES = ['dashboard_item', 'dashboard', 'project', 'organization', 'tag', 'recording'] as const

/** PostHog's `Annotation.CreationType`: a person (`USR`) or a bot such as a deploy script (`GIT`). */
export const ANNOTATION_CREATION_TYPES = ['USR', 'GIT'] as const

const nullableText = (maxLength: number, description: string): JsonSchema => ({ type: ['string', 'null'], maxLength, description })

export const annotationWriteSchema: JsonSchema = {
  type: 'object',
  properties: {
    content: nullableText(8192, 'The note shown on charts: a release, a campaign, an incident.'),
    date_marker: { type: ['string', 'null'], format: 'date-time', description: 'When it happened (ISO 8601; without an offset, UTC).' },
    creation_type: { type: 'string', enum: [...ANNOTATION_CREATION_TYPES], description: '`USR` (a person, the default) or `GIT` (a bot, such as a deploy script).' },
    dashboard_item: { type: 'null', description: 'The insight: skylark has none, so only null is accepted.' },
    dashboard_id: { type: ['integer', 'null'], description: 'A dashboard of the project to attach the annotation to.' },
    deleted: { type: 'boolean', description: 'true soft-deletes the annotation, false restores it.' },
    scope: {
      type: 'string',
      enum: ANNOTATION_SCOPES.filter((s) => s !== 'recording'),
      description: '`organization`: seen from every project of the organisation; `project`, `dashboard`, `dashboard_item` (the default), `tag`: this project. `recording` is refused.',
    },
    emoji: nullableText(16, 'Shown instead of the default badge; blank means none.'),
    hidden_in_user_interface: { type: ['boolean', 'null'], description: 'true hides it from the charts but not from the API.' },
    tags: {
      type: 'array',
      maxItems: 100,
      items: { type: 'string', maxLength: 255 },
      description: 'With scope `tag` only, and then at least one; stored trimmed, lower-case, once each.',
    },
  },
}

export const annotationSchema: JsonSchema = {
  type: 'object',
  properties: {
    id: { type: 'integer' },
    content: { type: ['string', 'null'] },
    date_marker: { type: ['string', 'null'], format: 'date-time' },
    creation_type: { type: 'string', enum: [...ANNOTATION_CREATION_TYPES] },
    dashboard_item: { type: 'null' },
    dashboard_id: { type: ['integer', 'null'] },
    dashboard_name: { type: ['string', 'null'] },
    insight_short_id: { type: 'null' },
    insight_name: { type: 'null' },
    insight_derived_name: { type: 'null' },
    created_by: { ...userSummarySchema, type: ['object', 'null'] },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
    deleted: { type: 'boolean' },
    scope: { type: 'string', enum: [...ANNOTATION_SCOPES] },
    emoji: { type: ['string', 'null'] },
    hidden_in_user_interface: { type: ['boolean', 'null'] },
    tags: { type: 'array', items: { type: 'string' } },
  },
  required: [
    'id', 'content', 'date_marker', 'creation_type', 'dashboard_item', 'dashboard_id', 'dashboard_name', 'insight_short_id', 'insight_name',
    'insight_derived_name', 'created_by', 'created_at', 'updated_at', 'deleted', 'scope', 'emoji', 'hidden_in_user_interface', 'tags',
  ],
}

export const annotationPageSchema: JsonSchema = paginated(annotationSchema)
