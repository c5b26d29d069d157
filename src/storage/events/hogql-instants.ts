/**
 * The values of a query's nodes of an instant in Node (`truncate`, `calendar`, `dayShift`: hogql-datetime.ts makes
 * them) on the project zone's offsets; clickhouse-periods.ts writes the same steps as SQL.
 */
import { offsetAt } from './days.js'
import { wallInstant } from './hogql-datetime-text.js'
import type { CalendarPart, HogqlNode, TruncateUnit, WeekPart } from './hogql-math.js'

const DAY = 86_400_000
const mod = (a: number, b: number) => ((a % b) + b) % b
/**
 * The start of `ms`'s period of `step` units, as ClickHouse's toStartOfInterval finds it: seconds and minutes count
 * instants from 1970 (its toStartOfMinuteInterval of zones whose offsets are whole minutes); the others cut the wall
 * time (`ms` plus its offset) to the unit, then take the offset in force there off again. Hours count from the day's
 * start, days and weeks (from Monday, or toStartOfWeek's Sunday) from 1970, months from 1900 (ClickHouse's first year),
 * years from year 0. clickhouse-periods.ts writes the same steps as SQL.
 */
export function truncateMs(ms: number, { unit, step = 1, offsets }: { unit: TruncateUnit; step?: number; offsets: ReadonlyArray<readonly [number, number]> }): number {
  if (unit === 'second' || unit === 'minute') {
    const size = (unit === 'second' ? 1000 : 60_000) * step
    return Math.floor(ms / size) * size
  }
  const off = offsetAt(offsets, ms)
  const wall = ms + off
  const day = Math.floor(wall / DAY)
  let start: number
  if (unit === 'hour') start = day * DAY + Math.floor((wall - day * DAY) / (3_600_000 * step)) * 3_600_000 * step
  else if (unit === 'day') start = Math.floor(day / step) * step * DAY
  else if (unit === 'week') start = (day - mod(day + 4, 7)) * DAY
  // 1970-01-05 (day 4) was a Monday.
  else if (unit === 'monday') start = (4 + Math.floor((day - 4) / (7 * step)) * 7 * step) * DAY
  else {
    const date = new Date(day * DAY)
    const year = date.getUTCFullYear()
    const months = (unit === 'quarter' ? 3 : 1) * step
    const index = (year - 1900) * 12 + date.getUTCMonth()
    const first = index - mod(index, months)
    // A Date holds nothing before 1970 (`interval 900 month`): ClickHouse's saturates there.
    start = Math.max(0, unit === 'year' ? Date.UTC(year - mod(year, step), 0, 1) : Date.UTC(1900 + Math.floor(first / 12), mod(first, 12), 1))
  }
  return start - offsetAt(offsets, start - off)
}

/**
 * `ms` moved `days` on the zone's wall clock (dayShift nodes): its wall time that many days on, less the offset in
 * force at the instant the old offset gives for it, as ClickHouse's addDays (a time in the hour summer time skips is
 * an hour earlier). clickhouse-periods.ts writes the same steps as SQL.
 */
function shiftedDays(ms: number, days: number, offsets: ReadonlyArray<readonly [number, number]>): number {
  const off = offsetAt(offsets, ms)
  const wall = ms + off + days * DAY
  return wall - offsetAt(offsets, wall - off)
}

/** The value of a node of an instant (truncate, calendar, dayShift) at the instant `ms`, or of wallTime at the wall time `ms`. */
export function instantOf(node: HogqlNode & { op: 'truncate' | 'calendar' | 'dayShift' | 'wallTime' }, ms: number): number {
  if (node.op === 'truncate') return truncateMs(ms, node)
  if (node.op === 'wallTime') return wallInstant(ms, node.offsets)
  return node.op === 'calendar' ? calendarPart(ms, node.part, node.offsets, node.mode) : shiftedDays(ms, node.days, node.offsets)
}

/**
 * `part` of `ms` (calendar nodes): on the zone's wall clock, weeks from Monday (toDayOfWeek 1–7, toRelativeWeekNum);
 * seconds, minutes and hours since 1970 count instants, as ClickHouse's toRelative…Num do (an hour is an hour across
 * a change of summer time), less the zone's offset of 1970, as its toStableRelativeHourNum takes it off (so a
 * half-hour zone's hours are its wall clock's, a 45-minute zone's are not, and two zones' hours are apart by their
 * offsets). clickhouse-periods.ts writes the same steps as SQL.
 */
export function calendarPart(ms: number, part: CalendarPart, offsets: ReadonlyArray<readonly [number, number]>, mode = 0): number {
  if (part === 'relSecond') return Math.floor(ms / 1000)
  if (part === 'millisecond') return mod(Math.floor(ms), 1000)
  if (part === 'offset') return offsetAt(offsets, ms) / 1000
  if (part === 'relMinute' || part === 'relHour') return Math.floor((ms - offsets[0][1]) / (part === 'relMinute' ? 60_000 : 3_600_000))
  const wall = ms + offsetAt(offsets, ms)
  const day = Math.floor(wall / DAY)
  switch (part) {
    case 'hour':
      return Math.floor(mod(wall, DAY) / 3_600_000)
    case 'minute':
      return Math.floor(mod(wall, 3_600_000) / 60_000)
    case 'second':
      return Math.floor(mod(wall, 60_000) / 1000)
    case 'dayOfWeek':
      // 1970-01-01 was a Thursday.
      return mod(day + 3, 7) + 1
    case 'relDay':
      return day
    case 'relWeek':
      return Math.floor((day + 3) / 7)
    case 'week':
    case 'yearWeek':
    case 'isoYear': {
      const [year, week] = yearWeek(day, weekMode(part, mode))
      return part === 'week' ? week : part === 'yearWeek' ? year * 100 + week : year
    }
  }
  const date = new Date(day * DAY)
  const year = date.getUTCFullYear()
  const month = date.getUTCMonth() + 1
  if (part === 'year' || part === 'relYear') return year
  if (part === 'month') return month
  if (part === 'quarter') return Math.ceil(month / 3)
  if (part === 'dayOfMonth') return date.getUTCDate()
  if (part === 'dayOfYear') return day - Date.UTC(year, 0, 1) / DAY + 1
  return part === 'relMonth' ? year * 12 + month : year * 4 + Math.floor((month - 1) / 3)
}

/** The mode yearWeek reads for a part: toYearWeek's counts weeks in their own year (the flag 2), toISOYear's is ISO's (3). */
export const weekMode = (part: WeekPart, mode: number): number => (part === 'isoYear' ? 3 : part === 'yearWeek' ? mode | 2 : mode)

/** A week mode's flags, as check_week_mode reads them: a mode of weeks from Sunday counts week 1 the other way. */
export function weekFlags(mode: number): { mondayFirst: boolean; weekYear: boolean; firstWeekday: boolean } {
  const flags = (mode & 1) === 0 ? (mode & 7) ^ 4 : mode & 7
  return { mondayFirst: (flags & 1) !== 0, weekYear: (flags & 2) !== 0, firstWeekday: (flags & 4) !== 0 }
}

/** 1 for Monday … 7 for Sunday, of a day's number from 1970-01-01 (a Thursday). */
const dayOfWeek = (day: number) => mod(day + 3, 7) + 1
const daysInYear = (y: number) => (y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0) ? 366 : 365)

/**
 * ClickHouse's toYearWeek (DateLUTImpl's, after MySQL's week modes 0–9) of a wall-clock day (its number from
 * 1970-01-01): the year its week counts in and the week's number, 0 for the days before week 1 where the mode counts
 * them so. The mode's flags (check_week_mode): weeks start on Monday (1), count in the year they mostly fall in (2),
 * week 1 is the first starting on the week's first day rather than the first of four days or more (4), week 1 holds
 * January 1 (8). clickhouse-periods.ts's weekSql writes the same steps as SQL.
 */
export function yearWeek(day: number, mode: number): [number, number] {
  const date = new Date(day * DAY)
  const flags = weekFlags(mode)
  const { mondayFirst, firstWeekday } = flags
  // Set below where a January day falls in the last week of the year before.
  let weekYear = flags.weekYear
  if ((mode & 8) !== 0) {
    // The week holding January 1 is week 1: its year is that of the week's last day.
    const year = new Date((day + 7 - dayOfWeek(day + (mondayFirst ? 0 : 1))) * DAY).getUTCFullYear()
    const start = (d: number) => (mondayFirst ? d - dayOfWeek(d) + 1 : dayOfWeek(d) === 7 ? d : d - dayOfWeek(d))
    return [year, Math.floor((start(day) - start(Date.UTC(year, 0, 1) / DAY)) / 7) + 1]
  }
  let year = date.getUTCFullYear()
  let first = Date.UTC(year, 0, 1) / DAY
  // January 1's day of the week, 0 for the week's first day.
  let weekday = dayOfWeek(first + (mondayFirst ? 0 : 1)) - 1
  const late = () => (firstWeekday ? weekday !== 0 : weekday >= 4)
  if (date.getUTCMonth() === 0 && date.getUTCDate() <= 7 - weekday) {
    if (!weekYear && late()) return [year, 0]
    weekYear = true
    year--
    first -= daysInYear(year)
    weekday = (weekday + 53 * 7 - daysInYear(year)) % 7
  }
  const days = late() ? day - (first + 7 - weekday) : day - (first - weekday)
  if (weekYear && days >= 52 * 7) {
    const next = (weekday + daysInYear(year)) % 7
    if ((!firstWeekday && next < 4) || (firstWeekday && next === 0)) return [year + 1, 1]
  }
  return [year, Math.floor(days / 7) + 1]
}
