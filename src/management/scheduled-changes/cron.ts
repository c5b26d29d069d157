/**
 * When a cron schedule runs next, as PostHog's `compute_next_run_cron` asks croniter: the first whole minute
 * strictly after the given time whose month, day, hour and minute match, in UTC (PostHog reads the fields in
 * the timezone the project had when the change was made, and skylark's projects are all UTC, so there is no
 * daylight saving to cross). Days follow croniter: when both day fields are restricted a day matching either
 * runs (`0 0 13 * 5` is the 13th and every Friday), computed as two searches, one per day field; `#` and `L`
 * weekdays hold in both, and a search finding no date in 50 years fails the whole computation with croniter's
 * "failed to find next date": `0 0 31 2 *`, but also `0 0 30 2 1` and `0 0 13 * 5#3` (no third Friday is a 13th).
 */
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

/**
 * The run after `afterMs` (PostHog passes the run that just happened). `random` draws croniter's `R` values,
 * anew on each call as croniter does. Throws CronSyntaxError for an expression croniter refuses, NoNextRun
 * when none comes.
 */
export function nextCronRun(expression: string, afterMs: number, random: () => number = Math.random): number {
  const f = parseCronFields(expression, random)
  const start = Math.floor(afterMs / MINUTE_MS) * MINUTE_MS + MINUTE_MS
  if (f.days && f.weekdays) return Math.min(search(f, start, true, false), search(f, start, false, true))
  return search(f, start, true, true)
}
