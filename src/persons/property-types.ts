/**
 * A property's type as PostHog infers it from the first value it sees (rust/property-defs-rs, types.rs
 * `detect_property_type`): `String`, `Numeric`, `Boolean` or `DateTime`, or null for a value that tells
 * nothing (null, an object, an array). The type is kept once known, so a wrong first guess sticks: hence the
 * keys that are always strings whatever their first value looks like.
 */

export type PropertyType = 'String' | 'Numeric' | 'Boolean' | 'DateTime'

/** A key containing one of these (lowercased) may hold a timestamp. */
const DATETIME_KEY_WORDS = ['time', 'date', '_at', '-at', 'createdat', 'updatedat']

/** Unix seconds from at most this long ago (about six months) count as timestamps under a time-like key. */
const SIX_MONTHS_S = 15_768_000

/**
 * PostHog's best-effort prefix: `2024-05-01`, `2024/05/01`, `01-05-2024` or `01/05/2024`, alone or followed
 * by ` ` or `T` and `hh:mm:ss` and anything. The ranges are loose on purpose (`[0-2][0-9]` for a month).
 */
const DATETIME_PREFIX = /^(([0-9]{4}[/-][0-2][0-9][/-][0-3][0-9])|([0-2][0-9][/-][0-3][0-9][/-][0-9]{4}))([ T][0-2][0-9]:[0-6][0-9]:[0-6][0-9].*)?$/

/** RFC 3339 as chrono reads it: what the prefix above misses is a lowercase `t`. */
const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/

/** RFC 2822 (`Tue, 1 Jul 2003 10:52:37 +0200`), with the obsolete zone names chrono also takes. */
const RFC2822 =
  /^\s*((Mon|Tue|Wed|Thu|Fri|Sat|Sun),\s*)?\d{1,2}\s+(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)\s+\d{2,4}\s+\d{2}:\d{2}(:\d{2})?\s+([+-]\d{4}|UT|GMT|[ECMP][SD]T|[A-IK-Za-ik-z])\s*$/i

function isLikelyDate(s: string): boolean {
  return DATETIME_PREFIX.test(s) || RFC3339.test(s) || RFC2822.test(s)
}

function hasDateWord(key: string): boolean {
  for (const word of DATETIME_KEY_WORDS) if (key.includes(word)) return true
  return false
}

/** `nowMs` decides which numbers are recent enough to be timestamps. */
export function detectPropertyType(key: string, value: unknown, nowMs: number): PropertyType | null {
  const lower = key.toLowerCase()
  // Values that may look like numbers or booleans at first and text later (PostHog's issue 12529 for
  // utm_*; a flag's first value is often `false`; survey responses).
  if (lower.startsWith('utm_') || lower.startsWith('$initial_utm_') || lower.startsWith('$feature/')) return 'String'
  if (lower === '$feature_flag_response' || lower.startsWith('$survey_response')) return 'String'

  if (typeof value === 'string') {
    if (hasDateWord(lower) && isLikelyDate(value)) return 'DateTime'
    const s = value.trim()
    if (s === 'true' || s === 'false' || s === 'TRUE' || s === 'FALSE') return 'Boolean'
    return isLikelyDate(s) ? 'DateTime' : 'String'
  }
  if (typeof value === 'number') {
    // Rust reads the number as an unsigned integer: a fraction or a negative number is no timestamp.
    if (Number.isInteger(value) && value >= nowMs / 1000 - SIX_MONTHS_S && hasDateWord(lower)) return 'DateTime'
    return 'Numeric'
  }
  if (typeof value === 'boolean') return 'Boolean'
  return null
}
