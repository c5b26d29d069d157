/**
 * `group_<n>.properties.<key>` of a HogQL query of events: PostHog's lazy join of the events' `$group_<n>` with the
 * groups of type n (join_with_group_n_table), the group's properties as they are now; NULL for an event without such
 * a group, or of a group without the property. The parser hands each such read to the query's hook (QueryClock's
 * `groupProperty`), which gives a `lookup` node of the event's `$group_<n>` and keeps it; the caller reads each
 * property's texts among the project's groups of that type from persons.db (each text with its group keys, as a person
 * property's with its distinct ids) and fills the node (fillGroupLookup) before the stores run the query. The values
 * live in the node, plain data, as the plan is copied to the embedded store's read thread.
 */
import type { QueryClock } from './hogql-clock.js'
import type { HogqlNode, PropertyPath, StoredField } from './hogql-math.js'

/** The texts a lookup's property has, each with the keys of the groups that have it. */
export type LookupValues = ReadonlyArray<{ text: string; ids: readonly string[] }>
export type LookupNode = HogqlNode & { op: 'lookup' }

/** A group property a query reads: the group type's index, the property's path, and the node its values fill. */
export interface GroupLookup {
  index: number
  path: PropertyPath
  node: LookupNode
}

/** The hook that gives each `group_<n>.properties.<path>` its node, kept in `lookups`: one a property, wherever read. */
export function groupLookups(lookups: GroupLookup[]): NonNullable<QueryClock['groupProperty']> {
  return (index, path) => {
    const known = lookups.find((l) => l.index === index && l.path.join('\0') === path.join('\0'))
    if (known !== undefined) return known.node
    const node: LookupNode = { op: 'lookup', type: 'text', args: [{ op: 'field', type: 'text', field: `$group_${index}` as StoredField }], values: [] }
    lookups.push({ index, path, node })
    return node
  }
}

export function fillGroupLookup(lookup: GroupLookup, values: LookupValues): void {
  lookup.node.values = values
}

/** Each node's values as a map by key, built once per node (and thread) rather than searched on every row. */
const maps = new WeakMap<LookupNode, Map<string, string>>()

/** The text a lookup gives for a key (null: none). */
export function lookupText(node: LookupNode, key: unknown): string | null {
  let map = maps.get(node)
  if (map === undefined) {
    map = new Map(node.values.flatMap((v) => v.ids.map((id) => [id, v.text] as const)))
    maps.set(node, map)
  }
  return typeof key === 'string' ? (map.get(key) ?? null) : null
}
