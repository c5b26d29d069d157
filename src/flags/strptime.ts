/**
 * Date text to calendar fields the way chrono reads it in PostHog's Rust service: `parse_from_rfc3339` and
 * `parse_from_str` with fixed formats. `date-lenient.ts` adds the `dateparser` fallback; `dates.ts` decides
 * which zone naive fields are in.
 */

/** Calendar fields of a parsed date-time; `offset` (seconds east of UTC) is set when the text carried one. */
export interface DateFields {
  year: number
  month: number
  day: number
  hour: number
  minute: number
  second: number
  nano: number
  offset?: number
  /** Date-only forms of `dateparser` take the current time of day, so they depend on `now`. */
  timeFromNow?: boolean
  /** Time-only forms take today's date. */
  dateFromNow?: boolean
}

export const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec']
const MONTHS_LONG = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december']
const WEEKDAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun']

interface Cursor {
  s: string
  i: number
}

function skipSpace(c: Cursor): void {
  while (c.i < c.s.length && /\s/.test(c.s[c.i])) c.i++
}

function digits(c: Cursor, min: number, max: number): number | null {
  const start = c.i
  while (c.i < c.s.length && c.i - start < max && c.s.charCodeAt(c.i) >= 48 && c.s.charCodeAt(c.i) <= 57) c.i++
  if (c.i - start < min) return null
  return Number(c.s.slice(start, c.i))
}

/** `[+-]HH[:MM]` (permissive: colon or space optional, minutes optional, `Z` allowed), as chrono's `%#z`. */
function offsetPermissive(c: Cursor): number | null {
  skipSpace(c)
  const ch = c.s[c.i]
  if (ch === 'Z' || ch === 'z') {
    c.i++
    return 0
  }
  if (ch !== '+' && ch !== '-') return null
  c.i++
  const hh = digits(c, 2, 2)
  if (hh === null) return null
  while (c.s[c.i] === ':' || c.s[c.i] === ' ') c.i++
  const save = c.i
  let mm = digits(c, 2, 2)
  if (mm === null) {
    c.i = save
    mm = 0
  } else if (mm > 59) return null
  const total = hh * 3600 + mm * 60
  return ch === '-' ? -total : total
}

function monthName(c: Cursor): number | null {
  const rest = c.s.slice(c.i).toLowerCase()
  for (let m = 0; m < 12; m++) {
    if (rest.startsWith(MONTHS_LONG[m])) {
      c.i += MONTHS_LONG[m].length
      return m + 1
    }
  }
  for (let m = 0; m < 12; m++) {
    if (rest.startsWith(MONTHS[m])) {
      c.i += 3
      return m + 1
    }
  }
  return null
}

/**
 * A subset of chrono's `parse_from_str`: `%Y %y %m %d %H %I %M %S %.f %P %b %B %a %Z %#z`, literals, and
 * spaces (which match any run of whitespace, possibly empty). Numbers take 1..width digits and skip leading
 * whitespace. The whole input must be consumed.
 */
export function strptime(input: string, format: string): DateFields | null {
  const c: Cursor = { s: input, i: 0 }
  const f: DateFields = { year: NaN, month: NaN, day: NaN, hour: 0, minute: 0, second: 0, nano: 0 }
  let hour12: number | null = null
  let pm: boolean | null = null
  for (let k = 0; k < format.length; k++) {
    const ch = format[k]
    if (ch === ' ') {
      skipSpace(c)
      continue
    }
    if (ch !== '%') {
      if (c.s[c.i] !== ch) return null
      c.i++
      continue
    }
    let spec = format[++k]
    if (spec === '.' || spec === '#') spec += format[++k]
    if (spec !== '.f' && spec !== 'Z' && spec !== '#z' && spec !== 'P') skipSpace(c)
    let v: number | null
    switch (spec) {
      case 'Y':
        if (c.s[c.i] === '+' || c.s[c.i] === '-') {
          const neg = c.s[c.i++] === '-'
          v = digits(c, 1, 12)
          if (v !== null && neg) v = -v
        } else v = digits(c, 1, 4)
        if (v === null) return null
        f.year = v
        break
      case 'y':
        if ((v = digits(c, 1, 2)) === null) return null
        f.year = v < 70 ? 2000 + v : 1900 + v
        break
      case 'm':
        if ((v = digits(c, 1, 2)) === null) return null
        f.month = v
        break
      case 'd':
        if ((v = digits(c, 1, 2)) === null) return null
        f.day = v
        break
      case 'H':
        if ((v = digits(c, 1, 2)) === null) return null
        f.hour = v
        break
      case 'I':
        if ((v = digits(c, 1, 2)) === null || v < 1 || v > 12) return null
        hour12 = v
        break
      case 'M':
        if ((v = digits(c, 1, 2)) === null) return null
        f.minute = v
        break
      case 'S':
        if ((v = digits(c, 1, 2)) === null) return null
        f.second = v
        break
      case '.f':
        if (c.s[c.i] === '.') {
          c.i++
          const start = c.i
          if (digits(c, 1, 9) === null) return null
          f.nano = Number((c.s.slice(start, c.i) + '00000000').slice(0, 9))
          while (/[0-9]/.test(c.s[c.i] ?? '')) c.i++
        }
        break
      case 'P': {
        const ap = c.s.slice(c.i, c.i + 2).toLowerCase()
        if (ap !== 'am' && ap !== 'pm') return null
        pm = ap === 'pm'
        c.i += 2
        break
      }
      case 'b':
      case 'B':
        if ((v = monthName(c)) === null) return null
        f.month = v
        break
      case 'a': {
        const wd = c.s.slice(c.i, c.i + 3).toLowerCase()
        if (!WEEKDAYS.includes(wd)) return null
        c.i += 3
        break
      }
      case 'Z':
        while (c.i < c.s.length && !/\s/.test(c.s[c.i])) c.i++
        break
      case '#z':
        if ((v = offsetPermissive(c)) === null) return null
        f.offset = v
        break
      default:
        return null
    }
  }
  if (c.i !== c.s.length) return null
  if (hour12 !== null) {
    if (pm === null) return null
    f.hour = (hour12 % 12) + (pm ? 12 : 0)
  }
  return f
}

/** chrono's `DateTime::parse_from_rfc3339`: exact widths, `T`/`t`/space separator, `Z` or `±HH:MM`. */
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:([Zz])|([+\-\u2212])(\d{2}):(\d{2}))$/

export function parseRfc3339(s: string): DateFields | null {
  const m = RFC3339.exec(s)
  if (m === null) return null
  let offset = 0
  if (m[9] !== undefined) {
    const hh = Number(m[10])
    const mm = Number(m[11])
    if (hh > 23 || mm > 59) return null
    offset = (hh * 3600 + mm * 60) * (m[9] === '+' ? 1 : -1)
  }
  return {
    year: Number(m[1]),
    month: Number(m[2]),
    day: Number(m[3]),
    hour: Number(m[4]),
    minute: Number(m[5]),
    second: Number(m[6]),
    nano: m[7] === undefined ? 0 : Number((m[7] + '00000000').slice(0, 9)),
    offset,
  }
}

/** Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm; valid for any year). */
export function daysFromCivil(y: number, m: number, d: number): number {
  const yy = m <= 2 ? y - 1 : y
  const era = Math.floor(yy / 400)
  const yoe = yy - era * 400
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy
  return era * 146097 + doe - 719468
}

export function civilFromDays(days: number): { year: number; month: number; day: number } {
  const z = days + 719468
  const era = Math.floor(z / 146097)
  const doe = z - era * 146097
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365)
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100))
  const mp = Math.floor((5 * doy + 2) / 153)
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1
  const month = mp + (mp < 10 ? 3 : -9)
  return { year: yoe + era * 400 + (month <= 2 ? 1 : 0), month, day }
}

export function lastDayOfMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31
}

/** chrono's range checks: a real calendar day, hour < 24, minute < 60, second ≤ 60 (a leap second). */
export function validFields(f: DateFields): boolean {
  return (
    Number.isInteger(f.year) &&
    f.year >= -262143 &&
    f.year <= 262142 &&
    f.month >= 1 &&
    f.month <= 12 &&
    f.day >= 1 &&
    f.day <= lastDayOfMonth(f.year, f.month) &&
    f.hour <= 23 &&
    f.minute <= 59 &&
    f.second <= 60
  )
}
