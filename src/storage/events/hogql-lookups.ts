/**
 * What a HogQL query of events reads of the event's person and groups as they are now, PostHog's lazy joins of its
 * events table: `group_<n>.properties.<key>`, `group_<n>.key` and `group_<n>.created_at` (the event's `$group_<n>`
 * joined with the groups of type n, join_with_group_n_table), and `person.id`, `person.created_at` and
 * `person.is_identified` (its distinct id's person, as `person.properties` reads it: hogql-math.ts), and
 * `person_id IN COHORT <id or name>` (whether that person is one of the cohort's now). The parser hands
 * each such read to the query's hook (QueryClock's `lookup`), which gives one `lookup` node a read, keyed by the
 * event's `$group_<n>` or `distinct_id`, and keeps it; the caller reads the values from persons.db (each value with
 * the keys that have it, as a person property's texts with their distinct ids) and fills the node (fillLookup)
 * before the stores run the query. The values live in the node, plain data, as the plan is copied to the embedded
 * store's read thread. A key no group or person has reads what ClickHouse's LEFT JOIN gives (join_use_nulls = 0):
 * NULL of a property, '' of a key, 1970 of a date and time, the zero UUID, 0.
 */
import type { QueryClock } from './hogql-clock.js'
import { markDatetime } from './hogql-time-marks.js'
import { propertyNode, type HogqlNode, type HogqlValue, type PropertyPath, type StoredField } from './hogql-math.js'
import { HogqlMathError, pathAt, type Token } from './hogql-tokens.js'

/** The values a lookup gives, each with the keys that have it. */
export type LookupValues = ReadonlyArray<{ text: string | number; ids: readonly string[] }>
export type LookupNode = HogqlNode & { op: 'lookup' }
/** A field of the joined group or person (ClickHouse's type of it: hogql-query-columns.ts). */
export type LookupField = 'key' | 'created_at' | 'id' | 'is_identified'

/** What a lookup reads: a group's property or field, or a person's field. */
export type LookupOf =
  | { holder: 'group'; index: number; path: PropertyPath }
  | { holder: 'group'; index: number; field: 'key' | 'created_at' }
  | { holder: 'person'; field: 'id' | 'created_at' | 'is_identified' }
  /** `person_id IN COHORT <id or name>`: 1 for a member, else 0. */
  | { holder: 'cohort'; cohort: number | string }

/** What persons.db answers of them: all but cohorts, whose members the caller reads. */
export type FieldLookupOf = Exclude<LookupOf, { holder: 'cohort' }>

export interface Lookup {
  of: LookupOf
  node: LookupNode
}

const ZERO_UUID = '00000000-0000-0000-0000-000000000000'
const MISSING: Readonly<Record<LookupField, HogqlValue>> = { key: '', created_at: 0, id: ZERO_UUID, is_identified: 0 }

/** The hook that gives each read its node, kept in `lookups`: one a read, wherever in the query. */
export function lookups(kept: Lookup[]): NonNullable<QueryClock['lookup']> {
  return (of) => {
    const known = kept.find((l) => JSON.stringify(l.of) === JSON.stringify(of))
    if (known !== undefined) return known.node
    const key: HogqlNode = { op: 'field', type: 'text', field: of.holder === 'group' ? (`$group_${of.index}` as StoredField) : 'distinct_id' }
    const field = 'field' in of ? of.field : undefined
    const type = field === 'created_at' || field === 'is_identified' || of.holder === 'cohort' ? 'number' : 'text'
    const missing = of.holder === 'cohort' ? 0 : field === undefined ? null : MISSING[field]
    const node: LookupNode = { op: 'lookup', type, args: [key], values: [], missing, ...(field ? { field } : {}) }
    if (field === 'created_at') markDatetime(node)
    kept.push({ of, node })
    return node
  }
}

const FIELDS = { person: ['id', 'created_at', 'is_identified'], group: ['key', 'created_at'] } as const

/** What `<holder>.<name>` reads (holder `person` or `group_<n>`) but its properties, or null when it is no such field. */
function holderField(holder: string, name: string): LookupOf | null {
  if (holder === 'person') return (FIELDS.person as readonly string[]).includes(name) ? { holder, field: name as (typeof FIELDS.person)[number] } : null
  return (FIELDS.group as readonly string[]).includes(name) ? { holder: 'group', index: Number(holder.slice(6)), field: name as (typeof FIELDS.group)[number] } : null
}

/** The fields beside its properties a query reads of a holder, for refusals. */
const holderFields = (holder: string): string => FIELDS[holder === 'person' ? 'person' : 'group'].join(', ')

/**
 * `person.properties.<key>`, `person.<field>`, `group_<n>.properties.<key>` or `group_<n>.<field>` from the token
 * `at` (the holder's name, a `.` after it): its node, and the index past it. Without the query's `lookup` (math and
 * filters) only the person's properties are read.
 */
export function holderAt(tokens: Token[], at: number, use: string, lookup: QueryClock['lookup']): { node: HogqlNode; end: number } {
  const holder = String(tokens[at].value).toLowerCase()
  const next = tokens[at + 2]
  const name = next?.kind === 'name' && !next.quoted ? next.value : ''
  const field = lookup && holderField(holder, name)
  if (field) return { node: lookup!(field), end: at + 3 }
  if (name.toLowerCase() !== 'properties') throw new HogqlMathError(`Of ${holder === 'person' ? 'the person' : holder}, skylark reads its properties (${holder}.properties.<key>)${lookup ? ` and ${holderFields(holder)}` : ''} in ${use}.`)
  const { path, end } = pathAt(tokens, at + 3)
  return { node: holder === 'person' ? propertyNode(path, true) : lookup!({ holder: 'group', index: Number(holder.slice(6)), path }), end }
}

/** The lookup's values, and what a key of none reads when not as made (a cohort given by the persons not in it). */
export function fillLookup(lookup: Lookup, values: LookupValues, missing = lookup.node.missing): void {
  lookup.node.values = values
  lookup.node.missing = missing
}

/** Each node's values as a map by key, built once per node (and thread) rather than searched on every row. */
const maps = new WeakMap<LookupNode, Map<string, string | number>>()

/** The value a lookup gives for a key. */
export function lookupValue(node: LookupNode, key: HogqlValue): HogqlValue {
  let map = maps.get(node)
  if (map === undefined) {
    map = new Map(node.values.flatMap((v) => v.ids.map((id) => [id, v.text] as const)))
    maps.set(node, map)
  }
  return (typeof key === 'string' ? map.get(key) : undefined) ?? node.missing
}
