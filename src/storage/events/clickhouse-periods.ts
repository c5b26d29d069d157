/**
 * A query's period start (the `truncate` node, hogql-instants.ts's truncateMs) and parts of a date and time (the
 * `calendar` node, calendarPart) as ClickHouse SQL: the same steps in integer ms, the zone's offset at an instant as
 * the count of its changes up to it (offsetAtSql). Not CASEs, as days.ts's offsetSql writes: ClickHouse writes an
 * alias's whole expression wherever it is named, and a CASE of a hundred changes naming the first offset in each of
 * its hundred WHENs was past 18.16's elements of a query. A NULL instant counts as 0 (a lambda must give UInt8): its
 * start is NULL anyway.
 */
import type { HogqlNode } from './hogql-math.js'

type Offsets = ReadonlyArray<readonly [number, number]>
type Bind = (sql: string) => [string, string]

/** The zone's offset at the instant `ms` (SQL of Int64 ms). */
function offsetAtSql(offsets: Offsets, ms: string): string {
  if (offsets.length <= 1) return String(Math.trunc(offsets[0]?.[1] ?? 0))
  const ats = `[${offsets.map(([at]) => Math.trunc(at)).join(', ')}]`
  const values = `[${offsets.map(([, offset]) => Math.trunc(offset)).join(', ')}]`
  return `arrayElement(${values}, greatest(arrayCount(at -> at <= ifNull(${ms}, 0), ${ats}), 1))`
}

/** `operand` the instant's SQL (Nullable(Float64), ms); `bind` names SQL once for the uses after (the compiler's). */
export function truncateSql(node: HogqlNode & { op: 'truncate' }, operand: string, bind: Bind): string {
  const { unit, step = 1, offsets } = node
  if (unit === 'second' || unit === 'minute') {
    const size = (unit === 'second' ? 1000 : 60_000) * step
    return `(floor(${operand} / ${size}) * ${size})`
  }
  const [msDef, ms] = bind(`toInt64(${operand})`)
  const [offDef, off] = bind(offsetAtSql(offsets, ms))
  const [wallDef, wall] = bind(`(${msDef} + ${offDef})`)
  const [dayDef, day] = bind(`toInt64(floor(${wallDef} / 86400000))`)
  let start: string
  if (unit === 'hour') start = `${dayDef} * 86400000 + toInt64(floor((${wall} - ${day} * 86400000) / ${3_600_000 * step})) * ${3_600_000 * step}`
  else if (unit === 'day') start = `toInt64(floor(${dayDef} / ${step})) * ${step * 86_400_000}`
  else if (unit === 'week') start = `(${dayDef} - (((${day} + 4) % 7) + 7) % 7) * 86400000`
  else if (unit === 'monday') start = `(4 + toInt64(floor((${dayDef} - 4) / ${7 * step})) * ${7 * step}) * 86400000`
  else {
    // Date arithmetic, which no server time zone touches; months counted from 1900, years from year 0. A start before
    // 1970 is 1970-01-01, as truncateMs saturates it (the Date arithmetic would wrap there).
    const [dateDef, date] = bind(`(toDate('1970-01-01') + ${dayDef})`)
    const [size, first] = unit === 'year' ? [step, 1970] : [(unit === 'quarter' ? 3 : 1) * step, 840]
    const [countDef, count] = bind(unit === 'year' ? `toInt64(toYear(${dateDef}))` : `toInt64((toYear(${dateDef}) - 1900) * 12 + toMonth(${date}) - 1)`)
    const back = `${unit === 'year' ? 'addYears(toStartOfYear' : 'addMonths(toStartOfMonth'}(${date}), -(${count} % ${size}))`
    start = `if(${countDef} - ${count} % ${size} < ${first}, 0, toInt64(${back} - toDate('1970-01-01')) * 86400000)`
  }
  const [startDef, startName] = bind(start)
  return `toFloat64(${startDef} - ${offsetAtSql(offsets, `(${startName} - ${off})`)})`
}

/** shiftedDays's steps (hogql-instants.ts): the wall time `days` on, less the offset the old one points at. */
export function dayShiftSql(node: HogqlNode & { op: 'dayShift' }, operand: string, bind: Bind): string {
  const [msDef, ms] = bind(operand)
  const [offDef, off] = bind(offsetAtSql(node.offsets, `toInt64(floor(${ms}))`))
  const [wallDef, wall] = bind(`(${msDef} + ${offDef} + ${node.days * 86_400_000})`)
  return `(${wallDef} - ${offsetAtSql(node.offsets, `toInt64(floor(${wall} - ${off}))`)})`
}

/** calendarPart's steps; floor, not toInt64, for what is cut below the second or the day (as Math.floor). */
export function calendarSql(node: HogqlNode & { op: 'calendar' }, operand: string, bind: Bind): string {
  const { part, offsets } = node
  if (part === 'relSecond') return `toFloat64(floor(${operand} / 1000))`
  if (part === 'millisecond') return `toFloat64(toInt64(floor(${operand})) % 1000)`
  if (part === 'relMinute' || part === 'relHour') return `toFloat64(floor((${operand} + ${Math.trunc(offsets[0][1])}) / ${part === 'relMinute' ? 60_000 : 3_600_000}))`
  const [msDef, ms] = bind(operand)
  const wall = `(${msDef} + ${offsetAtSql(offsets, `toInt64(floor(${ms}))`)})`
  if (part === 'hour' || part === 'minute' || part === 'second') {
    const [size, unit] = part === 'hour' ? [86_400_000, 3_600_000] : part === 'minute' ? [3_600_000, 60_000] : [60_000, 1000]
    const [wallDef, name] = bind(wall)
    return `toFloat64(floor((${wallDef} - floor(${name} / ${size}) * ${size}) / ${unit}))`
  }
  const day = `toInt64(floor(${wall} / 86400000))`
  if (part === 'dayOfWeek') return `toFloat64((((${day} + 3) % 7) + 7) % 7 + 1)`
  if (part === 'relDay') return `toFloat64(${day})`
  if (part === 'relWeek') return `toFloat64(floor((${day} + 3) / 7))`
  // Date functions, which no server time zone touches.
  const [dateDef, date] = bind(`(toDate('1970-01-01') + ${day})`)
  const sql: Record<typeof part, string> = {
    year: `toYear(${dateDef})`,
    relYear: `toYear(${dateDef})`,
    quarter: `toQuarter(${dateDef})`,
    month: `toMonth(${dateDef})`,
    dayOfMonth: `toDayOfMonth(${dateDef})`,
    dayOfYear: `toDayOfYear(${dateDef})`,
    relMonth: `(toYear(${dateDef}) * 12 + toMonth(${date}))`,
    relQuarter: `(toYear(${dateDef}) * 4 + intDiv(toMonth(${date}) - 1, 3))`,
  }
  return `toFloat64(${sql[part]})`
}
