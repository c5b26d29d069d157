/**
 * The wall clocks a query's dates and times are read on (hogql-datetime.ts): a period's start and a part of a date
 * and time on its zone's (toTimeZone's, else the project's), a date and time moved to another zone, and a date,
 * which has no zone in ClickHouse, kept as its day's start on the project's.
 */
import { isTimeZoneName } from '../../common/time-zones.js'
import { numberNode, type CalendarPart, type HogqlNode, type TruncateUnit } from './hogql-math.js'
import { HogqlMathError } from './hogql-tokens.js'
import type { QueryClock } from './hogql-clock.js'
import { isDate, keepZone, markDate, markInterval, markZone, zoneOf, zoneOffsets } from './hogql-time-marks.js'

const DAY = 86_400_000

/** The start of `arg`'s period of `step` units on its zone's wall clock, a date and time of that zone. */
export function truncation(unit: TruncateUnit, arg: HogqlNode, clock: QueryClock, step = 1): HogqlNode {
  const offsets = zoneOffsets(zoneOf(arg, clock.zone), clock.now)
  return keepZone(arg, step === 1 ? { op: 'truncate', type: 'number', unit, offsets, args: [arg] } : { op: 'truncate', type: 'number', unit, step, offsets, args: [arg] })
}

/** `part` of `arg` on its zone's wall clock (ClickHouse's mode of a week number if given): a number. */
export function calendar(part: CalendarPart, arg: HogqlNode, clock: QueryClock, mode?: number): HogqlNode {
  const offsets = zoneOffsets(zoneOf(arg, clock.zone), clock.now)
  return mode === undefined ? { op: 'calendar', type: 'number', part, offsets, args: [arg] } : { op: 'calendar', type: 'number', part, mode, offsets, args: [arg] }
}

/**
 * The start of day `day` (a node of days from 1970-01-01) on `zone`'s wall clock, a date and time of that zone:
 * the day's noon, which every zone's day has, read there and cut to its day, so that a date made so is the node a
 * date made on the project's clock is (ClickHouse's first instant of the day where midnight is skipped).
 */
function dayStart(day: HogqlNode, zone: string, clock: QueryClock): HogqlNode {
  const noon: HogqlNode = { op: '+', type: 'number', args: [{ op: '*', type: 'number', args: [day, numberNode(DAY)] }, numberNode(DAY / 2)] }
  return truncation('day', markZone({ op: 'wallTime', type: 'number', offsets: zoneOffsets(zone, clock.now), args: [noon] }, zone), clock)
}

/**
 * `node`, a period's start, as a date: ClickHouse's Date is a day, of no zone, so a period cut on another zone's
 * wall clock (toDate(toTimeZone(timestamp, 'UTC'))) is its day there, kept as that day's start on the project's.
 */
export function asDate(node: HogqlNode, clock: QueryClock): HogqlNode {
  return markDate(zoneOf(node, clock.zone) === clock.zone ? node : dayStart(calendar('relDay', node, clock), clock.zone, clock))
}

/** `t` as a date and time of `zone` (toTimeZone): the same instant, or a date's first instant there, as ClickHouse converts one. */
export function inZone(t: HogqlNode, zone: string, clock: QueryClock): HogqlNode {
  return isDate(t) ? dayStart(calendar('relDay', t, clock), zone, clock) : markZone({ ...t }, zone)
}

const interval = (ms: number) => markInterval(numberNode(ms))
/** `t` plus or minus `by` (an interval's node), of t's zone. */
const moved = (t: HogqlNode, op: '+' | '-', by: HogqlNode) => keepZone(t, { op, type: 'number', args: [t, by] })

/** toLastDayOfMonth(t): the date of the last day of t's month on its zone's clock, the next month's start 12 hours back. */
export function lastDayOfMonth(t: HogqlNode, clock: QueryClock): HogqlNode {
  const next = truncation('month', moved(truncation('month', t, clock), '+', interval(40 * DAY)), clock)
  return asDate(truncation('day', moved(next, '-', interval(DAY / 2)), clock), clock)
}

/**
 * toStartOfISOYear(t): the date of the Monday of t's ISO week 1 on its zone's clock, its week's Monday (ISO week − 1)
 * weeks back, counted from noon so that a change of summer time between moves no day.
 */
export function isoYearStart(t: HogqlNode, clock: QueryClock): HogqlNode {
  const weeks = markInterval({ op: '*', type: 'number', args: [{ op: '-', type: 'number', args: [calendar('week', t, clock, 3), numberNode(1)] }, numberNode(7 * DAY)] })
  return asDate(truncation('day', moved(moved(truncation('monday', t, clock), '+', interval(DAY / 2)), '-', weeks), clock), clock)
}

/** A function's time zone argument: a tz database name as a text literal. */
export function zoneArgument(name: string, arg: HogqlNode): string {
  if (arg.op === 'text' && isTimeZoneName(arg.value)) return arg.value
  const given = arg.op === 'text' ? ` ${JSON.stringify(arg.value)} is none.` : ''
  throw new HogqlMathError(`${name}() takes a time zone's name (a tz database name as a text literal, such as 'UTC' or 'Europe/Berlin') as its last argument here.${given}`)
}
