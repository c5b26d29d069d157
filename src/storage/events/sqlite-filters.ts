/**
 * EventFilter → SQL for events.db. Property values are compared by their text form (JSON true/false as
 * `true`/`false`, numbers as written), as PostHog's property filters do; a missing property never equals
 * anything, and `is_not`/`not_icontains` include events without the property. `is_set` asks whether the key
 * is there, a JSON null included, as PostHog's JSONHas does. The property conditions read a column named
 * `properties`, so persons.db's persons table takes them as well.
 */
import type { Db } from '../sqlite/database.js'
import { textNumber } from './numbers.js'
import { hogqlFields, hogqlHolds, hogqlProperties, pathIndex, type HogqlField, type HogqlNode, type PropertyPath, type StoredField } from './hogql-math.js'
import { actionCondition, registerRegexFunction, type RegexEngine } from './sqlite-actions.js'
import { PersonSequence } from './sequences.js'
import type { CountOperator, ElementCondition, EventFilter, PersonsOfCondition, EventPropertyFilter, HogqlCondition, PropertyNode } from './types.js'

export interface SqlFragment {
  sql: string
  params: unknown[]
}

/**
 * The columns a HogQL query's plan reads of a row with a `properties` column (an event, or a person of `FROM
 * persons`): an event's stored columns it names (`$group_<n>` is the column `group_<n>`), the whole JSON text where
 * the plan reads it (else NULL), then the text of each of its paths.
 */
export function hogqlReadSql(plan: { paths: readonly PropertyPath[]; readsProperties: boolean; stored: readonly StoredField[] }): SqlFragment {
  const texts = plan.paths.map(propertyPathText)
  const stored = plan.stored.map((name) => name.replace(/^\$/, ''))
  return { sql: [...stored, plan.readsProperties ? 'properties' : 'NULL', ...texts.map((t) => t.sql)].join(', '), params: texts.flatMap((t) => t.params) }
}

/** SQL giving the text form of a top-level property (NULL when missing or JSON null). */
export function propertyText(key: string): SqlFragment {
  return propertyPathText([key])
}

const PROPERTIES: SqlFragment = { sql: 'properties', params: [] }
/** Keys with quotes or backslashes can't be written as a JSON path label; json_each matches them exactly. */
const labelled = (key: string) => !/["\\]/.test(key)

/**
 * SQL giving the text form of a property path's value (HogQL's `properties.a.b`): each key after the first read
 * within an object, as the matcher (pathText) and ClickHouse read it.
 */
export function propertyPathText(path: PropertyPath): SqlFragment {
  if (path.every(labelled)) return textAt(PROPERTIES, `$${path.map((key) => `."${key}"`).join('')}`)
  let source = PROPERTIES
  for (const key of path.slice(0, -1)) source = { sql: `(SELECT ${source.sql} -> fullkey FROM json_each(${source.sql}) WHERE key = ?)`, params: [...source.params, ...source.params, key] }
  const key = path[path.length - 1]
  if (labelled(key)) return textAt(source, `$."${key}"`)
  return {
    sql: `(SELECT CASE type WHEN 'true' THEN 'true' WHEN 'false' THEN 'false' WHEN 'null' THEN NULL WHEN 'text' THEN value ELSE ${source.sql} -> fullkey END FROM json_each(${source.sql}) WHERE key = ?)`,
    params: [...source.params, ...source.params, key],
  }
}

/**
 * The text at a JSON path of the source's JSON. A number's text is the stored JSON's (`->`), as ClickHouse and the
 * matcher read it: SQLite's CAST of the number wrote 1e21 as `1.0e+21` and an integer beyond 64 bits as a float's text.
 */
function textAt(source: SqlFragment, path: string): SqlFragment {
  const s = source.sql
  return {
    sql: `(CASE json_type(${s}, ?) WHEN 'true' THEN 'true' WHEN 'false' THEN 'false' WHEN 'null' THEN NULL WHEN 'text' THEN json_extract(${s}, ?) ELSE ${s} -> ? END)`,
    params: [...source.params, path, ...source.params, path, ...source.params, path],
  }
}

/** SQL true when the top-level key is present, whatever its value (JSON null included). */
function propertyPresent(key: string): SqlFragment {
  if (/["\\]/.test(key)) return { sql: 'EXISTS (SELECT 1 FROM json_each(properties) WHERE key = ?)', params: [key] }
  return { sql: 'json_type(properties, ?) IS NOT NULL', params: [`$."${key}"`] }
}

function textOf(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value)
}

function propertyCondition(filter: EventPropertyFilter): SqlFragment {
  return compareText(propertyText(filter.key), propertyPresent(filter.key), filter)
}

/** `filter`'s operator and value on a text (`v`, NULL when missing; `present`: whether the value is there at all). */
function compareText(v: SqlFragment, present: SqlFragment, filter: EventPropertyFilter): SqlFragment {
  const values = Array.isArray(filter.value) ? filter.value : [filter.value]
  switch (filter.operator) {
    case 'exact':
    case 'is_not': {
      const list = values.filter((x) => x !== null && x !== undefined).map(textOf)
      if (list.length === 0) return { sql: filter.operator === 'exact' ? '0' : '1', params: [] }
      const inList = `${v.sql} IN (${list.map(() => '?').join(', ')})`
      const sql = filter.operator === 'exact' ? inList : `(${v.sql} IS NULL OR NOT (${inList}))`
      return { sql, params: filter.operator === 'exact' ? [...v.params, ...list] : [...v.params, ...v.params, ...list] }
    }
    case 'icontains':
      return { sql: `skylark_icontains(${v.sql}, ?) = 1`, params: [...v.params, textOf(filter.value)] }
    case 'not_icontains':
      return { sql: `coalesce(skylark_icontains(${v.sql}, ?), 0) = 0`, params: [...v.params, textOf(filter.value)] }
    case 'is_set':
      return present
    case 'is_not_set':
      return { sql: `NOT ${present.sql}`, params: present.params }
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte': {
      const op = { gt: '>', gte: '>=', lt: '<', lte: '<=' }[filter.operator]
      return { sql: `skylark_number(${v.sql}) ${op} ?`, params: [...v.params, Number(filter.value)] }
    }
    // The read connection's safe engine (sqlite-actions.ts), as actions' regexes run.
    case 'regex':
      return { sql: `skylark_regex(${v.sql}, ?)`, params: [...v.params, String(filter.value)] }
    case 'not_regex':
      return { sql: `(${v.sql} IS NULL OR NOT skylark_regex(${v.sql}, ?))`, params: [...v.params, ...v.params, String(filter.value)] }
  }
}

/** The SQL of each count comparison (a closed set: never the caller's text in the query). */
const COUNT_OPERATORS: Readonly<Record<CountOperator, string>> = { '>=': '>=', '>': '>', '<=': '<=', '<': '<', '=': '=' }

/**
 * The persons whose tallies pass: one bound JSON list of [distinct id, first event, window counts…] rows, each
 * person's read over its ids (the earliest first event, the counts summed), and the checks that hold added up.
 */
function talliesCondition(node: Required<PersonsOfCondition>): SqlFragment {
  const { rows, checks, atLeast } = node.tallies
  const json = JSON.stringify(node.personsOf.map((id, i) => [id, ...rows[i]!]))
  const held = checks.map((c) => `(${c.column === 0 ? 'MIN' : 'SUM'}(j.value ->> ${c.column + 1}) ${COUNT_OPERATORS[c.operator]} ?)`)
  return {
    sql: `id IN (SELECT d.person_id FROM json_each(?) j JOIN person_distinct_ids d ON d.team_id = ? AND d.distinct_id = j.value ->> 0
           GROUP BY d.person_id HAVING ${held.join(' + ')} >= ?)`,
    params: [json, node.teamId, ...checks.map((c) => c.value), atLeast],
  }
}

/**
 * The persons whose ids' events make the sequence: one bound JSON list of each id's row (PersonsOfCondition's
 * `sequence`), gathered per person by the `skylark_sequence` aggregate (sequences.ts).
 */
function sequenceCondition(node: PersonsOfCondition & { sequence: NonNullable<PersonsOfCondition['sequence']> }): SqlFragment {
  const { rows, windowMs } = node.sequence
  const json = JSON.stringify(node.personsOf.map((id, i) => (rows[i] === true ? [id, true] : [id, ...rows[i]!])))
  return {
    sql: `id IN (SELECT d.person_id FROM json_each(?) j JOIN person_distinct_ids d ON d.team_id = ? AND d.distinct_id = j.value ->> 0
           GROUP BY d.person_id HAVING skylark_sequence(j.value, ?))`,
    params: [json, node.teamId, windowMs],
  }
}

/** A property filter or group as one SQL condition; an empty group holds. */
function nodeCondition(node: PropertyNode): SqlFragment {
  if ('key' in node) return propertyCondition(node)
  // One bound JSON list, however many ids: SQLite caps the number of parameters.
  if ('distinctIds' in node) return { sql: `distinct_id ${node.excluded ? 'NOT IN' : 'IN'} (SELECT value FROM json_each(?))`, params: [JSON.stringify(node.distinctIds)] }
  if ('groupKeys' in node) return { sql: `${groupColumn(node.groupTypeIndex)} ${node.excluded ? 'NOT IN' : 'IN'} (SELECT value FROM json_each(?))`, params: [JSON.stringify(node.groupKeys)] }
  // Over events only: the action's chain and url read events' columns.
  if ('actionSteps' in node) return actionCondition(node, { properties: compileSqliteProperties, currentUrl: propertyText('$current_url') })
  if ('element' in node) return elementCondition(node)
  if ('not' in node) {
    const inner = nodeCondition(node.not)
    return { sql: `NOT coalesce(${inner.sql}, 0)`, params: inner.params }
  }
  if ('hogql' in node) return hogqlCondition(node)
  // Over persons.db's persons only (their `id`).
  if ('staticCohort' in node) return { sql: 'id IN (SELECT person_id FROM cohort_people WHERE team_id = ? AND cohort_id = ?)', params: [node.teamId, node.staticCohort] }
  if ('personsOf' in node && node.tallies) return talliesCondition(node as Required<PersonsOfCondition>)
  if ('personsOf' in node && node.sequence) return sequenceCondition({ ...node, sequence: node.sequence })
  if ('personsOf' in node) {
    return { sql: 'id IN (SELECT person_id FROM person_distinct_ids WHERE team_id = ? AND distinct_id IN (SELECT value FROM json_each(?)))', params: [node.teamId, JSON.stringify(node.personsOf)] }
  }
  if (node.values.length === 0) return { sql: '1', params: [] }
  const parts = node.values.map(nodeCondition)
  return { sql: `(${parts.map((p) => p.sql).join(node.type === 'OR' ? ' OR ' : ' AND ')})`, params: parts.flatMap((p) => p.params) }
}

/** An element filter over the row's `elements_chain` (the read connection's chain functions, sqlite-actions.ts). */
function elementCondition(node: ElementCondition): SqlFragment {
  if (node.element === 'href') {
    const href = { sql: "nullif(skylark_chain_href(elements_chain), '')", params: [] }
    return compareText(href, { sql: `${href.sql} IS NOT NULL`, params: [] }, node.filter)
  }
  const any = compareText({ sql: 'value', params: [] }, { sql: '1', params: [] }, node.filter)
  return { sql: `EXISTS (SELECT 1 FROM json_each(skylark_chain_values(elements_chain, 'text')) WHERE ${any.sql})`, params: any.params }
}

/**
 * A HogQL filter: `skylark_hogql(expression, text of each property it reads…, each field it reads…)`, evaluated
 * by hogql-math.ts, the code HogQL math runs on this store, on the texts the other filters compare. Fields are
 * the events table's columns: over persons.db no reader lets one through (the persons list refuses them).
 */
function hogqlCondition(node: HogqlCondition): SqlFragment {
  const fields = hogqlFields(node.hogql).map((field) => ({ sql: field === 'event' ? 'event' : 'distinct_id', params: [] }))
  const texts = [...hogqlProperties(node.hogql).map(propertyPathText), ...fields]
  return { sql: `skylark_hogql(?${texts.map((t) => `, ${t.sql}`).join('')})`, params: [JSON.stringify(node.hogql), ...texts.flatMap((t) => t.params)] }
}

/** Expressions read back from their JSON, by text: a scan evaluates the same few on every row. */
const hogqlRead = new Map<string, { node: HogqlNode; paths: number; at: (path: PropertyPath) => number; fields: HogqlField[] }>()
const HOGQL_READ_LIMIT = 100

interface SequenceState {
  person: PersonSequence
  windowMs: number
}

/**
 * The functions property conditions call (`skylark_hogql`, `skylark_regex`, `skylark_number`, `skylark_icontains`, the `skylark_sequence` aggregate), on a connection
 * that reads events or persons. `regex` runs the regex operators and match() (none given: a filter with one fails).
 */
export function registerFilterFunctions(db: Db, regex: RegexEngine | null): void {
  registerRegexFunction(db, regex)
  // A text's number as every store reads it (numbers.ts), for `gt`/`lt` filters: SQLite's CAST read `abc` as 0.
  db.function('skylark_number', { deterministic: true }, (text) => (typeof text === 'string' ? textNumber(text) : null))
  // `icontains` beyond ASCII, as ClickHouse's positionCaseInsensitiveUTF8 and the matcher: SQLite's lower() folds
  // A–Z only, so `ÄBC` did not contain `äbc`.
  db.function('skylark_icontains', { deterministic: true }, (text, needle) =>
    typeof text === 'string' ? (text.toLowerCase().includes(String(needle).toLowerCase()) ? 1 : 0) : null,
  )
  // A person's sequence over its ids' rows (sequenceCondition): JSON text per row, the window in ms.
  const step = (state: SequenceState, row: unknown, windowMs: unknown) => {
    state.person.add(JSON.parse(row as string) as unknown[])
    state.windowMs = windowMs as number
  }
  db.aggregate<SequenceState>('skylark_sequence', {
    start: () => ({ person: new PersonSequence(), windowMs: 0 }),
    // The typings give step one argument after the state; SQLite passes each of the call's.
    step: step as unknown as (state: SequenceState) => void,
    result: (state) => (state.person.holds(state.windowMs) ? 1 : 0),
  })
  db.function('skylark_hogql', { deterministic: true, varargs: true }, (json, ...texts) => {
    let read = hogqlRead.get(json as string)
    if (!read) {
      const node = JSON.parse(json as string) as HogqlNode
      const paths = hogqlProperties(node)
      read = { node, paths: paths.length, at: pathIndex(paths), fields: hogqlFields(node) }
      if (hogqlRead.size >= HOGQL_READ_LIMIT) hogqlRead.clear()
      hogqlRead.set(json as string, read)
    }
    // The properties' texts, then the fields' (hogqlCondition).
    const { paths, at, fields } = read
    const property = (path: PropertyPath) => (texts[at(path)] as string | null) ?? null
    return hogqlHolds(read.node, property, regex, (field) => texts[paths + fields.indexOf(field)] as string) ? 1 : 0
  })
}

/** Property filters that must all hold, over the `properties` column of the row read. */
export function compileSqliteProperties(nodes: readonly PropertyNode[]): SqlFragment {
  return nodeCondition({ type: 'AND', values: nodes })
}

/**
 * Every block (EVENTS_BLOCK_ROWS) from the project's first event's to its last's. The distinct-id index
 * leads with the block, so a lookup seeks it once per block; min and max are single seeks of the same index.
 */
const TEAM_BLOCKS = `WITH RECURSIVE b(n) AS (SELECT min(block) FROM events WHERE team_id = ?
  UNION ALL SELECT n + 1 FROM b WHERE n < (SELECT max(block) FROM events WHERE team_id = ?)) SELECT n FROM b`

/** The group key column of a type index (0–4): checked, as it is written into SQL. */
export function groupColumn(index: number): string {
  if (!Number.isInteger(index) || index < 0 || index > 4) throw new RangeError(`group type index ${index}`)
  return `group_${index}`
}

/** A WHERE clause over events, and the table to read with it. */
export interface EventsWhere extends SqlFragment {
  /**
   * `events`, or with a distinct id the index by block named: given the choice, SQLite scans the project's
   * events in time order instead (0.5 s against 0.2 ms for one distinct id among 700,000 rows).
   */
  from: string
}

export function compileSqliteWhere(filter: EventFilter): EventsWhere {
  const parts = ['team_id = ?']
  const params: unknown[] = [filter.teamId]
  if (filter.event !== undefined) {
    const names = typeof filter.event === 'string' ? [filter.event] : [...filter.event]
    parts.push(names.length === 0 ? '0' : `event IN (${names.map(() => '?').join(', ')})`)
    params.push(...names)
  }
  if (filter.distinctId !== undefined) {
    parts.push(`block IN (${TEAM_BLOCKS})`, 'distinct_id = ?')
    params.push(filter.teamId, filter.teamId, filter.distinctId)
  }
  if (filter.distinctIds !== undefined) {
    parts.push(filter.distinctIds.length === 0 ? '0' : `distinct_id IN (${filter.distinctIds.map(() => '?').join(', ')})`)
    params.push(...filter.distinctIds)
  }
  if (filter.group !== undefined) {
    parts.push(`${groupColumn(filter.group.index)} = ?`)
    params.push(filter.group.key)
  }
  if (filter.after !== undefined) {
    parts.push('timestamp >= ?')
    params.push(filter.after)
  }
  if (filter.before !== undefined) {
    parts.push('timestamp < ?')
    params.push(filter.before)
  }
  if (filter.properties !== undefined && filter.properties.length > 0) {
    const c = compileSqliteProperties(filter.properties)
    parts.push(c.sql)
    params.push(...c.params)
  }
  const from = filter.distinctId === undefined ? 'events' : 'events INDEXED BY events_team_block_distinct'
  return { sql: parts.join(' AND '), params, from }
}
