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

export const cohortCreateSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: writableCohortProperties,
}

export const cohortUpdateSchema: JsonSchema = cohortCreateSchema

export interface CohortWrite {
  name?: string | null
  description?: string
  filters?: Record<string, unknown>
  is_static?: boolean
  deleted?: boolean
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
    count: { type: ['integer', 'null'] },
    version: { type: 'integer' },
    created_by: { ...userSummarySchema, type: ['object', 'null'] },
    created_at: { type: 'string', format: 'date-time' },
  },
  required: ['id', 'name', 'description', 'filters', 'is_static', 'deleted', 'count', 'created_by', 'created_at'],
}

export const cohortPageSchema: JsonSchema = paginated(cohortSchema)
