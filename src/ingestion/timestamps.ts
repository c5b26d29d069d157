/**
 * Event time, as PostHog's ingestion computes it (timestamps.ts `parseEventTimestamp`, ported to Rust
 * capture with "Node.js parity tests"): clock-skew correction with `sent_at`, `offset` overriding both,
 * and a 23-hour cap on future times. Pure: `now` is an input.
 */

const FUTURE_CUTOFF_MS = 23 * 3600 * 1000
const MIN_MS = -62167219200000 // 0000-01-01T00:00:00Z
const MAX_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999)

export interface TimestampInput {
  timestamp?: unknown
  sentAt?: number | null
  offset?: unknown
  ignoreSentAt?: boolean
  now: number
}

export interface TimestampWarning {
  type: 'ignored_invalid_timestamp' | 'event_timestamp_in_future'
  details: Record<string, unknown>
}

export interface TimestampResult {
  ms: number
  warnings: TimestampWarning[]
}

const ISO_LIKE = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?)?\s*(Z|[+-]\d{2}(?::?\d{2})?)?$/i
const US_DATE = /^(\d{1,2})\/(\d{1,2})\/(\d{4})$/

/**
 * Parses the formats PostHog accepts: RFC 3339 with any offset, date-only, `YYYY-MM-DD HH:MM:SS`
 * (naive = UTC), `MM/DD/YYYY`, RFC 2822, and numeric strings (13+ digits = ms, else seconds).
 * Returns null when unparseable.
 */
export function parseTimestamp(value: unknown): number | null {
  if (typeof value === 'number') return Number.isFinite(value) ? value : null
  if (typeof value !== 'string') return null
  const text = value.trim()
  if (text === '') return null
  if (/^-?\d+(\.\d+)?$/.test(text)) {
    const n = Number(text)
    const digits = text.replace(/^-/, '').split('.')[0].length
    return digits > 11 ? n : n * 1000
  }
  const iso = ISO_LIKE.exec(text)
  if (iso) {
    const [, y, mo, d, h = '0', mi = '0', s = '0', frac = '', zone] = iso
    const ms = frac ? Number((frac + '000').slice(0, 3)) : 0
    let utc = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s), ms)
    if (Number(y) < 100) utc = setFullYear(utc, Number(y))
    if (!realDate(Number(y), Number(mo), Number(d)) || Number(h) > 23 || Number(mi) > 59 || Number(s) > 59) return null
    if (zone && zone.toUpperCase() !== 'Z') {
      const sign = zone[0] === '-' ? -1 : 1
      const digits = zone.slice(1).replace(':', '')
      const offsetMin = Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2, 4) || '0')
      utc -= sign * offsetMin * 60000
    }
    return Number.isFinite(utc) ? utc : null
  }
  const us = US_DATE.exec(text)
  if (us) return realDate(Number(us[3]), Number(us[1]), Number(us[2])) ? Date.UTC(Number(us[3]), Number(us[1]) - 1, Number(us[2])) : null
  // RFC 2822 and other textual forms carry their own zone; Date.parse handles them.
  if (/[a-z]{3}/i.test(text) && /(GMT|UTC|[+-]\d{4}|\b[A-Z]{2,4}\b)/.test(text)) {
    const parsed = Date.parse(text)
    return Number.isNaN(parsed) ? null : parsed
  }
  return null
}

/** RFC 3339 as chrono's `parse_from_rfc3339` reads it: a full date and time, and a zone (`Z` or `±HH:MM`). */
const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[Zz]|[+-]\d{2}:\d{2})$/

/** An RFC 3339 time in ms, or null: capture v1 takes nothing else (no date alone, no zone left out, no epoch numbers). */
export function parseRfc3339(value: string): number | null {
  return RFC3339.test(value) ? parseTimestamp(value) : null
}

/**
 * Whether the calendar has that day. Date.UTC rolls 2023-02-30 over into March and 25:00 into the next day;
 * Rust capture's parsers refuse such times, so the event gets the time of receipt instead.
 */
function realDate(year: number, month: number, day: number): boolean {
  if (month < 1 || month > 12 || day < 1) return false
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0)
  return day <= (month === 2 ? (leap ? 29 : 28) : [4, 6, 9, 11].includes(month) ? 30 : 31)
}

function setFullYear(ms: number, year: number): number {
  const d = new Date(ms)
  d.setUTCFullYear(year)
  return d.getTime()
}

export function resolveTimestamp(input: TimestampInput): TimestampResult {
  const warnings: TimestampWarning[] = []
  const { now } = input
  let ms: number
  const offset = input.offset
  if (typeof offset === 'number' && Number.isInteger(offset)) {
    ms = now - offset
  } else {
    const sentAt = input.ignoreSentAt ? null : (input.sentAt ?? null)
    const ts = input.timestamp === undefined || input.timestamp === null ? null : parseTimestamp(input.timestamp)
    if (input.timestamp !== undefined && input.timestamp !== null && ts === null) {
      warnings.push({
        type: 'ignored_invalid_timestamp',
        details: { field: 'timestamp', value: valueText(input.timestamp).slice(0, 100), reason: 'invalid format' },
      })
    }
    if (ts !== null && sentAt !== null) ms = now + (ts - sentAt)
    else if (ts !== null) ms = ts
    else ms = now
  }
  if (ms - now > FUTURE_CUTOFF_MS) {
    warnings.push({ type: 'event_timestamp_in_future', details: { timestamp: safeIso(ms), now: safeIso(now) } })
    ms = now
  }
  if (!(ms >= MIN_MS && ms <= MAX_MS)) {
    warnings.push({ type: 'ignored_invalid_timestamp', details: { field: 'timestamp', reason: 'out of bounds' } })
    ms = 0
  }
  return { ms: Math.round(ms), warnings }
}

/** `sent_at` from the body (ISO) or the `_` query parameter (ms; ignored unless after 2020, like Rust capture). */
export function resolveSentAt(bodySentAt: unknown, queryUnderscore: string | null): number | null {
  if (typeof bodySentAt === 'string' || typeof bodySentAt === 'number') {
    const parsed = parseTimestamp(bodySentAt)
    if (parsed !== null) return parsed
  }
  if (queryUnderscore && /^\d+$/.test(queryUnderscore)) {
    const n = Number(queryUnderscore)
    const ms = queryUnderscore.length > 11 ? n : n * 1000
    if (ms > Date.UTC(2020, 11, 31)) return ms
  }
  return null
}

/** A JSON value as text. String() throws for objects such as `{"toString": 1}`; JSON text can't. */
function valueText(value: unknown): string {
  return typeof value === 'object' ? JSON.stringify(value) : String(value)
}

function safeIso(ms: number): string {
  const d = new Date(ms)
  return Number.isNaN(d.getTime()) ? String(ms) : d.toISOString()
}
