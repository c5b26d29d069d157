/**
 * The metrics API's pickers, pure (the route reads the store). The name picker (`values/`) as PostHog's
 * MetricNamesQueryRunner answers it: the names reported in the last 24 hours (from the hour), those reported by the
 * most services first (with a search: the name equal to it, then those starting, then ending with it, first), each
 * with a type, unit, newest point and a sparkline of its mean reading in the last six hours' 24 buckets (the
 * buckets with none left out). The attribute-key picker (`attributes/`) as its MetricAttributeKeysQueryRunner:
 * `service_name` first when the search fits it, counting the `service.name` rows, then the keys carried by the
 * most data points.
 */
import { ValidationError } from '../common/errors.js'
import { isoformat } from '../common/time-zones.js'
import { compareText } from '../storage/events/index.js'
import { SERVICE_KEYS } from './query.js'
import type { MetricName } from './types.js'

const HOUR_MS = 3_600_000
export const NAMES_LOOKBACK_MS = 24 * HOUR_MS
export const SPARKLINE_WINDOW_MS = 6 * HOUR_MS
export const SPARKLINE_POINTS = 24
const MAX_SERVICES = 50

/** Where the names' window starts (ms): a day back, from the start of that hour. */
export function namesFrom(nowMs: number): number {
  return Math.floor((nowMs - NAMES_LOOKBACK_MS) / HOUR_MS) * HOUR_MS
}

export function checkServices(services: string[]): string[] {
  if (new Set(services).size > MAX_SERVICES) throw new ValidationError('parse_error', `at most ${MAX_SERVICES} services may be selected`)
  return services
}

/** The first `limit` names in the picker's order. */
export function rankNames(rows: MetricName[], search: string, limit: number): MetricName[] {
  const s = search.toLowerCase()
  const flags = (name: string) => {
    const lower = name.toLowerCase()
    return s === '' ? [0, 0, 0] : [lower === s ? 1 : 0, lower.startsWith(s) ? 1 : 0, lower.endsWith(s) ? 1 : 0]
  }
  const keyed = rows.map((row) => ({ row, flags: flags(row.name) }))
  keyed.sort((a, b) => b.flags[0]! - a.flags[0]! || b.flags[1]! - a.flags[1]! || b.flags[2]! - a.flags[2]! || b.row.services - a.row.services || compareText(a.row.name, b.row.name))
  return keyed.slice(0, limit).map((k) => k.row)
}

/** The answer's rows: each name with its sparkline's finite means in time order. */
export function namesJson(rows: MetricName[], sparklines: Array<{ name: string; value: number | null }>, zone: string): Array<Record<string, unknown>> {
  const lines = new Map<string, number[]>()
  for (const point of sparklines) {
    if (point.value === null || !Number.isFinite(point.value)) continue
    let line = lines.get(point.name)
    if (!line) lines.set(point.name, (line = []))
    line.push(point.value)
  }
  return rows.map((r) => ({ name: r.name, metric_type: r.metric_type, unit: r.unit, last_seen: isoformat(r.last_seen, zone), sparkline: lines.get(r.name) ?? [] }))
}

/** The attribute keys' answer: `attribute_count` is how many data points carry the key (null: unknown). */
export function attributeKeysJson(rows: Array<{ name: string; occurrences: number }>, search: string, limit: number): Array<{ name: string; attribute_count: number | null }> {
  const s = search.toLowerCase()
  let services = 0
  const keys: Array<{ name: string; attribute_count: number | null }> = []
  for (const row of rows) {
    if (SERVICE_KEYS.has(row.name)) services += row.occurrences
    else keys.push({ name: row.name, attribute_count: row.occurrences })
  }
  keys.sort((a, b) => b.attribute_count! - a.attribute_count! || compareText(a.name, b.name))
  // The column holds services even without the attribute rows: then the count is not known rather than 0.
  if ('service_name'.includes(s) || 'service.name'.includes(s)) keys.unshift({ name: 'service_name', attribute_count: services || null })
  return keys.slice(0, limit)
}
