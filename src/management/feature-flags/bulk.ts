/**
 * The request side of PostHog's bulk flag actions (`bulk_keys`, `bulk_delete`): which ids a body names and
 * which it can't, and the shape of a bulk delete request. The deletions themselves run in service.ts.
 */
import { ValidationError } from '../../common/errors.js'
import { isPlainObject } from '../../common/json.js'
import { BULK_FILTER_KEYS } from './list-query.js'

/** PostHog's reading of a list of flag ids: integers, or strings of digits; anything else is invalid. */
export function parseFlagIds(values: readonly unknown[]): { valid: number[]; invalid: unknown[] } {
  const valid: number[] = []
  const invalid: unknown[] = []
  for (const value of values) {
    if (typeof value === 'number' && Number.isSafeInteger(value)) valid.push(value)
    else if (typeof value === 'string' && /^[0-9]+$/.test(value) && Number.isSafeInteger(Number(value))) valid.push(Number(value))
    else invalid.push(value)
  }
  return { valid, invalid }
}

/** `ids` of a body as a list (absent or null: none); a body that is not an object names nothing. */
export function bodyIds(body: unknown): unknown[] {
  const ids = isPlainObject(body) ? body.ids : undefined
  if (ids === undefined || ids === null) return []
  if (!Array.isArray(ids)) throw new ValidationError('invalid_input', 'ids must be a list of flag IDs.', 'ids')
  return ids
}

export type BulkDeleteRequest = { filters: Record<string, unknown> } | { ids: unknown[] }

/** Either list filters (PostHog's allow-list of keys) or explicit ids, never both, never neither. */
export function bulkDeleteRequest(body: unknown): BulkDeleteRequest {
  const raw = isPlainObject(body) ? body.filters : undefined
  if (raw !== undefined && raw !== null && !isPlainObject(raw)) throw new ValidationError('invalid_input', 'filters must be an object.', 'filters')
  const filters = raw ?? {}
  const ids = bodyIds(body)
  const hasFilters = Object.keys(filters).length > 0
  if (hasFilters && ids.length > 0) throw new ValidationError('invalid_input', 'Provide either filters or ids, not both')
  if (!hasFilters && ids.length === 0) throw new ValidationError('invalid_input', 'Must provide either filters or ids')
  if (!hasFilters) return { ids }
  const unknown = Object.keys(filters).filter((k) => !BULK_FILTER_KEYS.has(k)).sort()
  if (unknown.length > 0) throw new ValidationError('invalid_input', `Unknown filter keys: ${unknown.join(', ')}`)
  return { filters }
}
