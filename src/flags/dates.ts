/**
 * Date semantics of `is_date_before/after/exact` in the current PostHog flag service: instants compared to
 * the nanosecond, numbers (and numeric strings) as Unix seconds, relative dates (`-7d`, `3m`, `1y`...) and
 * naive date strings read in the project's time zone, explicit offsets honoured. `now` is always passed in.
 */
import { isKnownTimeZone, zoneOffsetMs } from '../common/time-zones.js'
import { parseLenient } from './date-lenient.js'
import { civilFromDays, daysFromCivil, lastDayOfMonth, parseRfc3339, strptime, validFields, type DateFields } from './strptime.js'
import { parseRustF64 } from './values.js'

/** A UTC instant: whole seconds since the epoch plus nanoseconds (up to 2e9 for a leap second, as chrono). */
export interface Instant {
  s: number
  ns: number
}

export function compareInstants(a: Instant, b: Instant): number {
  return a.s !== b.s ? a.s - b.s : a.ns - b.ns
}

/** A wall-clock time with no zone, as seconds since 1970-01-01T00:00 of that wall clock. */
interface Naive {
  s: number
  ns: number
}

function naiveOf(f: DateFields): Naive {
  const leap = f.second === 60 ? 1 : 0
  return { s: daysFromCivil(f.year, f.month, f.day) * 86400 + f.hour * 3600 + f.minute * 60 + f.second - leap, ns: f.nano + leap * 1e9 }
}

// ---- time zones -------------------------------------------------------------------------------------

/** True when the runtime knows the zone; unknown zones fall back to UTC at compile time. */
export const isValidTimeZone = isKnownTimeZone

/** Seconds east of UTC that `tz` uses at the instant `s` (whole seconds), or null outside JS Date's range. */
function offsetAt(tz: string, s: number): number | null {
  const ms = zoneOffsetMs(tz, s * 1000)
  return ms === null ? null : ms / 1000
}

/**
 * A wall clock in `tz` as an instant. On a fall-back overlap the earliest instant wins; a spring-forward
 * gap has no instant and gives null — as chrono-tz's `from_local_datetime` in PostHog.
 */
export function naiveToInstant(n: Naive, tz: string): Instant | null {
  if (tz === 'UTC') return { s: n.s, ns: n.ns }
  const candidates = new Set<number>()
  for (const probe of [n.s - 86400, n.s + 86400]) {
    const o = offsetAt(tz, probe)
    if (o !== null) candidates.add(o)
  }
  let best: number | null = null
  for (const o of candidates) {
    const t = n.s - o
    if (offsetAt(tz, t) === o && (best === null || t < best)) best = t
  }
  return best === null ? null : { s: best, ns: n.ns }
}

function instantToNaive(i: Instant, tz: string): Naive | null {
  if (tz === 'UTC') return { s: i.s, ns: i.ns }
  const o = offsetAt(tz, i.s)
  return o === null ? null : { s: i.s + o, ns: i.ns }
}

export function instantOfMillis(ms: number): Instant {
  const s = Math.floor(ms / 1000)
  return { s, ns: Math.round((ms - s * 1000) * 1e6) }
}

// ---- relative dates ---------------------------------------------------------------------------------

const RELATIVE = /^-?([0-9]+)([hdwmy])$/

/** `-7d` and `7d` both mean seven days ago; numbers of 10,000 or more are not relative dates. */
export function isRelativeDate(s: string): boolean {
  const m = RELATIVE.exec(s)
  return m !== null && Number(m[1]) < 10_000
}

/**
 * Subtracts on the wall clock, like PostHog's `parse_relative_date_naive`: hours, days and weeks as fixed
 * durations; months and years one calendar step at a time, clamping the day at each step (so 31 March minus
 * two months is 29 January, not 31 January).
 */
function subtractRelative(now: Naive, n: number, unit: string): Naive | null {
  if (unit === 'h' || unit === 'd' || unit === 'w') {
    const secs = unit === 'h' ? 3600 : unit === 'd' ? 86400 : 604800
    return { s: now.s - n * secs, ns: now.ns }
  }
  const days = Math.floor(now.s / 86400)
  const tod = now.s - days * 86400
  let { year, month, day } = civilFromDays(days)
  for (let i = 0; i < n; i++) {
    if (unit === 'm') {
      if (month === 1) {
        year--
        month = 12
      } else month--
      day = Math.min(day, lastDayOfMonth(year, month))
    } else {
      year--
      if (month === 2) day = Math.min(day, lastDayOfMonth(year, month))
    }
  }
  if (year < -262143) return null
  return { s: daysFromCivil(year, month, day) * 86400 + tod, ns: now.ns }
}

/** A relative date anchored to `now` on the wall clock of `tz`, as an instant; null when not relative. */
export function relativeDate(s: string, nowMs: number, tz: string): Instant | null {
  const m = RELATIVE.exec(s)
  if (m === null) return null
  const n = Number(m[1])
  if (n >= 10_000) return null
  const local = instantToNaive(instantOfMillis(nowMs), tz)
  if (local === null) return null
  const shifted = subtractRelative(local, n, m[2])
  return shifted === null ? null : naiveToInstant(shifted, tz)
}

// ---- absolute dates ---------------------------------------------------------------------------------

const NAIVE_FORMATS = ['%Y-%m-%d %H:%M:%S%.f', '%Y-%m-%dT%H:%M:%S%.f', '%Y-%m-%d %H:%M', '%Y-%m-%dT%H:%M']

function fieldsToInstant(f: DateFields, tz: string): Instant | null {
  if (!validFields(f)) return null
  const n = naiveOf(f)
  if (f.offset !== undefined) return { s: n.s - f.offset, ns: n.ns }
  return naiveToInstant(n, tz)
}

/** The result of reading a date string, and whether it depended on `now` (so it cannot be cached). */
export interface ParsedDate {
  instant: Instant | null
  usesNow: boolean
}

/**
 * PostHog's `parse_date_string_in_tz`: relative date → RFC 3339 (offset honoured) → bare `%Y-%m-%d` and the
 * naive date-time formats (all in the project zone) → the lenient `dateparser` fallback (naive = UTC).
 */
export function parseDateString(s: string, tz: string, nowMs: number): ParsedDate {
  if (RELATIVE.test(s)) return { instant: relativeDate(s, nowMs, tz), usesNow: true }
  const rfc = parseRfc3339(s)
  if (rfc !== null) return { instant: fieldsToInstant(rfc, tz), usesNow: false }
  const bare = strptime(s, '%Y-%m-%d')
  if (bare !== null && validFields(bare)) return { instant: fieldsToInstant(bare, tz), usesNow: false }
  for (const fmt of NAIVE_FORMATS) {
    const f = strptime(s, fmt)
    if (f !== null && validFields(f)) return { instant: fieldsToInstant(f, tz), usesNow: false }
  }
  const lenient = parseLenient(s)
  if (lenient === null) return { instant: null, usesNow: false }
  if (lenient.timeFromNow || lenient.dateFromNow) {
    const now = instantOfMillis(nowMs)
    const days = Math.floor(now.s / 86400)
    const today = civilFromDays(days)
    const tod = now.s - days * 86400
    const f: DateFields = lenient.dateFromNow
      ? { ...lenient, ...today }
      : { ...lenient, hour: Math.floor(tod / 3600), minute: Math.floor((tod % 3600) / 60), second: tod % 60, nano: now.ns }
    return { instant: fieldsToInstant(f, 'UTC'), usesNow: true }
  }
  return { instant: fieldsToInstant(lenient, 'UTC'), usesNow: false }
}

/**
 * Rust's `parse_float_timestamp`: whole seconds by floor (saturating), nanoseconds from the fractional part
 * rounded and clamped at zero — so negative fractional timestamps lose their fraction, as in PostHog.
 */
export function floatTimestamp(v: number): Instant | null {
  if (!Number.isFinite(v)) return Number.isNaN(v) ? { s: 0, ns: 0 } : null
  const s = Math.floor(v)
  const ns = Math.max(0, Math.round((v % 1) * 1e9))
  if (Math.abs(s) > 8.2e12) return null
  return ns >= 2e9 ? null : { s, ns }
}

const absolute = new Map<string, Instant | null>()

/** The person-side value of a date filter: numbers and numeric strings are Unix seconds. */
export function propertyDate(v: unknown, tz: string, nowMs: number): Instant | null {
  if (typeof v === 'number') return floatTimestamp(v)
  if (typeof v !== 'string') return null
  const n = parseRustF64(v)
  if (n !== null) return floatTimestamp(n)
  // absolute dates do not depend on `now`, and the same values come back request after request
  const key = tz + '\u0000' + v
  const known = absolute.get(key)
  if (known !== undefined) return known
  const parsed = parseDateString(v, tz, nowMs)
  if (!parsed.usesNow) {
    if (absolute.size >= 10_000) absolute.clear()
    absolute.set(key, parsed.instant)
  }
  return parsed.instant
}
