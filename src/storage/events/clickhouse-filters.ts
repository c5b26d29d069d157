/**
 * EventFilter → a ClickHouse WHERE clause. Values are inlined through quote() because 18.16 has no query
 * parameters. Property text forms match the SQLite store: strings unquoted, other JSON as written, JSON
 * null and missing keys as NULL. On servers without JSONExtract (before 19.3) the visitParam functions are
 * used; they find a key at any nesting level, a documented limitation of those old servers.
 */
import { quote, type ServerFeatures } from './clickhouse-schema.js'
import type { EventFilter, EventPropertyFilter } from './types.js'

export function propertyTextExpr(key: string, f: ServerFeatures): string {
  const k = quote(key)
  if (f.jsonExtract) {
    return `if(JSONHas(properties, ${k}) AND JSONType(properties, ${k}) != 'Null', if(JSONType(properties, ${k}) = 'String', JSONExtractString(properties, ${k}), JSONExtractRaw(properties, ${k})), NULL)`
  }
  return `if(visitParamHas(properties, ${k}) AND visitParamExtractRaw(properties, ${k}) != 'null', if(substring(visitParamExtractRaw(properties, ${k}), 1, 1) = '"', visitParamExtractString(properties, ${k}), visitParamExtractRaw(properties, ${k})), NULL)`
}

/** Milliseconds since the epoch of a time column. */
export function msExpr(column: 'timestamp' | 'created_at', f: ServerFeatures): string {
  if (f.dateTime64) return `toUnixTimestamp64Milli(${column})`
  return column === 'timestamp' ? 'timestamp_ms' : 'toInt64(created_at) * 1000'
}

function textOf(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value)
}

function propertyCondition(filter: EventPropertyFilter, f: ServerFeatures): string {
  const v = propertyTextExpr(filter.key, f)
  const values = Array.isArray(filter.value) ? filter.value : [filter.value]
  const list = values.filter((x) => x !== null && x !== undefined).map((x) => quote(textOf(x)))
  switch (filter.operator) {
    case 'exact':
      return list.length === 0 ? '0' : `ifNull(${v} IN (${list.join(', ')}), 0)`
    case 'is_not':
      return list.length === 0 ? '1' : `ifNull(${v} NOT IN (${list.join(', ')}), 1)`
    case 'icontains':
      return `ifNull(positionCaseInsensitiveUTF8(${v}, ${quote(textOf(filter.value))}) > 0, 0)`
    case 'not_icontains':
      return `ifNull(positionCaseInsensitiveUTF8(${v}, ${quote(textOf(filter.value))}) = 0, 1)`
    case 'is_set':
      return `isNotNull(${v})`
    case 'is_not_set':
      return `isNull(${v})`
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte': {
      const op = { gt: '>', gte: '>=', lt: '<', lte: '<=' }[filter.operator]
      const n = Number(filter.value)
      if (!Number.isFinite(n)) return '0'
      return `ifNull(toFloat64OrNull(${v}) ${op} ${n}, 0)`
    }
  }
}

function timeBound(ms: number, op: '>=' | '<', f: ServerFeatures): string {
  const bounded = Math.min(Math.max(Math.trunc(ms), 0), 4294967294000)
  if (f.dateTime64) return `timestamp ${op} toDateTime64(${bounded / 1000}, 3, 'UTC')`
  // timestamp_ms is exact; the DateTime comparison lets ClickHouse skip partitions.
  const seconds = Math.floor(bounded / 1000)
  const coarse = op === '>=' ? `timestamp >= toDateTime(${seconds})` : `timestamp <= toDateTime(${seconds})`
  return `${coarse} AND timestamp_ms ${op} ${bounded}`
}

export function compileClickHouseWhere(filter: EventFilter, f: ServerFeatures): string {
  const parts = [`team_id = ${Math.trunc(filter.teamId)}`]
  if (filter.event !== undefined) {
    const names = typeof filter.event === 'string' ? [filter.event] : [...filter.event]
    parts.push(names.length === 0 ? '0' : `event IN (${names.map(quote).join(', ')})`)
  }
  if (filter.distinctId !== undefined) parts.push(`distinct_id = ${quote(filter.distinctId)}`)
  if (filter.after !== undefined) parts.push(timeBound(filter.after, '>=', f))
  if (filter.before !== undefined) parts.push(timeBound(filter.before, '<', f))
  for (const p of filter.properties ?? []) parts.push(propertyCondition(p, f))
  return parts.join(' AND ')
}
