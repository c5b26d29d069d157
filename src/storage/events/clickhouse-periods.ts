/**
 * A query's period start (the `truncate` node, hogql-datetime.ts's truncateMs) as ClickHouse SQL: the same steps in
 * integer ms, the zone's offset at an instant as the count of its changes up to it. Not CASEs, as days.ts's offsetSql
 * writes: ClickHouse writes an alias's whole expression wherever it is named, and a CASE of a hundred changes naming
 * the first offset in each of its hundred WHENs was past 18.16's elements of a query. A NULL instant counts as 0 (a
 * lambda must give UInt8): its start is NULL anyway.
 */
import type { HogqlNode } from './hogql-math.js'

/** `operand` the instant's SQL (Nullable(Float64), ms); `bind` names SQL once for the uses after (the compiler's). */
export function truncateSql(node: HogqlNode & { op: 'truncate' }, operand: string, bind: (sql: string) => [string, string]): string {
  const { unit, offsets } = node
  const ats = `[${offsets.map(([at]) => Math.trunc(at)).join(', ')}]`
  const values = `[${offsets.map(([, offset]) => Math.trunc(offset)).join(', ')}]`
  const offsetSql = (ms: string) => (offsets.length <= 1 ? String(Math.trunc(offsets[0]?.[1] ?? 0)) : `arrayElement(${values}, greatest(arrayCount(at -> at <= ifNull(${ms}, 0), ${ats}), 1))`)
  const [msDef, ms] = bind(`toInt64(${operand})`)
  const [offDef, off] = bind(offsetSql(ms))
  const wall = `(${msDef} + ${offDef})`
  let start: string
  if (unit === 'minute' || unit === 'hour') {
    const size = unit === 'minute' ? 60_000 : 3_600_000
    start = `toInt64(floor(${wall} / ${size})) * ${size}`
  } else {
    const [dayDef, day] = bind(`toInt64(floor(${wall} / 86400000))`)
    if (unit === 'day') start = `${dayDef} * 86400000`
    else if (unit === 'week') start = `(${dayDef} - (((${day} + 4) % 7) + 7) % 7) * 86400000`
    // Date arithmetic, which no server time zone touches.
    else start = `toInt64(toStartOfMonth(toDate('1970-01-01') + ${dayDef}) - toDate('1970-01-01')) * 86400000`
  }
  const [startDef, startName] = bind(start)
  return `toFloat64(${startDef} - ${offsetSql(`(${startName} - ${off})`)})`
}
