/**
 * The texts of dates and times HogQL reads (pure): a literal's (`timestamp > '2024-01-31'`, toDateTime('…')) at
 * planning, and a value's (toDateTime(properties.sent_at), parseDateTimeBestEffort) on every row, in Node here and
 * as the same steps in ClickHouse's SQL (clickhouse-periods.ts's parsedTimeSql, which reads DATETIME_PATTERN).
 */
import { wallToInstant } from '../../common/time-zones.js'
import { offsetAt } from './days.js'

type Offsets = ReadonlyArray<readonly [number, number]>

/**
 * `2024-01-31`, `2024-01-31 12:00[:00[.123456789]]` (or with a T), then its own offset if any (`Z`, `+01`, `+0100`,
 * `+01:00`), with ASCII spaces around; groups: year, month, day, hour, minute, second, fraction, offset. Written
 * for RE2 as well as JS: ClickHouse reads the same pattern.
 */
export const DATETIME_PATTERN = '^[\\t\\n\\f\\r ]*(\\d{4})-(\\d{2})-(\\d{2})(?:[ T](\\d{2}):(\\d{2})(?::(\\d{2})(?:\\.(\\d{1,9}))?)?)?[\\t\\n\\f\\r ]*(Z|[+-]\\d{2}(?::?\\d{2})?)?[\\t\\n\\f\\r ]*$'
const DATETIME = new RegExp(DATETIME_PATTERN)

/** A text's date and time: its wall time (ms, its fields read as if UTC), the part below the ms, and its own offset (ms east of UTC) if written. */
interface DatetimeText {
  wall: number
  sub: number
  offset: number | null
}

/** The text's date and time, or null for any other text or an impossible date or time (2024-02-30, 24:00). */
function datetimeText(text: string): DatetimeText | null {
  const m = DATETIME.exec(text)
  if (m === null) return null
  const [, y, mo, d, h = '0', mi = '0', sec = '0', fraction = '', offset] = m
  const wall = new Date(0)
  wall.setUTCFullYear(Number(y), Number(mo) - 1, Number(d))
  wall.setUTCHours(Number(h), Number(mi), Number(sec), 0)
  // Date rolls 2024-02-30 over to March; ClickHouse refuses it, and so is it refused here.
  if (wall.getUTCMonth() !== Number(mo) - 1 || wall.getUTCDate() !== Number(d) || Number(h) > 23 || Number(mi) > 59 || Number(sec) > 59) return null
  // Nanoseconds over a million, each exact: the SQL divides the same integers.
  const sub = Number(fraction.padEnd(9, '0')) / 1e6
  if (offset === undefined) return { wall: wall.getTime(), sub, offset: null }
  const digits = offset.replace(':', '')
  const minutes = offset === 'Z' ? 0 : (offset[0] === '-' ? -1 : 1) * (Number(digits.slice(1, 3)) * 60 + Number(digits.slice(3, 5) || '0'))
  return { wall: wall.getTime(), sub, offset: minutes * 60_000 }
}

/**
 * A literal's date and time as an instant (ms, with a fraction below the ms kept, so that comparisons with stored
 * ms hold as they would in µs) of `zone` unless it has its own offset; null where datetimeText reads none.
 */
export function datetimeMs(text: string, zone: string): number | null {
  const read = datetimeText(text)
  if (read === null) return null
  return (read.offset === null ? wallToInstant(zone, read.wall) : read.wall - read.offset) + read.sub
}

/**
 * A wall time as an instant on a zone's offsets (`[at, offset]` from each instant on), as wallToInstant reads one
 * (Python's fold=0): a repeated time is its first occurrence, a skipped one is read with the offset from before the
 * gap. The offset a day before stands for "before": no zone changes twice within a day.
 */
export function wallInstant(wall: number, offsets: Offsets): number {
  const before = offsetAt(offsets, wall - 86_400_000)
  const after = offsetAt(offsets, wall - before)
  return offsetAt(offsets, wall - after) === after ? wall - after : wall - before
}

/** A value's date and time (a `parseTime` node's) as an instant: datetimeMs's, on the zone's offsets; null for a text it does not read. */
export function parsedInstant(text: string | null, offsets: Offsets): number | null {
  const read = text === null ? null : datetimeText(text)
  if (read === null) return null
  return (read.offset === null ? wallInstant(read.wall, offsets) : read.wall - read.offset) + read.sub
}
