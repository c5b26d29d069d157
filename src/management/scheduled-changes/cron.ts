/**
 * When a cron schedule runs next, as PostHog's `compute_next_run_cron` asks croniter: the first whole minute
 * strictly after the given time whose month, day, hour and minute match on the wall clock of the change's
 * timezone (the project's when the change was made; PostHog hands croniter the run as a zoneinfo datetime in
 * that zone and stores the answer in UTC). Days follow croniter: when both day fields are restricted a day
 * matching either runs (`0 0 13 * 5` is the 13th and every Friday), computed as two searches, one per day
 * field; `#` and `L` weekdays hold in both, and a search finding no date in 50 years fails the whole
 * computation with croniter's "failed to find next date": `0 0 31 2 *`, but also `0 0 30 2 1` and
 * `0 0 13 * 5#3` (no third Friday is a 13th).
 *
 * Daylight saving, as croniter 6.1+ does with a tz-aware start (its `_calc` and `_add_tzinfo`; checked against
 * croniter 6.2.4 with zoneinfo). PostHog pins `croniter~=6.0.0`, whose DST code (a lag correction in
 * `_get_next`, written for pytz) was rewritten in 6.1 as "Fix DST handling" along with zoneinfo support; skylark
 * follows the rewrite, the behaviour croniter now documents and tests:
 * - The search runs on the wall clock, from the minute after the start's wall time.
 * - A matching wall time in a spring-forward gap: with a restricted hour field (`30 2 * * *`) it runs at the
 *   first minute after the gap (03:00 in Berlin, once); with `*` hours (`30 * * * *`) the gap's minutes are
 *   skipped and the next matching minute that exists runs.
 * - A wall time the fall-back repeats runs at its first occurrence, and again at its second: `30 2 * * *`
 *   runs at 02:30 CEST and 02:30 CET on the last Sunday of October, `0 * * * *` at both 02:00s. (The start's
 *   offset differing from the answer's makes croniter look again from the start's wall time moved by the
 *   difference, and the earlier of the two answers wins.)
 */
import { wallInstants, zoneOffsetMs } from '../../common/time-zones.js'
import { parseCronFields, CronSyntaxError, type CronFields } from './cron-fields.js'

/** croniter's CroniterBadDateError: nothing matches within MAX_YEARS. */
export class NoNextRun extends Error {
  constructor() {
    super('failed to find next date')
    this.name = 'CroniterBadDateError'
  }
}

const MINUTE_MS = 60_000
const DAY_MS = 86_400_000
/** croniter's `max_years_between_matches` default. */
const MAX_YEARS = 50

/** croniter's `is_valid` for an expression already known to have five fields. */
export function isValidCron(expression: string): boolean {
  try {
    parseCronFields(expression)
    return true
  } catch (error) {
    if (error instanceof CronSyntaxError) return false
    throw error
  }
}

const lastDayOf = (year: number, month: number) => new Date(Date.UTC(year, month, 0)).getUTCDate()

interface Day {
  day: number
  weekday: number
  lastDay: number
}

function dayMatches(f: CronFields, d: Day, useDays: boolean, useWeekdays: boolean): boolean {
  if (useDays && f.days && !f.days.values.has(d.day) && !(f.days.last && d.day === d.lastDay)) return false
  // croniter applies `#` and `L` weekdays in place of the plain ones, whichever branch it computes.
  if (f.nth.size > 0) {
    const which = f.nth.get(d.weekday)
    return which !== undefined && (which.has(Math.floor((d.day - 1) / 7) + 1) || (which.has('l') && d.day + 7 > d.lastDay))
  }
  return !useWeekdays || !f.weekdays || f.weekdays.has(d.weekday)
}

/** The first minute of the day from `fromMinute` on that the hour and minute fields take, or null. */
function firstMinute(f: CronFields, fromMinute: number): number | null {
  for (let hour = Math.floor(fromMinute / 60); hour < 24; hour++) {
    if (f.hours && !f.hours.has(hour)) continue
    for (let minute = hour === Math.floor(fromMinute / 60) ? fromMinute % 60 : 0; minute < 60; minute++) {
      if (!f.minutes || f.minutes.has(minute)) return hour * 60 + minute
    }
  }
  return null
}

/** The first matching minute at or after `startMs` (a whole minute), looking no further than MAX_YEARS on. */
function search(f: CronFields, startMs: number, useDays: boolean, useWeekdays: boolean): number {
  const start = new Date(startMs)
  const lastYear = start.getUTCFullYear() + MAX_YEARS
  let midnight = Date.UTC(start.getUTCFullYear(), start.getUTCMonth(), start.getUTCDate())
  let fromMinute = (startMs - midnight) / MINUTE_MS
  for (;;) {
    const date = new Date(midnight)
    const year = date.getUTCFullYear()
    const month = date.getUTCMonth() + 1
    if (year > lastYear) throw new NoNextRun()
    if (f.months && !f.months.has(month)) {
      midnight = Date.UTC(year, month, 1)
      fromMinute = 0
      continue
    }
    const day = { day: date.getUTCDate(), weekday: date.getUTCDay(), lastDay: lastDayOf(year, month) }
    if (dayMatches(f, day, useDays, useWeekdays)) {
      const minute = firstMinute(f, fromMinute)
      if (minute !== null) return midnight + minute * MINUTE_MS
    }
    midnight += DAY_MS
    fromMinute = 0
  }
}

/** The offset of a zone the caller checked; outside JS Date's range (never reached by a 50-year search) none. */
const offsetOf = (zone: string, ms: number) => zoneOffsetMs(zone, ms) ?? 0

/**
 * croniter's `_add_tzinfo` going forward: a wall time that exists is its first occurrence, or its second when
 * the first is not after `start`; one in a gap becomes the first minute after the gap, and `exists` is false.
 */
function toInstant(zone: string, wall: number, start: number): { at: number; exists: boolean } {
  const found = wallInstants(zone, wall)
  if (found.length === 0) {
    let after = wall + MINUTE_MS
    while (wallInstants(zone, after).length === 0) after += MINUTE_MS
    return { at: wallInstants(zone, after)[0]!, exists: false }
  }
  return { at: found.length > 1 && found[0]! <= start ? found[1]! : found[0]!, exists: true }
}

/** One of croniter's `_calc` searches from `start`, on the wall clock of `zone` (see the header for DST). */
function calc(f: CronFields, start: number, zone: string, useDays: boolean, useWeekdays: boolean): number {
  const after = (wall: number) => search(f, Math.floor(wall / MINUTE_MS) * MINUTE_MS + MINUTE_MS, useDays, useWeekdays)
  const startOffset = offsetOf(zone, start)
  const startWall = start + startOffset
  let wall = after(startWall)
  let { at, exists } = toInstant(zone, wall, start)
  if (!exists && (at <= start || f.hours === null)) {
    while (!exists) {
      wall = after(wall)
      ;({ at, exists } = toInstant(zone, wall, start))
    }
  }
  const shift = offsetOf(zone, at) - startOffset
  if (shift === 0) return at
  const other = toInstant(zone, after(startWall + shift), start).at
  return other > start && other < at ? other : at
}

/**
 * The run after `afterMs` (PostHog passes the run that just happened), on the wall clock of `zone`, an IANA
 * name the runtime knows. `random` draws croniter's `R` values, anew on each call as croniter does. Throws
 * CronSyntaxError for an expression croniter refuses, NoNextRun when none comes.
 */
export function nextCronRun(expression: string, afterMs: number, zone = 'UTC', random: () => number = Math.random): number {
  const f = parseCronFields(expression, random)
  if (f.days && f.weekdays) return Math.min(calc(f, afterMs, zone, true, false), calc(f, afterMs, zone, false, true))
  return calc(f, afterMs, zone, true, true)
}
