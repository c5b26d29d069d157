/** What both stores read alike: the columns a `log` filter may name, and the order of attribute keys. */
import type { LogAttributesQuery } from './types.js'

const COLUMNS: Record<string, string> = {
  message: 'body',
  body: 'body',
  severity_level: 'severity_text',
  severity_text: 'severity_text',
  level: 'severity_text',
  service_name: 'service_name',
  trace_id: 'trace_id',
  span_id: 'span_id',
  event_name: 'event_name',
  instrumentation_scope: 'instrumentation_scope',
}

/** The column a `log` filter names, or null (the route refuses it). */
export function logColumn(key: string): string | null {
  return COLUMNS[key] ?? null
}

/**
 * PostHog's order of attribute keys: the one equal to the search (case aside) first, then those with it as a
 * word, then the most used, then by name; `count` is how many keys matched.
 */
export function rankKeys(rows: Array<{ key: string; n: number }>, q: Pick<LogAttributesQuery, 'search' | 'limit' | 'offset'>): { keys: string[]; count: number } {
  const exact = q.search.toLowerCase()
  const rank = (key: string) => {
    const lower = key.toLowerCase()
    return lower === exact ? 0 : exact !== '' && lower.split(/[^a-z0-9]+/).includes(exact) ? 1 : 2
  }
  const sorted = rows
    .map((r) => ({ key: r.key, n: Number(r.n), rank: rank(r.key) }))
    .sort((a, b) => a.rank - b.rank || b.n - a.n || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
  return { keys: sorted.slice(q.offset, q.offset + q.limit).map((r) => r.key), count: sorted.length }
}
