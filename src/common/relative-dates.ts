/**
 * PostHog's relative dates (relative_date_parse), as its events list reads `after` and `before`: `-1d`, `-2h`,
 * `-30M` (minutes), `-10s`, `-1w`, `-1m` (months), `-1q` (13 weeks), `-1y`, counted back from now, and `dStart`,
 * `-1dEnd`, `hStart`, `mStart`, `yStart`… for the start or end of the hour, day, month or year, on the wall clock of
 * the project's timezone (PostHog passes `team.timezone_info`): `dStart` is the project's midnight, and taking days
 * away keeps the time of day across a change of daylight saving.
 */
import { wallToInstant, zoneOffsetMs } from './time-zones.js'

const RELATIVE = /^-?(\d+)?([hdwmMsqy])(Start|End)?$/

const DAY = 86_400_000
/** What one unit takes away, for the units counted in fixed time (months and years move the calendar). */
const UNIT_MS: Record<string, number> = { s: 1000, M: 60_000, h: 3_600_000, d: DAY, w: 7 * DAY, q: 91 * DAY }

function daysIn(year: number, month: number): number {
  return new Date(Date.UTC(year, month + 1, 0)).getUTCDate()
}

/**
 * Milliseconds since the epoch of `text` taken back from `now` in `zone` (a name the runtime knows), or null when
 * it is not a relative date. As dateutil's relativedelta on an aware datetime: on the wall clock, the month (and
 * year) moves first, the day kept within the month reached, then the hours, days and weeks are taken away; the
 * wall time reached is read as Python reads it (wallToInstant).
 */
export function parseRelativeDate(text: string, now: number, zone = 'UTC'): number | null {
  const match = RELATIVE.exec(text.trim())
  if (!match) return null
  const n = Number(match[1] ?? 0)
  const kind = match[2]
  const position = match[3]
  const d = new Date(now + (zoneOffsetMs(zone, now) ?? 0))
  let year = d.getUTCFullYear()
  let month = d.getUTCMonth() - (kind === 'm' ? n : 0) - (kind === 'y' ? 12 * n : 0)
  year += Math.floor(month / 12)
  month = ((month % 12) + 12) % 12
  let day = d.getUTCDate()
  let [h, mi, s, ms] = [d.getUTCHours(), d.getUTCMinutes(), d.getUTCSeconds(), d.getUTCMilliseconds()]
  if (position === 'Start') {
    if (kind === 'h') [mi, s, ms] = [0, 0, 0]
    if (kind === 'd') [h, mi, s, ms] = [0, 0, 0, 0]
    if (kind === 'm') day = 1
    if (kind === 'y') [month, day] = [0, 1]
  } else if (position === 'End') {
    if (kind === 'h') [mi, s, ms] = [59, 59, 999]
    if (kind === 'd') [h, mi, s, ms] = [23, 59, 59, 999]
    if (kind === 'm' || kind === 'y') day = 31
  }
  day = Math.min(day, daysIn(year, month))
  return wallToInstant(zone, Date.UTC(year, month, day, h, mi, s, ms) - n * (UNIT_MS[kind] ?? 0))
}

/** An ISO 8601 date or date-time without an offset: PostHog reads it on the project's wall clock. */
export const NAIVE_ISO = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d{1,9})?)?)?$/
/** One with an offset (`Z`, `+02:00`). */
const AWARE_ISO = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})$/i

/**
 * A bound of PostHog's date ranges (`dateRange.date_from`, as its isoparse, then relative_date_parse, read it): an
 * ISO 8601 date or date-time, on the zone's wall clock when it has no offset, or a relative date; null otherwise.
 */
export function parseDateBound(text: string, now: number, zone: string): number | null {
  const t = text.trim().replace(',', '.')
  if (NAIVE_ISO.test(t)) {
    const wall = Date.parse(`${t.length === 10 ? `${t}T00:00` : t.replace(' ', 'T')}Z`)
    return Number.isNaN(wall) ? null : wallToInstant(zone, wall)
  }
  if (AWARE_ISO.test(t)) {
    const ms = Date.parse(t.replace(' ', 'T'))
    return Number.isNaN(ms) ? null : ms
  }
  return parseRelativeDate(t, now, zone)
}
