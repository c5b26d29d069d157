/**
 * The tables a HogQL query reads (hogql-query.ts, `FROM events` or `FROM persons`) and the fields of each, as the
 * parser (hogql-parse.ts) reads a name: PostHog's names, case-sensitive.
 */
import { markDatetime } from './hogql-datetime.js'
import type { HogqlField, HogqlNode } from './hogql-math.js'
import { HogqlMathError } from './hogql-tokens.js'

export type QueryTable = 'events' | 'persons'

/** The event's fields HogQL math and filters read (experiments'); queries read more. */
export const MATH_FIELDS: ReadonlySet<string> = new Set<HogqlField>(['event', 'distinct_id'])

const FIELDS: Readonly<Record<QueryTable, ReadonlySet<string>>> = {
  events: new Set<HogqlField>(['event', 'distinct_id', 'uuid', 'person_id', 'timestamp']),
  persons: new Set<HogqlField>(['id', 'created_at', 'is_identified']),
}
/** Each table's fields, as refusals name them. */
const READS: Readonly<Record<QueryTable, string>> = {
  events: 'event properties (properties.<key>, or properties whole), person properties (person.properties.<key>), event, distinct_id, uuid, person_id and timestamp',
  persons: "the person's properties (properties.<key>, or properties whole), id, created_at and is_identified",
}
/** The fields that are dates and times (ms); is_identified is a number (0 or 1), the others texts. */
const DATETIME_FIELDS: ReadonlySet<string> = new Set(['timestamp', 'created_at'])

/** The field `name` of the table as a node, or a refusal naming the fields it has. */
export function queryField(name: string, table: QueryTable): HogqlNode {
  if (!FIELDS[table].has(name)) throw new HogqlMathError(`Unknown field "${name}": HogQL queries of ${table} here read ${READS[table]}.`)
  const field = name as HogqlField
  if (DATETIME_FIELDS.has(field)) return markDatetime({ op: 'field', type: 'number', field })
  return { op: 'field', type: field === 'is_identified' ? 'number' : 'text', field }
}
