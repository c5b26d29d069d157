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

export function parsePage(query: URLSearchParams, defaultLimit = DEFAULT_PAGE_SIZE): Page {
  const limit = parseNonNegative(query.get('limit'), 'limit')
  const offset = parseNonNegative(query.get('offset'), 'offset')
  return {
    limit: Math.min(Math.max(limit ?? defaultLimit, 1), MAX_PAGE_SIZE),
    offset: offset ?? 0,
  }
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
