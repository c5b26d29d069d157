/**
 * ClickHouse's functions that move a date and time by a number of units, as PostHog's HogQL names them:
 * `dateAdd('unit', n, t)` (`date_add`), `dateSub` (`date_sub`), `add<Unit>s(t, n)`, `subtract<Unit>s(t, n)`,
 * `timestampAdd(t, interval)` and `timestampSub` (`timestamp_add`, `timestamp_sub`). Each is the date and time plus or
 * minus `interval n unit` (hogql-datetime.ts's shiftedDatetime), so a query reads `dateAdd('day', 7, timestamp)` as it
 * reads `timestamp + interval 7 day`, with the same bounds: n a whole number literal, months and longer added to
 * constants only.
 */
import type { QueryClock } from './hogql-clock.js'
import { intervalNode, shiftedDatetime } from './hogql-datetime.js'
import { isDatetime, isInterval } from './hogql-time-marks.js'
import type { HogqlNode } from './hogql-math.js'
import { HogqlMathError } from './hogql-tokens.js'

const UNITS = ['second', 'minute', 'hour', 'day', 'week', 'month', 'quarter', 'year']
const BY_UNIT = UNITS.flatMap((unit) => [`add${unit[0].toUpperCase()}${unit.slice(1)}s`, `subtract${unit[0].toUpperCase()}${unit.slice(1)}s`])
export const DATE_SHIFTS = ['dateAdd', 'date_add', 'dateSub', 'date_sub', 'timestampAdd', 'timestamp_add', 'timestampSub', 'timestamp_sub', ...BY_UNIT]
const NAMES = new Set(DATE_SHIFTS.map((name) => name.toLowerCase()))
export const isDateShift = (name: string): boolean => NAMES.has(name.toLowerCase())

/** A whole number literal, negative ones too (`-7` is read as the negation of 7). */
function wholeNumber(node: HogqlNode | undefined): number | null {
  if (node?.op === 'number' && Number.isSafeInteger(node.value)) return node.value
  const inner = node?.op === 'negate' ? wholeNumber(node.args[0]) : null
  return inner === null ? null : -inner
}

export function dateShift(name: string, args: HogqlNode[], clock: QueryClock): HogqlNode {
  const lower = name.toLowerCase()
  const minus = /^(date_?sub|timestamp_?sub|subtract)/.test(lower)
  let shifted: HogqlNode | undefined
  let interval: HogqlNode | null = null
  if (lower.startsWith('date')) {
    const [unit, n, t] = args
    const count = wholeNumber(n)
    if (args.length === 3 && unit.op === 'text' && count !== null && UNITS.includes(unit.value.toLowerCase())) [shifted, interval] = [t, intervalNode(count, unit.value)]
    if (!shifted || !isDatetime(shifted)) throw new HogqlMathError(`${name}() takes a unit ('second' … 'year'), a whole number literal and a date and time here, as in ${name}('day', 7, timestamp).`)
  } else if (lower.startsWith('timestamp')) {
    const [t, i] = args
    if (args.length !== 2 || !isDatetime(t) || !isInterval(i)) throw new HogqlMathError(`${name}() takes a date and time and an interval here, as in ${name}(timestamp, interval 7 day).`)
    ;[shifted, interval] = [t, i]
  } else {
    const [t, n] = args
    const count = wholeNumber(n)
    if (args.length !== 2 || !isDatetime(t) || count === null) throw new HogqlMathError(`${name}() takes a date and time and a whole number literal here, as in ${name}(timestamp, 7).`)
    ;[shifted, interval] = [t, intervalNode(count, lower.replace(/^(add|subtract)/, ''))]
  }
  return shiftedDatetime({ op: minus ? '-' : '+', type: 'number', args: [shifted, interval!] }, clock)
}
