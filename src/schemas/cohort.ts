/**
 * Cohorts on the wire, the minimal set flags need. `filters.properties` is a property-group tree
 * (`{type: "AND"|"OR", values: [group | property, …]}`); its recursive shape is checked by the cohort
 * rules so the schema stays free of `$ref`s.
 */
import { freeFormObject, paginated, userSummarySchema, type JsonSchema } from './shared.js'

export const cohortFiltersSchema: JsonSchema = {
  type: 'object',
  additionalProperties: true,
  properties: { properties: freeFormObject },
}

const writableCohortProperties: Record<string, JsonSchema> = {
  name: { type: ['string', 'null'] },
  description: { type: 'string' },
  filters: cohortFiltersSchema,
  is_static: { type: 'boolean' },
  deleted: { type: 'boolean' },
}

export const cohortUpdateSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: writableCohortProperties,
}

export const cohortCreateSchema: JsonSchema = {
  ...cohortUpdateSchema,
  properties: {
    ...writableCohortProperties,
    _create_static_person_ids: {
      type: 'array',
      items: { type: 'string' },
      writeOnly: true,
      description: 'A static cohort starts with the persons of these UUIDs (unknown ones are skipped).',
    },
  },
}

/** `PATCH …/add_persons_to_static_cohort/`; checked by the cohort rules, with PostHog's messages. */
export const cohortAddPersonsSchema: JsonSchema = {
  type: 'object',
  properties: { person_ids: { type: 'array', items: { type: 'string' }, minItems: 1, maxItems: 1000, description: 'Person UUIDs.' } },
  required: ['person_ids'],
}

/** `PATCH …/remove_person_from_static_cohort/`. */
export const cohortRemovePersonSchema: JsonSchema = {
  type: 'object',
  properties: { person_id: { type: 'string', format: 'uuid' } },
  required: ['person_id'],
}

export const cohortMembersChangedSchema: JsonSchema = {
  type: 'object',
  properties: { success: { type: 'boolean' } },
  required: ['success'],
}

const usedInBlock = (item: JsonSchema): JsonSchema => ({
  type: 'object',
  properties: { results: { type: 'array', items: item }, total: { type: 'integer' }, has_more: { type: 'boolean' } },
  required: ['results', 'total', 'has_more'],
})

/** PostHog's CohortUsedInResponseSerializer: the flags, insights and cohorts using a cohort. */
export const cohortUsedInSchema: JsonSchema = {
  type: 'object',
  properties: {
    feature_flags: usedInBlock({ type: 'object', properties: { id: { type: 'integer' }, key: { type: 'string' }, name: { type: 'string' } }, required: ['id', 'key', 'name'] }),
    insights: usedInBlock({ type: 'object', properties: { id: { type: 'integer' }, short_id: { type: 'string' }, name: { type: 'string' } }, required: ['id', 'short_id', 'name'] }),
    cohorts: usedInBlock({ type: 'object', properties: { id: { type: 'integer' }, name: { type: 'string' } }, required: ['id', 'name'] }),
  },
  required: ['feature_flags', 'insights', 'cohorts'],
}

export interface CohortWrite {
  name?: string | null
  description?: string
  filters?: Record<string, unknown>
  is_static?: boolean
  deleted?: boolean
  _create_static_person_ids?: string[]
}

export const cohortSchema: JsonSchema = {
  type: 'object',
  properties: {
    id: { type: 'integer' },
    name: { type: ['string', 'null'] },
    description: { type: 'string' },
    filters: freeFormObject,
    is_static: { type: 'boolean' },
    deleted: { type: 'boolean' },
    is_calculating: { type: 'boolean' },
    errors_calculating: { type: 'integer' },
    last_calculation: { type: ['string', 'null'], format: 'date-time' },
    last_error_message: { type: ['string', 'null'] },
    count: { type: ['integer', 'null'] },
    version: { type: 'integer' },
    created_by: { ...userSummarySchema, type: ['object', 'null'] },
    created_at: { type: 'string', format: 'date-time' },
  },
  required: ['id', 'name', 'description', 'filters', 'is_static', 'deleted', 'count', 'created_by', 'created_at'],
}

export const cohortPageSchema: JsonSchema = paginated(cohortSchema)

const nullable = (type: string): JsonSchema => ({ type: [type, 'null'] })

/** One count of a dynamic cohort, as PostHog's CohortCalculationHistorySerializer. */
export const cohortCalculationSchema: JsonSchema = {
  type: 'object',
  properties: {
    id: { type: 'string', format: 'uuid' },
    filters: freeFormObject,
    count: nullable('integer'),
    started_at: { type: 'string', format: 'date-time' },
    finished_at: { ...nullable('string'), format: 'date-time' },
    queries: { type: ['array', 'null'], items: { type: 'object', properties: { query_ms: { type: 'integer' } } } },
    error: nullable('string'),
    duration_seconds: nullable('number'),
    is_completed: { type: 'boolean' },
    is_successful: { type: 'boolean' },
    total_query_ms: nullable('integer'),
    total_memory_mb: nullable('integer'),
    total_read_rows: nullable('integer'),
    total_written_rows: nullable('integer'),
    main_query: nullable('string'),
    main_query_id: nullable('string'),
  },
  required: ['id', 'filters', 'count', 'started_at', 'finished_at', 'queries', 'error', 'duration_seconds', 'is_completed', 'is_successful'],
}

/** `GET …/calculation_history/`: PostHog's page, whose links are the query alone (`?limit=…&offset=…`). */
export const cohortCalculationPageSchema: JsonSchema = {
  type: 'object',
  properties: {
    results: { type: 'array', items: cohortCalculationSchema },
    count: { type: 'integer' },
    next: nullable('string'),
    previous: nullable('string'),
  },
  required: ['results', 'count', 'next', 'previous'],
}
