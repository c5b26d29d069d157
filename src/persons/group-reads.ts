/**
 * The groups API's lookups in persons.db beyond the list (listing.ts): one group by key, groups by keys, the
 * property keys and values groups carry (PostHog's groups/find, related, property_definitions and
 * property_values), and the persons of distinct ids that groups/related answers with.
 */
import type { Statement } from 'better-sqlite3'
import type { Db } from '../storage/index.js'
import type { GroupRecord, PersonWithDistinctIds } from './listing.js'
import { parseObject, toPerson, type PersonRowDb } from './rows.js'

/** PostHog's groups/property_values answers this many values. */
const PROPERTY_VALUES_LIMIT = 20

type GroupRow = { group_type_index: number; group_key: string; properties: string; created_at: string }

function toGroup(row: GroupRow): GroupRecord {
  return { group_type_index: row.group_type_index, group_key: row.group_key, group_properties: parseObject(row.properties), created_at: row.created_at }
}

/**
 * A group property's value as PostHog's ClickHouse query gives it: the raw JSON with its outer quotes cut
 * (`replaceRegexpAll(raw, '^"|"$', '')`), so a string keeps its escapes and null is `null`.
 */
const RAW_VALUE = `CASE j.type
  WHEN 'text' THEN substr(json_quote(j.value), 2, length(json_quote(j.value)) - 2)
  WHEN 'true' THEN 'true' WHEN 'false' THEN 'false' WHEN 'null' THEN 'null'
  ELSE CAST(j.value AS TEXT) END`

export class GroupReads {
  private readonly s: {
    find: Statement<[number, number, string], GroupRow>
    byKeys: Statement<[number, number, string], GroupRow>
    definitions: Statement<[number], { group_type_index: number; name: string; count: number }>
    values: Statement<[number, number, string, number], { name: string; count: number }>
    search: Statement<[number, number, string, string, number], { name: string; count: number }>
    personsOf: Statement<[number, string], PersonRowDb>
    distinctIdsOf: Statement<[string], { person_id: number; distinct_id: string }>
  }

  constructor(db: Db) {
    const values = (search: string) =>
      `SELECT v AS name, COUNT(*) AS count FROM (SELECT ${RAW_VALUE} AS v FROM groups g, json_each(g.properties) j
         WHERE g.team_id = ? AND g.group_type_index = ? AND j.key = ?) ${search}
       GROUP BY v ORDER BY count DESC, v LIMIT ?`
    this.s = {
      find: db.prepare('SELECT group_type_index, group_key, properties, created_at FROM groups WHERE team_id = ? AND group_type_index = ? AND group_key = ?'),
      byKeys: db.prepare(
        `SELECT group_type_index, group_key, properties, created_at FROM groups
         WHERE team_id = ? AND group_type_index = ? AND group_key IN (SELECT value FROM json_each(?)) ORDER BY group_key`,
      ),
      definitions: db.prepare(
        `SELECT g.group_type_index, j.key AS name, COUNT(*) AS count FROM groups g, json_each(g.properties) j
         WHERE g.team_id = ? GROUP BY g.group_type_index, j.key ORDER BY g.group_type_index, count DESC, name`,
      ),
      values: db.prepare(values('')),
      // ClickHouse's ILIKE: `%` and `_` are wildcards, a backslash escapes.
      search: db.prepare(values("WHERE v LIKE ? ESCAPE '\\'")),
      personsOf: db.prepare(
        `SELECT DISTINCT p.id, p.uuid, p.properties, p.is_identified, p.created_at FROM person_distinct_ids d JOIN persons p ON p.id = d.person_id
         WHERE d.team_id = ? AND d.distinct_id IN (SELECT value FROM json_each(?)) ORDER BY p.created_at DESC, p.id DESC`,
      ),
      distinctIdsOf: db.prepare(
        'SELECT person_id, distinct_id FROM person_distinct_ids WHERE person_id IN (SELECT value FROM json_each(?)) ORDER BY distinct_id',
      ),
    }
  }

  find(teamId: number, groupTypeIndex: number, groupKey: string): GroupRecord | null {
    const row = this.s.find.get(teamId, groupTypeIndex, groupKey)
    return row ? toGroup(row) : null
  }

  /** The groups of one type with these keys that exist, in key order. */
  byKeys(teamId: number, groupTypeIndex: number, keys: readonly string[]): GroupRecord[] {
    return keys.length === 0 ? [] : this.s.byKeys.all(teamId, groupTypeIndex, JSON.stringify(keys)).map(toGroup)
  }

  /** Per group type index, the property keys of its groups with how many groups have each, most common first. */
  propertyDefinitions(teamId: number): Record<string, Array<{ name: string; count: number }>> {
    const out: Record<string, Array<{ name: string; count: number }>> = {}
    for (const row of this.s.definitions.all(teamId)) (out[String(row.group_type_index)] ??= []).push({ name: row.name, count: row.count })
    return out
  }

  /** The most common values of a property among a type's groups, with `search` those matching `%search%`. */
  propertyValues(teamId: number, groupTypeIndex: number, key: string, search: string | null): Array<{ name: string; count: number }> {
    return search
      ? this.s.search.all(teamId, groupTypeIndex, key, `%${search}%`, PROPERTY_VALUES_LIMIT)
      : this.s.values.all(teamId, groupTypeIndex, key, PROPERTY_VALUES_LIMIT)
  }

  /** The persons that own any of these distinct ids, newest first, each with all its distinct ids. */
  personsOf(teamId: number, distinctIds: readonly string[]): PersonWithDistinctIds[] {
    if (distinctIds.length === 0) return []
    const rows = this.s.personsOf.all(teamId, JSON.stringify(distinctIds))
    const ids = new Map<number, string[]>(rows.map((row) => [row.id, []]))
    for (const row of this.s.distinctIdsOf.all(JSON.stringify([...ids.keys()]))) ids.get(row.person_id)?.push(row.distinct_id)
    return rows.map((row) => ({ ...toPerson(row), distinct_ids: ids.get(row.id) ?? [] }))
  }
}
