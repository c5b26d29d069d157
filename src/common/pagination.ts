/**
 * Limit/offset pagination for every list endpoint: `limit` (default 100, at most 1000) and `offset`,
 * answered with `{count, next, previous, results}` where next/previous are absolute URLs or null.
 */
import { ValidationError } from './errors.js'

export const DEFAULT_PAGE_SIZE = 100
export const MAX_PAGE_SIZE = 1000

export interface Page {
  limit: number
  offset: number
}

export interface PageEnvelope<T> {
  count: number
  next: string | null
  previous: string | null
  results: T[]
}

function parseNonNegative(raw: string | null, name: string): number | null {
  if (raw === null || raw === '') return null
  if (!/^\d+$/.test(raw)) throw new ValidationError('invalid_input', `${name} must be a non-negative integer.`, name)
  return Number(raw)
}

export function parsePage(query: URLSearchParams, defaultLimit = DEFAULT_PAGE_SIZE, maxLimit = MAX_PAGE_SIZE): Page {
  const limit = parseNonNegative(query.get('limit'), 'limit')
  const offset = parseNonNegative(query.get('offset'), 'offset')
  return {
    limit: Math.min(Math.max(limit ?? defaultLimit, 1), maxLimit),
    offset: offset ?? 0,
  }
}

/** A list's sort: a column, ascending or descending. */
export interface ListOrder {
  column: string
  descending: boolean
}

/** PostHog's default order of its lists: `-created_at`. */
export const NEWEST_FIRST: ListOrder = { column: 'created_at', descending: true }

/**
 * `order` as PostHog's list endpoints read it: a field, `-` for descending; `fallback` without one. `columns`
 * maps the fields accepted to their columns, and anything else is refused. A Map, because the column goes into
 * SQL: a plain object also answers `constructor` or `toString`, and their functions' text made a 500.
 */
export function parseListOrder(raw: string | null, columns: ReadonlyMap<string, string>, fallback: ListOrder): ListOrder {
  if (!raw) return fallback
  const descending = raw.startsWith('-')
  const column = columns.get(descending ? raw.slice(1) : raw)
  if (column === undefined) throw new ValidationError('invalid_input', `Cannot order by "${raw}".`, 'order')
  return { column, descending }
}

/** `created_by_id` as the lists read it: a user id, or undefined when absent or empty. */
export function parseCreatedById(query: URLSearchParams): number | undefined {
  const raw = query.get('created_by_id')
  if (raw === null || raw === '') return undefined
  if (!/^\d+$/.test(raw)) throw new ValidationError('invalid', 'A valid integer is required.', 'created_by_id')
  return Number(raw)
}

/** Builds next/previous links from the request's own URL so every other filter is kept. */
export function pageEnvelope<T>(
  baseUrl: string,
  path: string,
  query: URLSearchParams,
  page: Page,
  count: number,
  results: T[],
): PageEnvelope<T> {
  const link = (offset: number): string => {
    const params = new URLSearchParams(query)
    params.set('limit', String(page.limit))
    if (offset > 0) params.set('offset', String(offset))
    else params.delete('offset')
    return `${baseUrl}${path}?${params.toString()}`
  }
  return {
    count,
    next: page.offset + page.limit < count ? link(page.offset + page.limit) : null,
    previous: page.offset > 0 ? link(Math.max(page.offset - page.limit, 0)) : null,
    results,
  }
}
