/** The activity page PostHog answers on `…/activity/` endpoints. */
import type { QueryParamDoc } from './openapi.js'
import { anyJson, type JsonSchema } from './shared.js'

/** The query of every `…/activity/` endpoint. */
export const ACTIVITY_QUERY: readonly QueryParamDoc[] = [
  { name: 'limit', description: 'Entries per page (default 10).', schema: { type: 'integer', minimum: 1 } },
  { name: 'page', description: 'Page number, from 1.', schema: { type: 'integer', minimum: 1 } },
]

const changeSchema: JsonSchema = {
  type: 'object',
  properties: {
    type: { type: 'string' },
    action: { type: 'string', enum: ['created', 'changed', 'deleted'] },
    field: { type: ['string', 'null'] },
    before: anyJson,
    after: anyJson,
  },
  required: ['type', 'action', 'field', 'before', 'after'],
}

export const activityEntrySchema: JsonSchema = {
  type: 'object',
  properties: {
    id: { type: 'integer' },
    user: {
      type: ['object', 'null'],
      properties: {
        first_name: { type: 'string' },
        email: { type: ['string', 'null'] },
        is_system: { type: 'boolean' },
      },
    },
    activity: { type: 'string' },
    scope: { type: 'string' },
    item_id: { type: 'string' },
    detail: {
      type: 'object',
      properties: {
        changes: { type: ['array', 'null'], items: changeSchema },
        trigger: { type: ['object', 'null'], additionalProperties: true },
        name: { type: ['string', 'null'] },
        short_id: { type: ['string', 'null'] },
        type: { type: ['string', 'null'] },
      },
      required: ['changes', 'trigger', 'name', 'short_id', 'type'],
    },
    created_at: { type: 'string', format: 'date-time' },
  },
  required: ['id', 'user', 'activity', 'scope', 'item_id', 'detail', 'created_at'],
}

export const activityPageSchema: JsonSchema = {
  type: 'object',
  properties: {
    results: { type: 'array', items: activityEntrySchema },
    next: { type: ['string', 'null'], format: 'uri' },
    previous: { type: ['string', 'null'], format: 'uri' },
    total_count: { type: 'integer' },
  },
  required: ['results', 'next', 'previous', 'total_count'],
}
