/**
 * EventFilter → a ClickHouse WHERE clause. Values are inlined through quote() because 18.16 has no query
 * parameters. Property text forms match the SQLite store: strings unquoted, other JSON as written, JSON
 * null and missing keys as NULL; only top-level keys count, as in SQLite and PostHog.
 */
import { createHash } from 'node:crypto'
import { chainHrefExpr, chainValuesExpr, clickHouseActionCondition } from './clickhouse-actions.js'
import { hogqlConditionSql } from './clickhouse-hogql.js'
import { matchSql, quote, type ServerFeatures } from './clickhouse-schema.js'
import { textNumberSql } from './numbers.js'
import type { PropertyPath } from './hogql-math.js'
import type { EventFilter, EventPropertyFilter, PropertyNode } from './types.js'

/**
 * Servers without JSONExtract (before 19.3, such as Debian's 18.16) only have the visitParam functions, which
 * take the first `"key":` at any depth: `plan` would match an event's `$set.plan`. Where that first `"key":`
 * may be nested (a bracket comes before it), they read a copy of the properties whose nested objects and
 * arrays are emptied: the text cut into string literals, brackets and the rest, each token's depth summed from
 * the brackets, only the tokens at the top level kept (with the brackets of a nested value, which stays `{}` or
 * `[]`). 18.16 evaluates both branches of an `if`, so the copy is made from a substring that is empty on the
 * other rows. On 300,000 events of 2.2 KB, a filter read ≈0.6–1.0 s with visitParam alone, ≈1.2 s this way when
 * the key came before any bracket and ≈4–10 s when `$set` came first (where visitParam had matched every event
 * instead of half).
 */
const TOKENS = quote('"(?:[^"\\\\]|\\\\.)*"|[{}\\[\\]]|[^"{}\\[\\]]+')

function topLevelOf(text: string): string {
  // The lambdas' names are ClickHouse's aliases too, seen by the whole query: a short one (`d`) clashed with a
  // column the SELECT named so (the events' actors).
  return `arrayStringConcat(arrayFilter((_tok, _depth) -> _depth <= 1 OR (_depth = 2 AND (_tok = '{' OR _tok = '[')),
  extractAll(${text}, ${TOKENS}),
  arrayCumSum(arrayMap(_tok -> multiIf(_tok = '{' OR _tok = '[', 1, _tok = '}' OR _tok = ']', -1, 0), extractAll(${text}, ${TOKENS})))))`
}

/**
 * A name for `key`'s subexpressions: 18.16 spends most of a small query analysing it (the tokeniser above is
 * ≈1.5 KB of SQL, and a property read repeats it), so each is written once under an alias (`(expr AS name)`)
 * and named after that. Written again identically, as every read of the key does, an alias is accepted.
 */
function aliasOf(key: string): string {
  return createHash('sha1').update(key).digest('hex').slice(0, 16)
}

/**
 * The key as visitParam looks for it: as written between the quotes of the stored JSON (which JSON.stringify
 * wrote), since visitParam compares the raw text and a key holding `"` or `\` is escaped there.
 */
function visitKey(key: string): string {
  return quote(JSON.stringify(key).slice(1, -1))
}

/**
 * `fn(properties, key)` of a visitParam function, reading the key at the top level only. `defined`: the same
 * expression already defines the key's aliases, so this one names them.
 */
function visit(fn: string, key: string, defined = false): string {
  const k = visitKey(key)
  const id = aliasOf(key)
  const mark = quote(`${JSON.stringify(key)}:`)
  const before = `substring(properties, 2, greatest(position(properties, ${mark}), 2) - 2)`
  const nested = `_nested_${id}`
  const top = `_top_${id}`
  if (defined) return `if(${nested}, ${fn}(${top}, ${k}), ${fn}(properties, ${k}))`
  const maybeNested = `((position(properties, ${mark}) > 0 AND (position(${before}, '{') > 0 OR position(${before}, '[') > 0)) AS ${nested})`
  const copy = `(${topLevelOf(`substring(properties, 1, ${nested} * length(properties))`)} AS ${top})`
  return `if(${maybeNested}, ${fn}(${copy}, ${k}), ${fn}(properties, ${k}))`
}

/**
 * On 18.16, what `read` makes of the key's raw text in the JSON object `source` names (a column or a lambda's
 * parameter), the key found at the object's top level as visit() finds it; `has` and `text` are visitParamHas and
 * visitParamExtractString of it. Lambdas name the parts where visit() has aliases: 18.16 copies an alias's SQL
 * wherever it is read, and a path of three keys read with aliases outgrew its 500,000-node limit.
 */
function within(source: string, key: string, id: string, read: (raw: string, has: string, text: string) => string): string {
  const k = visitKey(key)
  const mark = quote(`${JSON.stringify(key)}:`)
  const [nested, top, raw] = [`_pn_${id}`, `_pt_${id}`, `_pr_${id}`]
  const before = `substring(${source}, 2, greatest(position(${source}, ${mark}), 2) - 2)`
  const maybeNested = `position(${source}, ${mark}) > 0 AND (position(${before}, '{') > 0 OR position(${before}, '[') > 0)`
  const at = (fn: string) => `if(${nested}, ${fn}(${top}, ${k}), ${fn}(${source}, ${k}))`
  const body = `arrayMap(${raw} -> ${read(raw, at('visitParamHas'), at('visitParamExtractString'))}, [${at('visitParamExtractRaw')}])[1]`
  const copy = topLevelOf(`substring(${source}, 1, ${nested} * length(${source}))`)
  return `arrayMap(${nested} -> arrayMap(${top} -> ${body}, [${copy}])[1], [${maybeNested}])[1]`
}

/**
 * On 18.16, a path's text: each key before the last gives the object its value is ('' for anything else), in
 * which a lambda reads the next key. The names are the path's own (`pathAlias`), as a lambda's parameter is an
 * alias of the whole query too.
 */
function pathText18(path: PropertyPath, level = 0, source = 'properties'): string {
  const key = path[level]
  const id = pathAlias(path.slice(0, level + 1))
  // A nested value's text comes from the whole object, as propertyTextExpr's (right unless the key also appears, nested, before it).
  const whole = `visitParamExtractRaw(${source}, ${visitKey(key)})`
  if (level === path.length - 1) {
    return within(source, key, id, (raw, has, text) => `if(${has} AND ${raw} != 'null', if(substring(${raw}, 1, 1) = '"', ${text}, if(substring(${raw}, 1, 1) IN ('{', '['), ${whole}, ${raw})), NULL)`)
  }
  const object = within(source, key, id, (raw) => `if(substring(${raw}, 1, 1) = '{', ${whole}, '')`)
  const next = `_ps_${id}`
  return `arrayMap(${next} -> ${pathText18(path, level + 1, next)}, [${object}])[1]`
}

/** True when the top-level key is present, whatever its value (JSON null included), as PostHog's JSONHas. */
function presentExpr(key: string, f: ServerFeatures): string {
  return f.jsonExtract ? `JSONHas(properties, ${quote(key)})` : visit('visitParamHas', key)
}

/** A top-level property's text: strings unquoted, other JSON as written, JSON null and a missing key NULL. */
export function propertyTextExpr(key: string, f: ServerFeatures): string {
  return propertyPathExpr([key], f)
}

/**
 * A property path's text, as propertyTextExpr's (HogQL's `properties.a.b`): each key after the first read within an
 * object, as PostHog's JSONExtractRaw(properties, 'a', 'b').
 */
export function propertyPathExpr(path: PropertyPath, f: ServerFeatures): string {
  if (f.jsonExtract) {
    const k = path.map(quote).join(', ')
    return `if(JSONHas(properties, ${k}) AND JSONType(properties, ${k}) != 'Null', if(JSONType(properties, ${k}) = 'String', JSONExtractString(properties, ${k}), JSONExtractRaw(properties, ${k})), NULL)`
  }
  return path.length === 1 ? textOf18(path[0]) : pathText18(path)
}

/** The aliases' name of a path's reads: a top-level key's as before; a longer path's can't be one of those (17 characters). */
function pathAlias(path: readonly string[]): string {
  return path.length === 1 ? aliasOf(path[0]) : `p${aliasOf(JSON.stringify(path))}`
}

/** On 18.16, a top-level key's text, its parts named by aliases (visit()). */
function textOf18(key: string): string {
  const raw = `_raw_${aliasOf(key)}`
  // A nested value is emptied in the copy; its text comes from the whole properties (right unless the key
  // also appears, nested, before it). Cutting it from the copy's tokens instead (the token after the key's `:`
  // to the bracket closing it) read that case right but made every query slower: the cluster suite's
  // experiment queries took 570–600 ms each against 292–305.
  const text = `if(substring(${raw}, 1, 1) IN ('{', '['), visitParamExtractRaw(properties, ${visitKey(key)}), ${raw})`
  return `if(${visit('visitParamHas', key)} AND (${visit('visitParamExtractRaw', key, true)} AS ${raw}) != 'null', if(substring(${raw}, 1, 1) = '"', ${visit('visitParamExtractString', key, true)}, ${text}), NULL)`
}

/** The property's text when it is a JSON string, else '' (ClickHouse's JSONExtractString, as PostHog reads one). */
export function stringPropertyExpr(key: string, f: ServerFeatures): string {
  return f.jsonExtract ? `JSONExtractString(properties, ${quote(key)})` : visit('visitParamExtractString', key)
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
  return compareText(propertyTextExpr(filter.key, f), presentExpr(filter.key, f), filter)
}

/** `filter`'s operator and value on a text (`v`, NULL when missing; `present`: whether the value is there at all). */
function compareText(v: string, present: string, filter: EventPropertyFilter): string {
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
      return present
    case 'is_not_set':
      return `NOT ${present}`
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte': {
      const op = { gt: '>', gte: '>=', lt: '<', lte: '<=' }[filter.operator]
      const n = Number(filter.value)
      if (!Number.isFinite(n)) return '0'
      return `ifNull(${textNumberSql(v)} ${op} ${n}, 0)`
    }
    // re2's search, as PostHog's `match`; NodeRules.regex kept out what re2 can't run.
    case 'regex':
      return `ifNull(${matchSql(v, String(filter.value))}, 0)`
    case 'not_regex':
      return `ifNull(NOT ${matchSql(v, String(filter.value))}, 1)`
  }
}

/** A property filter or group as one condition; an empty group holds. */
function nodeCondition(node: PropertyNode, f: ServerFeatures): string {
  if ('key' in node) return propertyCondition(node, f)
  if ('distinctIds' in node) {
    if (node.distinctIds.length === 0) return node.excluded ? '1' : '0'
    return `distinct_id ${node.excluded ? 'NOT IN' : 'IN'} (${node.distinctIds.map(quote).join(', ')})`
  }
  if ('groupKeys' in node) {
    if (node.groupKeys.length === 0) return node.excluded ? '1' : '0'
    return `${groupColumn(node.groupTypeIndex)} ${node.excluded ? 'NOT IN' : 'IN'} (${node.groupKeys.map(quote).join(', ')})`
  }
  if ('actionSteps' in node) {
    return clickHouseActionCondition(node, { properties: (nodes) => nodeCondition({ type: 'AND', values: nodes }, f), currentUrl: propertyTextExpr('$current_url', f) })
  }
  if ('element' in node) {
    if (node.element === 'text') return `arrayExists(x -> ${compareText('x', '1', node.filter)}, ${chainValuesExpr('text')})`
    const href = `nullIf(${chainHrefExpr}, '')`
    return compareText(href, `isNotNull(${href})`, node.filter)
  }
  if ('not' in node) return `NOT ifNull(${nodeCondition(node.not, f)}, 0)`
  // Its aliases are named by the expression: the same filter, read again elsewhere in a query, defines them alike.
  if ('hogql' in node) return hogqlConditionSql(node.hogql, (path) => propertyPathExpr(path, f), `_hq_${aliasOf(JSON.stringify(node.hogql))}`)
  // The planners resolve it in persons.db into distinct ids first; reaching here is a bug, not a request's fault.
  if ('staticCohort' in node || 'personsOf' in node) throw new Error('a cohort condition is read over persons.db only')
  if (node.values.length === 0) return '1'
  return `(${node.values.map((v) => nodeCondition(v, f)).join(node.type === 'OR' ? ' OR ' : ' AND ')})`
}

/** The group key column of a type index (0–4): checked, as it is written into SQL. */
export function groupColumn(index: number): string {
  if (!Number.isInteger(index) || index < 0 || index > 4) throw new RangeError(`group type index ${index}`)
  return `\`$group_${index}\``
}

/** A time in ms within what ClickHouse's DateTime holds (1970 to 2106), as a whole number. */
export function clampMs(ms: number): number {
  return Math.min(Math.max(Math.trunc(ms), 0), 4294967294000)
}

function timeBound(ms: number, op: '>=' | '<', f: ServerFeatures): string {
  const bounded = clampMs(ms)
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
  if (filter.distinctIds !== undefined) {
    parts.push(filter.distinctIds.length === 0 ? '0' : `distinct_id IN (${filter.distinctIds.map(quote).join(', ')})`)
  }
  if (filter.group !== undefined) parts.push(`${groupColumn(filter.group.index)} = ${quote(filter.group.key)}`)
  if (filter.after !== undefined) parts.push(timeBound(filter.after, '>=', f))
  if (filter.before !== undefined) parts.push(timeBound(filter.before, '<', f))
  if (filter.properties !== undefined && filter.properties.length > 0) parts.push(nodeCondition({ type: 'AND', values: filter.properties }, f))
  return parts.join(' AND ')
}
