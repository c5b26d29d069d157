/**
 * Pieces several wire shapes share: the user summary, the pagination envelope, the error envelope and
 * free-form JSON. Schemas are self-contained objects (no `$ref`) so the same object can be compiled by Ajv,
 * by fast-json-stringify and published in the OpenAPI document.
 */

export type JsonSchema = Record<string, unknown>

/** Any JSON value, serialized as it is. */
export const anyJson: JsonSchema = {}

/** An object whose keys are not fixed; kept whole by the serializer. */
export const freeFormObject: JsonSchema = { type: 'object', additionalProperties: true }

export const nullable = (schema: JsonSchema): JsonSchema => {
  const type = schema.type
  if (typeof type === 'string') return { ...schema, type: [type, 'null'] }
  if (Array.isArray(type)) return { ...schema, type: [...type, 'null'] }
  return schema
}

export const userSummarySchema: JsonSchema = {
  type: 'object',
  properties: {
    id: { type: 'integer' },
    uuid: { type: 'string', format: 'uuid' },
    distinct_id: { type: 'string' },
    first_name: { type: 'string' },
    last_name: { type: 'string' },
    email: { type: 'string', format: 'email' },
    is_email_verified: { type: 'boolean' },
    hedgehog_config: { type: ['object', 'null'], additionalProperties: true },
  },
  required: ['id', 'uuid', 'distinct_id', 'first_name', 'last_name', 'email', 'is_email_verified', 'hedgehog_config'],
}

/** `{count, next, previous, results}` around an item schema. */
export function paginated(item: JsonSchema): JsonSchema {
  return {
    type: 'object',
    properties: {
      count: { type: 'integer' },
      next: { type: ['string', 'null'], format: 'uri' },
      previous: { type: ['string', 'null'], format: 'uri' },
      results: { type: 'array', items: item },
    },
    required: ['count', 'next', 'previous', 'results'],
  }
}

export const errorEnvelopeSchema: JsonSchema = {
  type: 'object',
  properties: {
    type: { type: 'string' },
    code: { type: 'string' },
    detail: { type: 'string' },
    // Absent on the contract's 401s (invalid_api_key, invalid_personal_api_key); null or a field elsewhere.
    attr: { type: ['string', 'null'] },
  },
  required: ['type', 'code', 'detail'],
  additionalProperties: true,
}

/** A flag as other objects embed it (PostHog's MinimalFeatureFlagSerializer): experiments, early-access features. */
export const minimalFeatureFlagSchema: JsonSchema = {
  type: ['object', 'null'],
  properties: {
    id: { type: 'integer' },
    team_id: { type: 'integer' },
    name: { type: 'string' },
    key: { type: 'string' },
    filters: freeFormObject,
    deleted: { type: 'boolean' },
    active: { type: 'boolean' },
    ensure_experience_continuity: { type: 'boolean' },
    has_encrypted_payloads: { type: 'boolean' },
    version: { type: 'integer' },
    evaluation_runtime: { type: 'string' },
    evaluation_tags: { type: 'array', items: { type: 'string' } },
  },
  required: ['id', 'team_id', 'name', 'key', 'filters', 'deleted', 'active', 'ensure_experience_continuity'],
}
