/**
 * The dates and times of HogQL queries (hogql-query.ts), as the parser (hogql-parse.ts) makes them: the date and time
 * functions' nodes, intervals, and where dates and times may stand (checkDatetimes). Which nodes are dates and times
 * and of which zone is hogql-time-marks.ts's, the wall-clock nodes' builders hogql-zones.ts's, a text's reading
 * hogql-datetime-text.ts's.
 */
import { isDate, isDatetime, isInterval, keepZone, markDate, markDatetime, markInterval, markZone, zoneOf, zoneOffsets } from './hogql-time-marks.js'
import { asDate, calendar, inZone, isoYearStart, lastDayOfMonth, truncation, zoneArgument } from './hogql-zones.js'
import { datetimeMs } from './hogql-datetime-text.js'
import { isArray } from './hogql-arrays.js'
import { addMonths } from './days.js'
import { evaluateHogql, hogqlFields, hogqlProperties, numberNode, type CalendarPart, type HogqlMath, type HogqlNode, type TruncateUnit, type WeekPart } from './hogql-math.js'
import { HogqlMathError, type Token } from './hogql-tokens.js'
import { FUNCTION_BY_NAME, typedCall } from './hogql-functions.js'
import { formatted } from './hogql-format.js'
import type { QueryClock } from './hogql-clock.js'
import { DATE_SHIFTS, dateShift, isDateShift } from './hogql-date-shift.js'
import { ageNode, dateNameNode } from './hogql-date-parts.js'

/** The functions that cut a date and time to its period's start on the project's wall clock. */
const TRUNCATIONS: Readonly<Record<string, TruncateUnit>> = {
  tostartofsecond: 'second',
  tostartofminute: 'minute',
  tostartofhour: 'hour',
  tostartofday: 'day',
  todate: 'day',
  tostartofweek: 'week',
  tomonday: 'monday',
  tostartofmonth: 'month',
  tostartofquarter: 'quarter',
  tostartofyear: 'year',
}
/** Those of them that give a Date in ClickHouse (written as one); the others a DateTime. */
const DATE_TRUNCATIONS: ReadonlySet<string> = new Set(['todate', 'tostartofweek', 'tomonday', 'tostartofmonth', 'tostartofquarter', 'tostartofyear'])
/** The functions that read a part of a date and time on the project's wall clock, and toUnixTimestamp. */
const CALENDAR_PARTS: Readonly<Record<string, CalendarPart>> = {
  toyear: 'year',
  toquarter: 'quarter',
  tomonth: 'month',
  todayofmonth: 'dayOfMonth',
  todayofweek: 'dayOfWeek',
  todayofyear: 'dayOfYear',
  tohour: 'hour',
  tominute: 'minute',
  tosecond: 'second',
  tounixtimestamp: 'relSecond',
  timezoneoffset: 'offset',
}
/** dateDiff's units, with ClickHouse's abbreviations of them, as the numbers whose difference it is. */
const DIFF_UNITS: Readonly<Record<string, CalendarPart>> = Object.fromEntries(
  Object.entries({ relSecond: 'second ss s', relMinute: 'minute mi n', relHour: 'hour hh h', relDay: 'day dd d', relWeek: 'week wk ww', relMonth: 'month mm m', relQuarter: 'quarter qq q', relYear: 'year yyyy yy' }).flatMap(([part, names]) =>
    names.split(' ').map((name) => [name, part as CalendarPart]),
  ),
)
/** An interval's unit in ms. */
const INTERVAL_MS: Readonly<Record<string, number>> = { second: 1000, minute: 60_000, hour: 3_600_000, day: 86_400_000, week: 604_800_000 }
/** Calendar units in months: their length depends on where they start, so they shift constant dates only (shiftedDatetime). */
const INTERVAL_MONTHS: Readonly<Record<string, number>> = { month: 1, quarter: 3, year: 12 }
const MONTH_INTERVALS = new WeakMap<HogqlNode, number>()
/** Each interval's count and unit as written: toStartOfInterval reads them (7 days and 1 week start on other days). */
const INTERVAL_UNITS = new WeakMap<HogqlNode, { n: number; unit: string }>()

/** `interval <n> <unit>` (or `days`, any case) in ms, or in months (MONTH_INTERVALS), marked an interval; null for a unit not read. */
export function intervalNode(n: number, unit: string): HogqlNode | null {
  const name = unit.toLowerCase().replace(/s$/, '')
  const months = Object.hasOwn(INTERVAL_MONTHS, name) ? INTERVAL_MONTHS[name] : undefined
  const ms = Object.hasOwn(INTERVAL_MS, name) ? INTERVAL_MS[name] : undefined
  if (months === undefined && ms === undefined) return null
  const node = markInterval({ op: 'number', type: 'number', value: months === undefined ? n * ms! : 0 })
  if (months !== undefined) MONTH_INTERVALS.set(node, n * months)
  INTERVAL_UNITS.set(node, { n, unit: name })
  return node
}

/** `interval 7 day` from the tokens of its number and unit, at `i`, in ms (intervalNode). */
export function intervalAt(tokens: readonly Token[], i: number): HogqlNode {
  const [n, unit] = [tokens[i], tokens[i + 1]]
  const node = n?.kind === 'number' && unit?.kind === 'name' && !unit.quoted ? intervalNode(n.value, unit.value) : null
  if (node === null) throw new HogqlMathError('An interval is a number and a unit here, as in interval 7 day (second, minute, hour, day, week, month, quarter or year).')
  return node
}

/**
 * `left ± interval` (op and interval as parsed), marked a date and time. An interval of months is ClickHouse's
 * addMonths on the project's wall clock (the time of day kept, the day cut to the month's last): computed here,
 * so it shifts constants only; a date stays a date.
 */
export function shiftedDatetime(node: HogqlNode & { op: '+' | '-' }, clock: QueryClock): HogqlNode {
  const [left, interval] = node.args
  const months = MONTH_INTERVALS.get(interval)
  if (months === undefined) {
    keepZone(left, node)
    const days = interval.op === 'number' ? interval.value / DAY : NaN
    const unit = INTERVAL_UNITS.get(interval)?.unit
    const offsets = zoneOffsets(zoneOf(left, clock.zone), clock.now)
    // Days and weeks move the wall clock, as ClickHouse's addDays of a date and time in its zone (23 or 25 hours
    // where summer time changes between); a zone that never changes its offset needs no more than the sum.
    if (!isDate(left) && (unit === 'day' || unit === 'week') && Number.isInteger(days) && offsets.length > 1) return keepZone(left, { op: 'dayShift', type: 'number', days: node.op === '+' ? days : -days, offsets, args: [left] })
    if (!isDate(left) || !Number.isInteger(days)) return node
    // A Date plus days is the Date that many days on, as in ClickHouse: its midnight is not 24 hours a day away
    // where summer time changes between, so the day is the one at noon that many days on.
    return markDate(truncation('day', markDatetime({ op: '+', type: 'number', args: [node, markInterval({ op: 'number', type: 'number', value: DAY / 2 })] }), clock))
  }
  if (!Number.isSafeInteger(months)) throw new HogqlMathError('An interval of months, quarters or years is a whole number of them here.')
  if (hogqlFields(left).length > 0 || hogqlProperties(left).length > 0) {
    throw new HogqlMathError("An interval of months or years is added here to now(), today() or toDateTime('…'), not to timestamp or a property's date: compare instead, as in timestamp > now() - interval 1 month.")
  }
  const shifted = addMonths(zoneOffsets(zoneOf(left, clock.zone), clock.now), evaluateHogql(left, () => null) as number, node.op === '+' ? months : -months)
  if (Number.isNaN(shifted)) throw new HogqlMathError('The interval moves the date past the years a date and time can hold.')
  const result = keepZone(left, { op: 'number', type: 'number', value: shifted })
  return isDate(left) ? markDate(result) : result
}

const DAY = 86_400_000

export const COMPARISONS: ReadonlySet<string> = new Set(['=', '!=', '<', '<=', '>', '>='])
/** The aggregations of dates and times: no arithmetic on them. */
const TIME_AGGREGATIONS: ReadonlySet<string> = new Set(['min', 'max', 'any', 'last', 'count', 'uniq'])
const refuse = (detail: string) => new HogqlMathError(detail)

/**
 * Checks where dates and times stand in an expression of a query (whole, compared, or plus or minus an interval;
 * aggregated by `math` with min, max, count or uniq only) and reads a text compared with one as a date and time of the
 * zone.
 */
export function checkDatetimes(expr: HogqlNode, math: HogqlMath | null, clock: QueryClock): void {
  if (isInterval(expr)) throw refuse('An interval is added to or taken from a date and time here, not read alone.')
  checkPlaces(expr, clock)
  if (math && isDatetime(expr) && !TIME_AGGREGATIONS.has(math.aggregation)) throw refuse('Dates and times are aggregated here with min, max, any, count and uniq.')
}

function checkPlaces(node: HogqlNode, clock: QueryClock): void {
  if (!('args' in node)) return
  const args = node.args as HogqlNode[]
  if (COMPARISONS.has(node.op) && args.some(isDatetime)) {
    // A text is read on the wall clock of the date and time it is compared with; a date compared with one of
    // another zone is its day's first instant there, as ClickHouse converts it.
    const time = args.find((arg) => isDatetime(arg) && !isDate(arg))
    const zone = time === undefined ? clock.zone : zoneOf(time, clock.zone)
    for (let i = 0; i < args.length; i++) {
      const arg = args[i]
      if (isDate(arg) && zone !== clock.zone) args[i] = inZone(arg, zone, clock)
      if (isDatetime(arg)) continue
      const ms = arg.op === 'text' ? datetimeMs(arg.value, zone) : null
      if (ms === null) {
        throw refuse(
          arg.op === 'text'
            ? `Cannot read ${JSON.stringify(arg.value)} as a date and time: write it as 2024-01-31, 2024-01-31 12:00:00 or 2024-01-31T12:00:00.123Z.`
            : "timestamp is compared here with another date and time: a text such as '2024-01-31 12:00:00', now(), toDateTime('…'), or one of them plus or minus an interval.",
        )
      }
      // Marked, so that a comparison read twice (a CASE's subject, nullIf's, an -If's condition of a pair) passes again.
      args[i] = markDatetime({ op: 'number', type: 'number', value: ms })
    }
  } else {
    const shifted = isDatetime(node) && (node.op === '+' || node.op === '-')
    args.forEach((arg, i) => {
      // A choice of dates and times (markChoice) holds them where it gives values: not as if()'s condition.
      const chosen = node.op === 'call' && isDatetime(node) && (node.fn !== 'if' || i > 0)
      const allowed = chosen || (shifted && (i === 0 ? isDatetime(arg) : isInterval(arg))) || ((node.op === 'truncate' || node.op === 'calendar' || node.op === 'dayShift') && isDatetime(arg))
      if ((isDatetime(arg) || isInterval(arg)) && !allowed) {
        throw refuse('A date and time (timestamp, now(), toDateTime(…)) is read here whole, compared, or plus or minus an interval (interval 7 day), and an interval only so.')
      }
    })
  }
  for (const arg of args) checkPlaces(arg, clock)
}

/** toStartOfInterval's and dateTrunc's units: a week from Monday. */
const INTERVAL_STARTS = new Map<string, TruncateUnit>([['second', 'second'], ['minute', 'minute'], ['hour', 'hour'], ['day', 'day'], ['week', 'monday'], ['month', 'month'], ['quarter', 'quarter'], ['year', 'year']])
/** The most units toStartOfInterval takes, so that an interval's ms stay whole numbers in both stores. */
const MAX_INTERVAL_STEP = 1_000_000
/** The functions of a fixed interval of minutes. */
const MINUTE_STEPS = new Map([['tostartoffiveminutes', 5], ['tostartoftenminutes', 10], ['tostartoffifteenminutes', 15]])

/**
 * The start of `arg`'s interval of `n` units, ClickHouse's toStartOfInterval: a Date from weeks on (as ClickHouse
 * types it), else a date and time.
 */
function intervalStart(arg: HogqlNode, unit: string, n: number, clock: QueryClock): HogqlNode {
  const node = truncation(INTERVAL_STARTS.get(unit)!, arg, clock, n)
  return unit === 'week' || unit === 'month' || unit === 'quarter' || unit === 'year' ? asDate(node, clock) : node
}

/** The parts of `arg` on the clock's zone, each one node however often it is read (formatted's). */
function parts(arg: HogqlNode, clock: QueryClock): (part: CalendarPart) => HogqlNode {
  const made = new Map<CalendarPart, HogqlNode>()
  return (part) => made.get(part) ?? made.set(part, calendar(part, arg, clock)).get(part)!
}

/** The functions of week numbers: their part, the mode of a call without one (toISOWeek's is mode 3's), and whether a call gives one. */
const WEEKS: Readonly<Record<string, readonly [WeekPart, number, boolean]>> = { toweek: ['week', 0, true], toyearweek: ['yearWeek', 0, true], toisoweek: ['week', 3, false], toisoyear: ['isoYear', 3, false] }

/** toWeek(t[, mode]), toYearWeek(t[, mode]), toISOWeek(t) and toISOYear(t): ClickHouse's week numbers on the project's wall clock (hogql-instants.ts's yearWeek). */
function weekCall(name: string, args: HogqlNode[], clock: QueryClock): HogqlNode {
  const [part, otherwise, moded] = WEEKS[name.toLowerCase()]
  const given = args[1]?.op === 'number' && Number.isInteger(args[1].value) && args[1].value >= 0 && args[1].value <= 9 ? args[1].value : -1
  const mode = args.length === 1 ? otherwise : args.length === 2 && moded ? given : -1
  if (mode < 0 || !isDatetime(args[0])) throw new HogqlMathError(moded ? `${name}() takes a date and time and a mode from 0 to 9 if any here, as in ${name}(timestamp, 3).` : `${name}() takes one date and time here, as in ${name}(timestamp).`)
  return calendar(part, args[0], clock, mode)
}

/** PostHog's names of ClickHouse's parseDateTime64BestEffortOrNull, which toDateTime of a text is too. */
const PARSERS: ReadonlySet<string> = new Set(['parsedatetimebesteffort', 'parsedatetime64besteffort', 'parsedatetime64besteffortornull'])

/**
 * toDateTime(x[, zone]) and the parsers (PARSERS): a text as the date and time it writes (hogql-datetime-text.ts),
 * of the zone given or the project's unless it has its own offset, NULL for one not read (ClickHouse's best effort
 * reads more forms; those are NULL here); a literal is read now, and refused where it is not read. toDateTime also
 * takes a number, seconds from 1970 (a fraction dropped, as a DateTime drops it), and a date and time (itself).
 */
function parsedDatetime(name: string, args: HogqlNode[], clock: QueryClock): HogqlNode {
  const [arg] = args
  const converts = name.toLowerCase() === 'todatetime'
  const seconds = converts && arg?.type === 'number' && !isInterval(arg) && !isDatetime(arg)
  if (args.length < 1 || args.length > 2 || (arg.type !== 'text' && !seconds && !(converts && isDatetime(arg))) || isArray(arg)) {
    const takes = converts ? 'a text, a number of seconds or a date and time' : 'a text'
    throw new HogqlMathError(`${name}() takes ${takes}, and a time zone's name if any, here, as in ${name}(properties.sent_at) or ${name}('2024-01-31 12:00:00', 'Europe/Berlin').`)
  }
  const given = args.length === 2 ? zoneArgument(name, args[1]) : undefined
  const zone = given ?? clock.zone
  // With a zone, the date and time is of it, as ClickHouse's DateTime('zone'): one given moves there (toTimeZone).
  const made = (node: HogqlNode) => (given === undefined ? markDatetime(node) : markZone(node, given))
  // A copy: a Date read as a date and time is its day's start, no longer a Date.
  if (isDatetime(arg)) return given === undefined ? keepZone(arg, { ...arg }) : inZone(arg, given, clock)
  if (seconds) return made({ op: '*', type: 'number', args: [{ op: 'call', fn: 'floor', type: 'number', args: [arg] }, numberNode(1000)] })
  if (arg.op !== 'text') return made({ op: 'parseTime', type: 'number', offsets: zoneOffsets(zone, clock.now), args: [arg] })
  const ms = datetimeMs(arg.value, zone)
  if (ms === null) throw new HogqlMathError(`Cannot read ${JSON.stringify(arg.value)} as a date and time: write it as 2024-01-31, 2024-01-31 12:00:00 or 2024-01-31T12:00:00.123Z.`)
  return made({ op: 'number', type: 'number', value: ms })
}

/**
 * The functions whose last argument may be a time zone, as PostHog takes them: where the date and time it moves
 * stands (now's: none), and where the zone does. f(t, …, 'zone') is f(toTimeZone(t, 'zone'), …), as ClickHouse reads it.
 */
const ZONE_ARGUMENTS: Readonly<Record<string, readonly [number, number]>> = { now: [-1, 0], totimezone: [0, 1], tostartofday: [0, 1], tounixtimestamp: [0, 1], todayofweek: [0, 2], toweek: [0, 2], toyearweek: [0, 2], formatdatetime: [0, 2], datetrunc: [1, 2], date_trunc: [1, 2] }

/** The date and time functions a query reads (datetimeCall), as they are named in refusals. */
export const DATETIME_FUNCTIONS = [
  ...['now', 'today', 'yesterday', 'toDateTime', 'parseDateTimeBestEffort', 'parseDateTime64BestEffort', 'parseDateTime64BestEffortOrNull', 'toDate', 'toStartOfMinute', 'toStartOfHour', 'toStartOfDay', 'toStartOfWeek', 'toMonday', 'toStartOfMonth', 'toStartOfQuarter', 'toStartOfYear'],
  ...['toStartOfInterval', 'dateTrunc', 'date_trunc', 'toStartOfFiveMinutes', 'toStartOfTenMinutes', 'toStartOfFifteenMinutes', 'formatDateTime', 'fromUnixTimestamp'],
  ...['toYear', 'toQuarter', 'toMonth', 'toDayOfMonth', 'toDayOfWeek', 'toDayOfYear', 'toHour', 'toMinute', 'toSecond', 'toUnixTimestamp', 'toYYYYMM', 'toYYYYMMDD', 'dateDiff'],
  ...['toWeek', 'toYearWeek', 'toISOWeek', 'toISOYear', 'toTimeZone', 'timezone', 'timeZoneOf', 'timeZoneOffset'],
  ...['toYYYYMMDDhhmmss', 'toStartOfSecond', 'toLastDayOfMonth', 'toLastDayOfWeek', 'toStartOfISOYear', 'monthName', 'dateName', 'age'],
  ...DATE_SHIFTS,
  ...['toIntervalSecond', 'toIntervalMinute', 'toIntervalHour', 'toIntervalDay', 'toIntervalWeek', 'toIntervalMonth', 'toIntervalQuarter', 'toIntervalYear'],
]
const DATETIME_NAMES = new Set([...DATETIME_FUNCTIONS, 'toString'].map((name) => name.toLowerCase()))
export const isDatetimeFunction = (name: string): boolean => DATETIME_NAMES.has(name.toLowerCase())

/**
 * A query's date and time function (isDatetimeFunction) of its parsed arguments: now(), today() and yesterday() (the
 * dates of the project's wall clock, as toDate(now())), toDateTime('…'), the periods' starts, the parts of a date and
 * time, and dateDiff: ClickHouse's, the unit boundaries crossed from one to the other (its toRelative<unit>Num apart).
 */
export function datetimeCall(name: string, args: HogqlNode[], clock: QueryClock): HogqlNode {
  let lower = name.toLowerCase()
  if (isDateShift(lower)) return dateShift(name, args, clock)
  // timezone('zone', t) is PostgreSQL's toTimeZone(t, 'zone').
  if (lower === 'timezone') [lower, args] = ['totimezone', [...args].reverse()]
  const [at, zoneAt] = Object.hasOwn(ZONE_ARGUMENTS, lower) ? ZONE_ARGUMENTS[lower] : [-1, -1]
  const zone = zoneAt >= 0 && args.length === zoneAt + 1 ? zoneArgument(name, args[zoneAt]) : undefined
  if (zone !== undefined) {
    if (lower === 'now') return markZone({ op: 'number', type: 'number', value: clock.now }, zone)
    args = args.slice(0, zoneAt)
    if (isDatetime(args[at])) args[at] = inZone(args[at], zone, clock)
  }
  if (lower === 'totimezone') {
    const example = name.toLowerCase() === 'timezone' ? "timezone('UTC', timestamp)" : "toTimeZone(timestamp, 'UTC')"
    if (args.length !== 1 || !isDatetime(args[0])) throw new HogqlMathError(`${name}() takes a date and time and a time zone's name here, as in ${example}.`)
    // Without a zone, the project's, as PostHog gives it.
    return zone === undefined ? inZone(args[0], clock.zone, clock) : args[0]
  }
  if (lower === 'now' || lower === 'today' || lower === 'yesterday') {
    if (args.length > 0) throw new HogqlMathError(`${name}() takes no arguments here.`)
    const now = markDatetime({ op: 'number', type: 'number', value: clock.now - (lower === 'yesterday' ? DAY : 0) })
    return lower === 'now' ? now : markDate(truncation('day', now, clock))
  }
  if (lower === 'todatetime' || PARSERS.has(lower)) return parsedDatetime(name, args, clock)
  if (Object.hasOwn(WEEKS, lower)) return weekCall(name, args, clock)
  if (lower === 'datediff' || lower === 'age') {
    const [unit, from, to] = args
    const part = args.length === 3 && unit.op === 'text' ? DIFF_UNITS[unit.value.toLowerCase()] : undefined
    if (part === undefined || !isDatetime(from) || !isDatetime(to)) {
      throw new HogqlMathError(`${name}() takes a unit ('second', 'minute', 'hour', 'day', 'week', 'month', 'quarter' or 'year') and two dates and times here, as in ${name}('day', min(timestamp), max(timestamp)).`)
    }
    // age: the whole units between them (hogql-date-parts.ts); dateDiff: the unit's boundaries crossed.
    return lower === 'age' ? ageNode(part, from, to, clock) : { op: '-', type: 'number', args: [calendar(part, to, clock), calendar(part, from, clock)] }
  }
  if (lower === 'datename') {
    if (args.length !== 2 || args[0].op !== 'text' || !isDatetime(args[1])) throw new HogqlMathError("dateName() takes a part as a text literal and a date and time here, as in dateName('month', timestamp).")
    return dateNameNode(args[0].value, args[1], clock)
  }
  if (lower === 'formatdatetime') {
    const [arg, pattern] = args
    if (args.length !== 2 || !isDatetime(arg) || pattern.op !== 'text') throw new HogqlMathError("formatDateTime() takes a date and time and a pattern as a text literal here, as in formatDateTime(timestamp, '%Y-%m-%d %H:%i').")
    return formatted(pattern.value, parts(arg, clock))
  }
  if (lower === 'tostring') {
    // A Date as ClickHouse writes one; a date and time's text would need to know which are DateTime64 there.
    if (args.length === 1 && isDate(args[0])) return formatted('%Y-%m-%d', parts(args[0], clock))
    if (args.some(isDatetime)) throw new HogqlMathError("toString() of a date and time is not read here: write it with formatDateTime(), as in formatDateTime(timestamp, '%Y-%m-%d %H:%i:%S').")
    return typedCall(FUNCTION_BY_NAME.get('tostring')!, args)
  }
  if (lower.startsWith('tointerval')) {
    const [n] = args
    if (args.length !== 1 || n.op !== 'number' || !Number.isSafeInteger(n.value)) throw new HogqlMathError(`${name}() takes a whole number literal here, as in ${name}(7).`)
    return intervalNode(n.value, lower.slice('tointerval'.length))!
  }
  if (lower === 'tostartofinterval') {
    const interval = args.length === 2 && isDatetime(args[0]) ? INTERVAL_UNITS.get(args[1]) : undefined
    if (interval === undefined || !Number.isSafeInteger(interval.n) || interval.n < 1 || interval.n > MAX_INTERVAL_STEP) {
      throw new HogqlMathError(`toStartOfInterval() takes a date and time and an interval of 1 to ${MAX_INTERVAL_STEP} units here, as in toStartOfInterval(timestamp, interval 15 minute).`)
    }
    return intervalStart(args[0], interval.unit, interval.n, clock)
  }
  if (lower === 'datetrunc' || lower === 'date_trunc') {
    const [unit, arg] = args
    const name = args.length === 2 && unit.op === 'text' && isDatetime(arg) ? unit.value.toLowerCase() : ''
    if (!INTERVAL_STARTS.has(name)) throw new HogqlMathError("dateTrunc() takes a unit ('second', 'minute', 'hour', 'day', 'week', 'month', 'quarter' or 'year') and a date and time here, as in dateTrunc('month', timestamp).")
    return intervalStart(arg, name, 1, clock)
  }
  if (lower === 'fromunixtimestamp') {
    // Seconds from 1970 as the date and time they are (ms here), of a number or a text read as one.
    if (args.length !== 1 || isDatetime(args[0]) || isInterval(args[0])) throw new HogqlMathError('fromUnixTimestamp() takes a number of seconds from 1970 here, as in fromUnixTimestamp(properties.sent_at).')
    return markDatetime({ op: '*', type: 'number', args: [args[0], { op: 'number', type: 'number', value: 1000 }] })
  }
  // ClickHouse's week modes: toStartOfWeek's (toWeek's) start on Monday where the mode is odd, else on Sunday;
  // toDayOfWeek's count Monday 1–7, Monday 0–6, Sunday 0–6 or Sunday 1–7.
  // toLastDayOfWeek(t[, mode]): its week's start (toStartOfWeek's) 6 days on.
  if (lower === 'tolastdayofweek' && args.length === 1) args = [args[0], numberNode(0)]
  if ((lower === 'tostartofweek' || lower === 'todayofweek' || lower === 'tolastdayofweek') && args.length === 2) {
    const most = lower === 'todayofweek' ? 3 : 9
    const mode = args[1].op === 'number' && Number.isInteger(args[1].value) && args[1].value >= 0 && args[1].value <= most ? args[1].value : -1
    if (mode < 0 || !isDatetime(args[0])) throw new HogqlMathError(`${name}() takes a date and time and a mode from 0 to ${most} here, as in ${name}(timestamp, 1).`)
    const start = lower === 'todayofweek' ? null : asDate(truncation(mode % 2 === 1 ? 'monday' : 'week', args[0], clock), clock)
    if (start !== null) return lower === 'tostartofweek' ? start : shiftedDatetime({ op: '+', type: 'number', args: [start, intervalNode(6, 'day')!] }, clock)
    const day = calendar('dayOfWeek', args[0], clock)
    const fromSunday: HogqlNode = { op: 'call', fn: 'modulo', type: 'number', args: [day, numberNode(7)] }
    return [day, { op: '-', type: 'number', args: [day, numberNode(1)] }, fromSunday, { op: '+', type: 'number', args: [fromSunday, numberNode(1)] }][mode] as HogqlNode
  }
  // toDate(text): the text read as a date and time of the zone (toDateTime's), then its day taken.
  if (lower === 'todate' && args.length === 1 && args[0].type === 'text' && !isArray(args[0])) args = [parsedDatetime(name, args, clock)]
  if (args.length !== 1 || !isDatetime(args[0])) throw new HogqlMathError(`${name}() takes one date and time here, as in ${name}(timestamp)${lower === 'todate' ? " or toDate('2024-01-31')" : ''}.`)
  // A date has no zone in ClickHouse, which refuses to name or measure one.
  if ((lower === 'timezoneof' || lower === 'timezoneoffset') && isDate(args[0])) throw new HogqlMathError(`${name}() takes a date and time here, not a date, as in ${name}(timestamp).`)
  if (lower === 'timezoneof') return { op: 'text', type: 'text', value: zoneOf(args[0], clock.zone) }
  if (lower === 'monthname') return formatted('%M', parts(args[0], clock))
  if (lower === 'tolastdayofmonth') return lastDayOfMonth(args[0], clock)
  if (lower === 'tostartofisoyear') return isoYearStart(args[0], clock)
  const part = CALENDAR_PARTS[lower]
  if (part !== undefined) return calendar(part, args[0], clock)
  // toYYYYMM(DD(hhmmss)): the year, month (day, hour, minute and second) as one number's digits.
  const digits = { toyyyymm: ['year', 'month'], toyyyymmdd: ['year', 'month', 'dayOfMonth'], toyyyymmddhhmmss: ['year', 'month', 'dayOfMonth', 'hour', 'minute', 'second'] }[lower] as CalendarPart[] | undefined
  const hundred: HogqlNode = { op: 'number', type: 'number', value: 100 }
  if (digits) return digits.map((p) => calendar(p, args[0], clock)).reduce((sum, next) => ({ op: '+', type: 'number', args: [{ op: '*', type: 'number', args: [sum, hundred] }, next] }))
  if (MINUTE_STEPS.has(lower)) return truncation('minute', args[0], clock, MINUTE_STEPS.get(lower))
  const node = truncation(TRUNCATIONS[lower], args[0], clock)
  return DATE_TRUNCATIONS.has(lower) ? asDate(node, clock) : node
}

