/**
 * The logs API's input and output as PostHog's LogsViewSet reads and writes them (products/logs/backend/api.py):
 * `query` with its dateRange, severityLevels, serviceNames, searchTerm, filterGroup, orderBy, limit (1,000 by
 * default, at most 2,000) and `after` (a base64 cursor of the last row's timestamp and uuid); rows with
 * PostHog's columns. Wrong input is a 400 naming the field; a filter skylark does not evaluate is `unsupported`.
 */
import { ValidationError } from '../common/errors.js'
import { isPlainObject } from '../common/json.js'
import { parseRelativeDate } from '../common/relative-dates.js'
import { isoformat } from '../common/time-zones.js'
import { logColumn } from './columns.js'
import type { LogFilter, LogRow, LogsQuery, SparklineBucket } from './types.js'

const DEFAULT_FROM = '-7d'
const MAX_LIMIT = 2000

/** Microseconds of a dateRange bound: an ISO 8601 time or one of PostHog's relative dates; null: absent. */
function dateBound(value: unknown, attr: string, now: number): number | null {
  if (value === undefined || value === null || value === '') return null
  if (typeof value !== 'string') throw new ValidationError('invalid_input', 'A date must be a string.', attr)
  if (value === 'all') return 0
  const relative = parseRelativeDate(value, now)
  const ms = relative ?? Date.parse(/[zZ]|[+-]\d\d:?\d\d$/.test(value) || !/T/.test(value) ? value : value + 'Z')
  if (!Number.isFinite(ms)) throw new ValidationError('invalid_input', `Unknown date: ${value}.`, attr)
  // An ISO time's microseconds, which Date.parse drops.
  const micros = relative === null ? Number((/\.\d{3}(\d{1,3})/.exec(value)?.[1] ?? '').padEnd(3, '0')) : 0
  return ms * 1000 + micros
}

export function dateRange(value: unknown, now: number, attr = 'dateRange'): { from: number; to: number } {
  const r = value === undefined || value === null ? {} : value
  if (!isPlainObject(r)) throw new ValidationError('invalid_input', 'dateRange must be an object.', attr)
  const from = dateBound(r.date_from, `${attr}.date_from`, now) ?? dateBound(DEFAULT_FROM, attr, now)!
  const to = dateBound(r.date_to, `${attr}.date_to`, now) ?? now * 1000
  return { from, to }
}

export function textList(value: unknown, attr: string): string[] {
  if (value === undefined || value === null) return []
  if (!Array.isArray(value) || value.some((v) => typeof v !== 'string')) throw new ValidationError('invalid_input', `${attr} must be a list of strings.`, attr)
  return value as string[]
}

const OPERATORS = new Set<LogFilter['operator']>(['exact', 'is_not', 'icontains', 'not_icontains', 'regex', 'not_regex', 'is_set', 'is_not_set'])
const ON: Record<string, LogFilter['on']> = { log_attribute: 'attribute', log_resource_attribute: 'resource', log: 'column' }

function filter(value: unknown, attr: string): LogFilter {
  if (!isPlainObject(value)) throw new ValidationError('invalid_input', 'A filter must be an object.', attr)
  const f = value
  const on = ON[String(f.type)]
  if (!on) throw new ValidationError('unsupported', `Filters of type ${JSON.stringify(f.type)} are not supported on logs (log_attribute, log_resource_attribute and log are).`, `${attr}.type`)
  if (typeof f.key !== 'string' || f.key === '') throw new ValidationError('required', 'A filter needs a key.', `${attr}.key`)
  const operator = (f.operator ?? 'exact') as LogFilter['operator']
  if (!OPERATORS.has(operator)) throw new ValidationError('unsupported', `The operator ${JSON.stringify(f.operator)} is not supported on logs.`, `${attr}.operator`)
  if (on === 'column' && logColumn(f.key) === null) throw new ValidationError('unsupported', `Logs have no column ${JSON.stringify(f.key)}.`, `${attr}.key`)
  const raw = f.value === undefined || f.value === null ? [] : Array.isArray(f.value) ? f.value : [f.value]
  if (raw.some((v) => typeof v === 'object' && v !== null)) throw new ValidationError('invalid_input', 'A filter value must be a string, a number or a list of them.', `${attr}.value`)
  if (operator === 'is_set' || operator === 'is_not_set') return { on, key: f.key, operator, values: [] }
  const texts = on === 'column' && (f.key === 'trace_id' || f.key === 'span_id') ? raw.map((v) => storedId(String(v))) : raw.map(String)
  if (texts.length === 0) throw new ValidationError('required', 'This operator needs a value.', `${attr}.value`)
  // The contains and regex operators compare with one value (the first of a list).
  return { on, key: f.key, operator, values: operator === 'exact' || operator === 'is_not' ? texts : texts.slice(0, 1) }
}

/** A trace or span id as stored (upper-case hex): PostHog's filters take hex or the base64 of the bytes. */
function storedId(value: string): string {
  if (/^(?:[0-9a-fA-F]{2})+$/.test(value)) return value.toUpperCase()
  const bytes = Buffer.from(value, 'base64')
  return bytes.length > 0 ? bytes.toString('hex').toUpperCase() : value
}

/** Every filter of a filterGroup (`{type, values: [{type, values: [filter…]}]}`), all of them to hold. */
export function filterGroup(value: unknown, attr = 'filterGroup'): LogFilter[] {
  if (value === undefined || value === null) return []
  if (!isPlainObject(value)) throw new ValidationError('invalid_input', 'filterGroup must be an object.', attr)
  const groups = value.values ?? []
  if (!Array.isArray(groups)) throw new ValidationError('invalid_input', 'filterGroup.values must be a list.', `${attr}.values`)
  return groups.flatMap((group, i) => {
    const inner = (group as { values?: unknown } | null)?.values ?? []
    if (!Array.isArray(inner)) throw new ValidationError('invalid_input', 'A filter group must hold a list of filters.', `${attr}.values.${i}`)
    return inner.map((f, j) => filter(f, `${attr}.values.${i}.values.${j}`))
  })
}

interface Cursor {
  timestamp: number
  uuid: string
}

/** A time as DRF's JSON encoder writes it: milliseconds when there is a fraction, `Z`. */
export function apiTime(micros: number): string {
  const base = new Date(Math.floor(micros / 1000)).toISOString()
  return micros % 1_000_000 === 0 ? base.slice(0, 19) + 'Z' : base
}

export function encodeCursor(row: Pick<LogRow, 'timestamp' | 'uuid'>): string {
  return Buffer.from(JSON.stringify({ timestamp: isoformat(row.timestamp, 'UTC'), uuid: row.uuid })).toString('base64')
}

function decodeCursor(value: unknown, now: number): Cursor {
  try {
    const c = JSON.parse(Buffer.from(String(value), 'base64').toString('utf8')) as { timestamp?: unknown; uuid?: unknown }
    const timestamp = dateBound(c.timestamp, 'after', now)
    if (timestamp === null || typeof c.uuid !== 'string') throw new Error('incomplete')
    return { timestamp, uuid: c.uuid }
  } catch {
    throw new ValidationError('invalid_input', 'Invalid cursor format.', 'after')
  }
}

/** `liveLogsCheckpoint`: an ISO 8601 time as Python's fromisoformat reads it (no offset: UTC), in microseconds. */
function checkpointTime(value: unknown): number {
  const iso = typeof value === 'string' ? /^(\d{4}-\d\d-\d\d)[T ](\d\d:\d\d(?::\d\d)?)(?:\.(\d{1,6}))?(Z|[+-]\d\d:?\d\d)?$/.exec(value) : null
  const ms = iso ? Date.parse(`${iso[1]}T${iso[2]}${iso[4] === undefined ? 'Z' : iso[4]}`) : NaN
  if (!iso || !Number.isFinite(ms)) throw new ValidationError('invalid_input', `Invalid liveLogsCheckpoint format: ${JSON.stringify(value)}.`, 'liveLogsCheckpoint')
  return ms * 1000 + Number((iso[3] ?? '').padEnd(6, '0'))
}

export interface ParsedLogsQuery {
  query: LogsQuery
  /** The page size asked for (the store is asked one more). */
  requested: number
}

/** The `query` of POST logs/query for a project. */
export function parseLogsQuery(value: unknown, teamId: number, now: number): ParsedLogsQuery {
  if (value === undefined || value === null) throw new ValidationError('required', 'No query provided', 'query')
  if (!isPlainObject(value)) throw new ValidationError('invalid_input', 'query must be an object.', 'query')
  const q = value
  const { from, to } = dateRange(q.dateRange, now)
  const limitRaw = q.limit ?? 1000
  if (typeof limitRaw !== 'number' || !Number.isInteger(limitRaw) || limitRaw < 1) throw new ValidationError('invalid_input', 'limit must be a positive integer.', 'limit')
  const requested = Math.min(limitRaw, MAX_LIMIT)
  const order = q.orderBy === 'earliest' ? 'earliest' : 'latest'
  if (q.orderBy !== undefined && q.orderBy !== null && q.orderBy !== 'earliest' && q.orderBy !== 'latest') {
    throw new ValidationError('invalid_choice', 'orderBy is `latest` or `earliest`.', 'orderBy')
  }
  if (q.searchTerm !== undefined && q.searchTerm !== null && typeof q.searchTerm !== 'string') throw new ValidationError('invalid_input', 'searchTerm must be a string.', 'searchTerm')
  return {
    requested,
    query: {
      teamId,
      from,
      to,
      severityLevels: textList(q.severityLevels, 'severityLevels'),
      serviceNames: textList(q.serviceNames, 'serviceNames'),
      searchTerm: (q.searchTerm as string | null | undefined) || null,
      filters: filterGroup(q.filterGroup),
      order,
      limit: requested + 1,
      after: q.after ? decodeCursor(q.after, now) : null,
      receivedFrom: q.liveLogsCheckpoint ? checkpointTime(q.liveLogsCheckpoint) : null,
    },
  }
}

/**
 * A row as PostHog's logs query answers it; `checkpoint` is when the newest log was received, which the live
 * tail asks from next (PostHog's is its ingestion watermark).
 */
export function logJson(row: LogRow, checkpoint: number | null): Record<string, unknown> {
  return {
    uuid: row.uuid,
    trace_id: row.trace_id,
    span_id: row.span_id,
    body: row.body,
    attributes: row.attributes,
    timestamp: apiTime(row.timestamp),
    observed_timestamp: apiTime(row.observed_timestamp),
    severity_text: row.severity_text,
    severity_number: row.severity_number,
    level: row.severity_text,
    resource_attributes: row.resource_attributes,
    resource_fingerprint: row.resource_fingerprint,
    instrumentation_scope: row.instrumentation_scope,
    event_name: row.event_name,
    live_logs_checkpoint: checkpoint === null ? null : apiTime(checkpoint),
  }
}

/** Sparkline bucket widths PostHog picks from, seconds: the one nearest a fiftieth of the range. */
const BUCKETS = [1, 5, 10, 60, 120, 300, 600, 900, 1800, 3600, 7200, 14400, 21600, 43200, 86400]

export function sparklineInterval(from: number, to: number): number {
  const step = (to - from) / 50 / 1_000_000
  let best = BUCKETS[0]!
  for (const b of BUCKETS) if (Math.abs(b - step) < Math.abs(best - step)) best = b
  return best * 1_000_000
}

/**
 * The sparkline's answer: every bucket of the range, an empty one as PostHog's outer join leaves it (no level, 0),
 * by time and level, the first 1,000 (PostHog's LIMIT); so a range of years makes no more empty buckets than that.
 */
export function sparklineJson(buckets: readonly SparklineBucket[], from: number, to: number, interval: number): Array<{ time: string; level: string; count: number }> {
  const seen = new Set(buckets.map((b) => b.time))
  const out = [...buckets]
  const start = Math.floor(from / interval) * interval
  const last = Math.min(to, start + 999 * interval)
  for (let t = start; t <= last; t += interval) if (!seen.has(t)) out.push({ time: t, level: '', count: 0 })
  out.sort((a, b) => a.time - b.time || (a.level < b.level ? -1 : a.level > b.level ? 1 : 0))
  return out.slice(0, 1000).map((b) => ({ time: apiTime(b.time), level: b.level, count: b.count }))
}
