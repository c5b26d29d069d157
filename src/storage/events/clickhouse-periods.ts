/**
 * A query's period start (the `truncate` node, hogql-instants.ts's truncateMs) and parts of a date and time (the
 * `calendar` node, calendarPart) as ClickHouse SQL: the same steps in integer ms, the zone's offset at an instant as
 * the count of its changes up to it (offsetAtSql). Not CASEs, as days.ts's offsetSql writes: ClickHouse writes an
 * alias's whole expression wherever it is named, and a CASE of a hundred changes naming the first offset in each of
 * its hundred WHENs was past 18.16's elements of a query. A NULL instant counts as 0 (a lambda must give UInt8): its
 * start is NULL anyway.
 */
import type { HogqlNode, WeekPart } from './hogql-math.js'
import { weekFlags, weekMode } from './hogql-instants.js'
import { DATETIME_PATTERN } from './hogql-datetime-text.js'
import { hogqlTextSql } from './hogql-values.js'
import { lambdaSql, NULL_NUMBER } from './clickhouse-hogql-calls.js'

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
export function calendarSql(node: HogqlNode & { op: 'calendar' }, operand: string, bind: Bind, fresh: () => string): string {
  const { part, offsets } = node
  if (part === 'relSecond') return `toFloat64(floor(${operand} / 1000))`
  if (part === 'millisecond') return `toFloat64(toInt64(floor(${operand})) % 1000)`
  if (part === 'relMinute' || part === 'relHour') return `toFloat64(floor((${operand} - ${Math.trunc(offsets[0][1])}) / ${part === 'relMinute' ? 60_000 : 3_600_000}))`
  const [msDef, ms] = bind(operand)
  if (part === 'offset') return `if(isNull(${msDef}), ${NULL_NUMBER}, toFloat64(${offsetAtSql(offsets, `toInt64(floor(${ms}))`)} / 1000))`
  const wall = `(${msDef} + ${offsetAtSql(offsets, `toInt64(floor(${ms}))`)})`
  if (part === 'hour' || part === 'minute' || part === 'second') {
    const [size, unit] = part === 'hour' ? [86_400_000, 3_600_000] : part === 'minute' ? [3_600_000, 60_000] : [60_000, 1000]
    const [wallDef, name] = bind(wall)
    return `toFloat64(floor((${wallDef} - floor(${name} / ${size}) * ${size}) / ${unit}))`
  }
  const day = `toInt64(floor(${wall} / 86400000))`
  if (part === 'week' || part === 'yearWeek' || part === 'isoYear') return `toFloat64(${weekSql(day, weekMode(part, node.mode ?? 0), part, fresh)})`
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

/**
 * parsedInstant's steps (hogql-datetime-text.ts) on `text` (SQL of a Nullable(String)): the pattern's groups
 * joined by `|`, the date's day count by Howard Hinnant's days_from_civil (any year 0–9999, as JS's Date), and the
 * wall time read as wallInstant reads it. Each value read more than once is a lambda's argument, not an alias:
 * 18.16 writes an alias's whole expression wherever it is named, and the offsets' arrays named in names named in
 * names passed its 2,000,000 elements of a query. A text the pattern does not take is read as 1970-01-01 (toInt64
 * of an empty group is an error, and ClickHouse computes both sides of an if) and gives NULL.
 */
export function parsedTimeSql(node: HogqlNode & { op: 'parseTime' }, text: string, fresh: () => string): string {
  const pattern = hogqlTextSql(DATETIME_PATTERN)
  const [s, m, g, ymd, hms, frac, own, wall] = Array.from({ length: 8 }, fresh)
  const [y, mo, d] = [`intDiv(${ymd}, 10000)`, `(intDiv(${ymd}, 100) % 100)`, `(${ymd} % 100)`]
  const [h, mi, sec] = [`intDiv(${hms}, 10000)`, `(intDiv(${hms}, 100) % 100)`, `(${hms} % 100)`]
  // Years from March 1st, so that a leap day is a year's last; eras of 400 years (146,097 days) from year 0.
  const shifted = `(${y} - (${mo} <= 2))`
  const era = `(intDiv(${shifted} + 400, 400) - 1)`
  const yoe = `(${shifted} - ${era} * 400)`
  const doy = `(intDiv(153 * ((${mo} + 9) % 12) + 2, 5) + ${d} - 1)`
  const days = `(${era} * 146097 + ${yoe} * 365 + intDiv(${yoe}, 4) - intDiv(${yoe}, 100) + ${doy} - 719468)`
  const leap = `((${y} % 4 = 0 AND ${y} % 100 != 0) OR ${y} % 400 = 0)`
  const valid = `${m} AND ${mo} BETWEEN 1 AND 12 AND ${d} BETWEEN 1 AND if(${mo} = 2, 28 + ${leap}, 31 - ((${mo} - 1) % 7) % 2) AND ${h} <= 23 AND ${mi} <= 59 AND ${sec} <= 59`
  const zoned = wallInstantSql(node.offsets, wall, fresh)
  const written = `if(${own} = 'Z', 0, if(substring(${own}, 1, 1) = '-', -1, 1) * (toInt64(concat('0', substring(${own}, 2, 2))) * 60 + toInt64(concat('0', substring(${own}, 4, 2)))))`
  const instant = lambdaSql([wall], [`${days} * 86400000 + ${h} * 3600000 + ${mi} * 60000 + ${sec} * 1000`], `if(${own} = '', ${zoned}, ${wall} - ${written} * 60000)`)
  const parts = [`toInt64(${g}[1])`, `toInt64(substring(concat(${g}[2], '000000'), 1, 6))`, `toInt64(substring(concat(${g}[3], '000000000'), 1, 9))`, `replaceAll(${g}[4], ':', '')`]
  const read = lambdaSql([ymd, hms, frac, own], parts, `if(${valid}, toFloat64(${instant}) + ${frac} / 1000000, CAST(NULL AS Nullable(Float64)))`)
  const groups = `splitByChar('|', replaceRegexpOne(if(${m}, ${s}, '1970-01-01'), ${pattern}, ${hogqlTextSql('\\1\\2\\3|\\4\\5\\6|\\7|\\8')}))`
  return lambdaSql([s], [`ifNull(${text}, '')`], lambdaSql([m], [`match(${s}, ${pattern})`], lambdaSql([g], [groups], read)))
}

/** wallInstant's steps (hogql-datetime-text.ts) on `wall`, a name (SQL of an Int64 of ms read as if UTC). */
function wallInstantSql(offsets: Offsets, wall: string, fresh: () => string): string {
  const [before, after] = [fresh(), fresh()]
  return lambdaSql([before], [offsetAtSql(offsets, `(${wall} - 86400000)`)], lambdaSql([after], [offsetAtSql(offsets, `(${wall} - ${before})`)], `if(${offsetAtSql(offsets, `(${wall} - ${after})`)} = ${after}, ${wall} - ${after}, ${wall} - ${before})`))
}

/** A wallTime node's instant of its operand (SQL of Nullable(Float64) ms of a wall time). */
export function wallTimeSql(node: HogqlNode & { op: 'wallTime' }, operand: string, fresh: () => string): string {
  const wall = fresh()
  return lambdaSql([wall], [`toInt64(${operand})`], `toFloat64(${wallInstantSql(node.offsets, wall, fresh)})`)
}

/**
 * yearWeek's steps (hogql-instants.ts) on `day` (SQL of an Int64: days from 1970-01-01), the mode's flags known
 * here; the values read more than once are lambdas' arguments, as in parsedTimeSql.
 */
function weekSql(day: string, mode: number, part: WeekPart, fresh: () => string): string {
  const { mondayFirst, weekYear, firstWeekday } = weekFlags(mode)
  const dow = (x: string) => `((((${x}) + 3) % 7 + 7) % 7 + 1)`
  const diy = (y: string) => `if(((${y}) % 4 = 0 AND (${y}) % 100 != 0) OR (${y}) % 400 = 0, 366, 365)`
  const date = (x: string) => `(toDate('1970-01-01') + (${x}))`
  const [d, y, mo, dom, doy] = Array.from({ length: 5 }, fresh)
  const answer = (year: string, week: string) => (part === 'week' ? week : part === 'yearWeek' ? `(${year}) * 100 + (${week})` : year)
  let body: string
  if ((mode & 8) !== 0) {
    const year = fresh()
    const start = (x: string) => (mondayFirst ? `(${x}) - ${dow(x)} + 1` : `if(${dow(x)} = 7, ${x}, (${x}) - ${dow(x)})`)
    const jan1 = `if(${year} = ${y}, ${d} - ${doy} + 1, ${d} - ${doy} + 1 + ${diy(y)})`
    body = lambdaSql([year], [`toInt64(toYear(${date(`${d} + 7 - ${dow(`${d} + ${mondayFirst ? 0 : 1}`)}`)}))`], answer(year, `intDiv((${start(d)}) - (${start(jan1)}), 7) + 1`))
  } else {
    const [wd0, jan, year1, start1, wd1, days] = Array.from({ length: 6 }, fresh)
    const late = (w: string) => (firstWeekday ? `${w} != 0` : `${w} >= 4`)
    const early = weekYear ? '0' : `${jan} AND ${late(wd0)}`
    const next = `(${wd1} + ${diy(year1)}) % 7`
    const nextYear = `(${weekYear ? '1' : jan}) AND ${days} >= 364 AND ${firstWeekday ? `${next} = 0` : `${next} < 4`}`
    const result = answer(`if(${early}, ${y}, if(${nextYear}, ${year1} + 1, ${year1}))`, `if(${early}, 0, if(${nextYear}, 1, intDiv(${days}, 7) + 1))`)
    const counted = lambdaSql([days], [`if(${late(wd1)}, ${d} - (${start1} + 7 - ${wd1}), ${d} - (${start1} - ${wd1}))`], result)
    // January's days before week 1 count in the year before, from its January 1.
    const before = [`if(${jan}, ${y} - 1, ${y})`, `if(${jan}, ${d} - ${doy} + 1 - ${diy(`${y} - 1`)}, ${d} - ${doy} + 1)`, `if(${jan}, (${wd0} + 371 - ${diy(`${y} - 1`)}) % 7, ${wd0})`]
    body = lambdaSql([wd0], [`${dow(`${d} - ${doy} + 1 + ${mondayFirst ? 0 : 1}`)} - 1`], lambdaSql([jan], [`${mo} = 1 AND ${dom} <= 7 - ${wd0}`], lambdaSql([year1, start1, wd1], before, counted)))
  }
  return lambdaSql([d], [day], lambdaSql([y, mo, dom, doy], [`toInt64(toYear(${date(d)}))`, `toMonth(${date(d)})`, `toDayOfMonth(${date(d)})`, `toInt64(toDayOfYear(${date(d)}))`], body))
}
