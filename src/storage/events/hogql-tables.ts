/**
 * The tables a HogQL query reads (hogql-query.ts, `FROM events`, `persons`, `groups` or `person_distinct_ids`) and the fields of
 * each, as the parser (hogql-parse.ts) reads a name: PostHog's names, case-sensitive.
 */
import { markDatetime } from './hogql-time-marks.js'
import type { QueryClock } from './hogql-clock.js'
import type { HogqlField, HogqlNode, StoredField } from './hogql-math.js'
import { HogqlMathError } from './hogql-tokens.js'

/** `one`: a query without FROM, of one row and no fields (ClickHouse's system.one); `join`: a FROM with JOINs (hogql-join.ts). */
export type QueryTable = 'events' | 'persons' | 'groups' | 'person_distinct_ids' | 'one' | 'join'

/** The event's fields HogQL math and filters read (experiments'); queries read more. */
export const MATH_FIELDS: ReadonlySet<string> = new Set<HogqlField>(['event', 'distinct_id'])

/** The events' stored columns beyond those every read takes (hogql-query-run.ts's QueryEvent), read where a plan names them. */
export const STORED_FIELDS: readonly StoredField[] = ['elements_chain', 'created_at', '$group_0', '$group_1', '$group_2', '$group_3', '$group_4']

/**
 * PostHog's `$session_id` and `$window_id` columns: its ingestion copies them out of the properties, '' where none.
 * skylark keeps them in the properties only, and reads them there.
 */
const FROM_PROPERTIES: ReadonlySet<string> = new Set(['$session_id', '$window_id'])

const FIELDS: Readonly<Record<QueryTable, ReadonlySet<string>>> = {
  events: new Set<string>(['event', 'distinct_id', 'uuid', 'person_id', 'timestamp', ...STORED_FIELDS, ...FROM_PROPERTIES]),
  persons: new Set<HogqlField>(['id', 'created_at', 'is_identified']),
  groups: new Set<HogqlField>(['index', 'key', 'created_at']),
  person_distinct_ids: new Set<HogqlField>(['distinct_id', 'person_id']),
  one: new Set(),
  join: new Set(),
}
/** Each table's fields, as refusals name them. */
const READS: Readonly<Record<QueryTable, string>> = {
  events:
    'event properties (properties.<key>, or properties whole), person properties (person.properties.<key>), group properties (group_0.properties.<key> …), event, distinct_id, uuid, person_id, timestamp, created_at, elements_chain, $session_id, $window_id and $group_0 to $group_4',
  persons: "the person's properties (properties.<key>, or properties whole), id, created_at and is_identified",
  groups: "the group's properties (properties.<key>, or properties whole), index (its group type's), key and created_at",
  person_distinct_ids: 'distinct_id and person_id (its person now)',
  one: 'no fields',
  join: "its tables' fields",
}
/** The fields that are dates and times (ms); is_identified (0 or 1) and index are numbers, the others texts. */
const DATETIME_FIELDS: ReadonlySet<string> = new Set(['timestamp', 'created_at'])

/** The field `name` of the table as a node, or a refusal naming the fields it has. */
export function queryField(name: string, table: QueryTable): HogqlNode {
  if (!FIELDS[table].has(name)) throw new HogqlMathError(`Unknown field "${name}": HogQL queries of ${table} here read ${READS[table]}.`)
  if (FROM_PROPERTIES.has(name)) {
    const property: HogqlNode = { op: 'property', type: 'text', key: name }
    return { op: 'call', type: 'text', fn: 'ifNull', args: [property, { op: 'text', type: 'text', value: '' }] }
  }
  const field = name as HogqlField
  if (DATETIME_FIELDS.has(field)) return markDatetime({ op: 'field', type: 'number', field })
  return { op: 'field', type: field === 'is_identified' || field === 'index' ? 'number' : 'text', field }
}

/** A column of the subquery a query reads (QueryClock's `source`), by its name, as a new node. */
export function sourceField(source: NonNullable<QueryClock['source']>, name: string): HogqlNode {
  const column = source.columns.find((c) => c.name === name)
  if (column === undefined && source.columns.length === 0) throw new HogqlMathError(`Unknown field "${name}": a query without FROM reads no table's fields (FROM events …).`)
  if (column === undefined) throw new HogqlMathError(`Unknown field "${name}": a query of a subquery reads its columns (${source.columns.map((c) => c.name).join(', ')}).`)
  return column.node()
}

/** Whether a table has the field `name` (its properties, and the events' person, too), as a join finds a name's table. */
export function offers(table: QueryTable, name: string): boolean {
  return FIELDS[table].has(name) || (name === 'properties' && hasProperties(table)) || (name === 'person' && table === 'events')
}

/** Whether a table's rows have properties: all but a query without FROM's and the distinct ids'. */
export function hasProperties(table: QueryTable): boolean {
  return table !== 'one' && table !== 'person_distinct_ids'
}

/**
 * PostHog's `SELECT *` of each table: its fields that are columns, in its order (Table.get_asterisk). Of events
 * skylark has no `person_mode` (which PostHog's ingestion sets apart from the event) and no `elements_chain_*`
 * (arrays, which queries here don't read), so `*` is PostHog's columns without those.
 */
export const TABLES: readonly QueryTable[] = ['events', 'persons', 'groups', 'person_distinct_ids']
export const ASTERISK: Readonly<Record<QueryTable, readonly string[]>> = {
  events: ['uuid', 'event', 'properties', 'timestamp', 'distinct_id', 'elements_chain', 'created_at', '$session_id', '$window_id', '$group_0', '$group_1', '$group_2', '$group_3', '$group_4'],
  persons: ['id', 'created_at', 'properties', 'is_identified'],
  // PostHog's `updated_at` too: skylark keeps no time of a group's last change.
  groups: ['index', 'key', 'created_at', 'properties'],
  person_distinct_ids: ['distinct_id', 'person_id'],
  one: [],
  join: [],
}
