/**
 * dateName and age of a query's dates and times (hogql-datetime.ts's datetimeCall), built of their parts on each one's
 * wall clock (hogql-zones.ts's calendar nodes), so that neither store has anything new to compute.
 */
import { numberNode, type CalendarPart, type HogqlNode } from './hogql-math.js'
import type { QueryClock } from './hogql-clock.js'
import { HogqlMathError } from './hogql-tokens.js'
import { isDate } from './hogql-time-marks.js'
import { calendar } from './hogql-zones.js'
import { MONTHS, named, WEEKDAYS } from './hogql-format.js'

type Op = '+' | '-' | '*' | '>' | '=' | '<='
const op = (o: Op, a: HogqlNode, b: HogqlNode): HogqlNode => ({ op: o, type: 'number', args: [a, b] })

/** ClickHouse's dateName parts (dateName.cpp), each a part of the calendar (ISO week: toISOWeek's mode 3). */
const NAMED: Readonly<Record<string, readonly [CalendarPart, number?]>> = {
  year: ['year'], quarter: ['quarter'], month: ['month'], week: ['week', 3], dayofyear: ['dayOfYear'], day: ['dayOfMonth'], weekday: ['dayOfWeek'], hour: ['hour'], minute: ['minute'], second: ['second'],
}

/**
 * dateName('part', t): the part's number as a text, or the month's or weekday's English name. Parts of a time are
 * refused for a date (they are none of it).
 */
export function dateNameNode(part: string, t: HogqlNode, clock: QueryClock): HogqlNode {
  const spec = Object.hasOwn(NAMED, part) ? NAMED[part] : undefined
  if (spec === undefined) throw new HogqlMathError(`dateName() takes a part (${Object.keys(NAMED).map((p) => `'${p}'`).join(', ')}) and a date and time here, as in dateName('month', timestamp).`)
  if (isDate(t) && (part === 'hour' || part === 'minute' || part === 'second')) throw new HogqlMathError(`dateName('${part}', …) takes a date and time, not a date.`)
  const value = calendar(spec[0], t, clock, spec[1])
  if (part === 'month' || part === 'weekday') return named(value, part === 'month' ? MONTHS : WEEKDAYS)
  return { op: 'call', fn: 'toString', type: 'text', args: [value] }
}

/** The parts below each unit age compares, from the largest (a month's place in its quarter for a quarter). */
const BELOW: Readonly<Record<string, readonly CalendarPart[]>> = {
  relYear: ['month', 'dayOfMonth', 'hour', 'minute', 'second', 'millisecond'],
  relQuarter: ['month', 'dayOfMonth', 'hour', 'minute', 'second', 'millisecond'],
  relMonth: ['dayOfMonth', 'hour', 'minute', 'second', 'millisecond'],
  relWeek: ['hour', 'minute', 'second', 'millisecond'],
  relDay: ['hour', 'minute', 'second', 'millisecond'],
  relHour: ['minute', 'second', 'millisecond'],
  relMinute: ['second', 'millisecond'],
  relSecond: ['millisecond'],
}

/** 1 where `a`'s parts come after `b`'s, compared from the first: (a₀ > b₀) + (a₀ = b₀)·(the rest's), 0 or 1. */
function after(a: readonly HogqlNode[], b: readonly HogqlNode[]): HogqlNode {
  const first = op('>', a[0], b[0])
  return a.length === 1 ? first : op('+', first, op('*', op('=', a[0], b[0]), after(a.slice(1), b.slice(1))))
}

/**
 * age(unit, x, y): ClickHouse's (dateDiff.cpp with is_relative false): dateDiff's count of the unit's boundaries
 * crossed from x to y, one fewer (one more when y is before x) where the later one's parts below the unit are before
 * the earlier one's: the whole units between them. A week compares the days of the week first, x's with y's whichever
 * is later, and an equal hour goes on to the minutes whatever the days, as ClickHouse's condition reads.
 */
export function ageNode(unit: CalendarPart, x: HogqlNode, y: HogqlNode, clock: QueryClock): HogqlNode {
  const parts = (t: HogqlNode) =>
    BELOW[unit].map((part, i) => {
      const value = calendar(part, t, clock)
      // The month's place in its quarter, 0 to 2.
      return unit === 'relQuarter' && i === 0 ? { op: 'call', fn: 'modulo', type: 'number', args: [op('-', value, numberNode(1)), numberNode(3)] } as HogqlNode : value
    })
  const [px, py] = [parts(x), parts(y)]
  const [dx, dy] = [calendar('dayOfWeek', x, clock), calendar('dayOfWeek', y, clock)]
  const later = (a: HogqlNode[], b: HogqlNode[]): HogqlNode => {
    if (unit !== 'relWeek') return after(a, b)
    const hours = op('+', op('*', op('=', dx, dy), op('>', a[0], b[0])), op('*', op('=', a[0], b[0]), after(a.slice(1), b.slice(1))))
    return op('>', op('+', op('>', dx, dy), hours), numberNode(0))
  }
  const forward = op('<=', x, y)
  const diff = op('-', calendar(unit, y, clock), calendar(unit, x, clock))
  // x ≤ y: less one where x's parts come after y's; else more one where y's come after x's.
  const adjust = op('-', op('*', op('-', numberNode(1), forward), later(py, px)), op('*', forward, later(px, py)))
  return op('+', diff, adjust)
}
