/**
 * IANA time zones through the runtime's Intl (Node 20's ICU knows the tz database): which names a project may
 * take as its timezone, and the offset a zone uses at an instant. One formatter per zone, made once.
 */
import { TZ_NAMES } from './tz-names.js'

const formatters = new Map<string, Intl.DateTimeFormat>()

function formatter(zone: string): Intl.DateTimeFormat {
  let f = formatters.get(zone)
  if (f === undefined) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      era: 'short',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    })
    formatters.set(zone, f)
  }
  return f
}

/** True when the runtime can compute times in the zone (any spelling Intl takes). */
export function isKnownTimeZone(zone: string): boolean {
  try {
    formatter(zone)
    return true
  } catch {
    return false
  }
}

/** Intl's own list, for zones newer than the tzdata TZ_NAMES was taken from. */
const LISTED = new Set(Intl.supportedValuesOf('timeZone'))

/**
 * Whether `name` is a timezone PostHog's Team.timezone takes: a tz database name spelled exactly (`US/Eastern`,
 * not `US/EASTERN`) that the runtime can compute times in.
 */
export function isTimeZoneName(name: string): boolean {
  return (TZ_NAMES.has(name) || LISTED.has(name)) && isKnownTimeZone(name)
}

/** JS Date's range, in milliseconds either side of the epoch. */
const MAX_DATE_MS = 8.64e15

/**
 * Milliseconds east of UTC that `zone` uses at the instant `ms` (whole seconds), or null outside JS Date's
 * range. The zone must be known (isKnownTimeZone).
 */
export function zoneOffsetMs(zone: string, ms: number): number | null {
  if (zone === 'UTC') return 0
  if (Math.abs(ms) > MAX_DATE_MS) return null
  const at = Math.floor(ms / 1000) * 1000
  let year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0, bc = false
  for (const p of formatter(zone).formatToParts(new Date(at))) {
    if (p.type === 'year') year = Number(p.value)
    else if (p.type === 'month') month = Number(p.value)
    else if (p.type === 'day') day = Number(p.value)
    else if (p.type === 'hour') hour = Number(p.value)
    else if (p.type === 'minute') minute = Number(p.value)
    else if (p.type === 'second') second = Number(p.value)
    else if (p.type === 'era') bc = p.value.startsWith('B')
  }
  // setUTCFullYear, not Date.UTC: the latter reads years 0–99 as 1900–1999.
  const wall = new Date(0)
  wall.setUTCFullYear(bc ? 1 - year : year, month - 1, day)
  wall.setUTCHours(hour, minute, second, 0)
  return wall.getTime() - at
}

/**
 * Python's `datetime.isoformat()` of an instant (microseconds) in `zone`: the fraction only when there is one,
 * then the zone's offset (`+HH:MM`, with `:SS` for the local mean times of old dates).
 */
export function isoformat(micros: number, zone: string): string {
  const seconds = Math.floor(micros / 1_000_000)
  const offset = zoneOffsetMs(zone, seconds * 1000) ?? 0
  const wall = new Date(seconds * 1000 + offset).toISOString().slice(0, 19)
  const fraction = micros - seconds * 1_000_000
  const abs = Math.abs(offset) / 1000
  const pad = (n: number) => String(n).padStart(2, '0')
  const zoneSeconds = abs % 60 === 0 ? '' : `:${pad(abs % 60)}`
  return `${wall}${fraction === 0 ? '' : `.${String(fraction).padStart(6, '0')}`}${offset < 0 ? '-' : '+'}${pad(Math.floor(abs / 3600))}:${pad(Math.floor(abs / 60) % 60)}${zoneSeconds}`
}

const DAY_MS = 86_400_000

/**
 * The instants a wall-clock time of `zone` (its fields read as if UTC, in ms) names, earlier first: none in a
 * spring-forward gap, two where the clock falls back and repeats it.
 */
export function wallInstants(zone: string, wall: number): number[] {
  if (zone === 'UTC') return [wall]
  const offsetAt = (ms: number) => zoneOffsetMs(zone, ms) ?? 0
  const offsets = new Set([offsetAt(wall - DAY_MS), offsetAt(wall), offsetAt(wall + DAY_MS)])
  return [...offsets].map((o) => wall - o).filter((t) => offsetAt(t) === wall - t).sort((a, b) => a - b)
}

/**
 * A wall-clock time of `zone` as Python reads a zoneinfo datetime with fold=0 (what `replace(tzinfo=…)` and
 * arithmetic on an aware datetime give): a repeated time is its first occurrence, a skipped one is read with the
 * offset from before the gap (02:30 on a night Berlin skips to 03:00 is 03:30 CEST).
 */
export function wallToInstant(zone: string, wall: number): number {
  const found = wallInstants(zone, wall)
  return found[0] ?? wall - (zoneOffsetMs(zone, wall - DAY_MS) ?? 0)
}

/**
 * The offsets `zone` uses from `from` (inclusive) to `to` (exclusive): `[at, offset]` pairs, the first at `from`,
 * then one at each change (to the second), so a store can turn instants into the zone's days without a tz database.
 */
export function offsetChanges(zone: string, from: number, to: number): Array<[at: number, offset: number]> {
  const offsetAt = (ms: number) => zoneOffsetMs(zone, ms) ?? 0
  const changes: Array<[number, number]> = [[from, offsetAt(from)]]
  if (zone === 'UTC') return changes
  // Zones change at most a few times a year: a day apart, then narrowed to the second it happened.
  for (let start = from; start < to; start += DAY_MS) {
    const end = Math.min(start + DAY_MS, to)
    const before = changes.at(-1)![1]
    if (offsetAt(end - 1000) === before) continue
    // The last second checked before this day had the old offset (a change in that very second is found here).
    let [lo, hi] = [start === from ? from : start - 1000, end - 1000]
    while (hi - lo > 1000) {
      const mid = lo + Math.floor((hi - lo) / 2000) * 1000
      if (offsetAt(mid) === before) lo = mid
      else hi = mid
    }
    // Offsets change on a whole second, the one in (lo, hi].
    const at = Math.floor(hi / 1000) * 1000
    changes.push([at, offsetAt(at)])
  }
  return changes
}
