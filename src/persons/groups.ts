/**
 * Group types and groups on ingestion, after PostHog's group-type-manager.ts and groups/group-update.ts:
 * each project gets up to five group types, indexed 0–4 in order of first sight; `$groupidentify` creates or
 * updates a group row, setting each `$group_set` key that is absent or different. The groups API's
 * `$delete_group_property` removes its `$group_unset` keys (PostHog's API writes that change itself).
 */
import type { Statement } from 'better-sqlite3'
import { copyObject, setOwn, type JsonObject } from '../common/json.js'
import { Lru } from '../geoip/index.js'
import type { Db } from '../storage/index.js'
import { parseObject } from './rows.js'

export const MAX_GROUP_TYPES_PER_TEAM = 5

export type GroupTypeResolution =
  | { index: number }
  /** Unknown type and not created (read-only lookup), or refused because the project has five types. */
  | { index: null; refused: boolean }

/**
 * Group properties after `$group_set`: keys absent or different are set. The comparison is JavaScript's loose
 * `!=`, as in PostHog, so `1` and `"1"` count as equal and objects always differ.
 */
export function mergeGroupProperties(current: JsonObject, set: JsonObject): { properties: JsonObject; changed: boolean } {
  let properties = current
  let changed = false
  for (const [key, value] of Object.entries(set)) {
    // eslint-disable-next-line eqeqeq
    if (!Object.hasOwn(properties, key) || value != properties[key]) {
      if (!changed) properties = copyObject(current)
      changed = true
      setOwn(properties, key, value)
    }
  }
  return { properties, changed }
}

/** Group properties without the `$group_unset` keys (strings; anything else names no key). */
export function unsetGroupProperties(current: JsonObject, keys: unknown): { properties: JsonObject; changed: boolean } {
  if (!Array.isArray(keys)) return { properties: current, changed: false }
  const present = keys.filter((key): key is string => typeof key === 'string' && Object.hasOwn(current, key))
  if (present.length === 0) return { properties: current, changed: false }
  const properties = copyObject(current)
  for (const key of present) delete properties[key]
  return { properties, changed: true }
}

export class GroupStore {
  /** team → (group type → index); loaded whole per team on first use. */
  private readonly types = new Lru<number, Map<string, number>>(4096)
  private readonly s: {
    types: Statement<[number], { group_type: string; group_type_index: number }>
    insertType: Statement<[number, string, number]>
    group: Statement<[number, number, string], { properties: string; version: number }>
    insertGroup: Statement<[number, number, string, string, string]>
    updateGroup: Statement<[string, number, number, string]>
  }

  constructor(db: Db) {
    this.s = {
      types: db.prepare('SELECT group_type, group_type_index FROM group_type_mappings WHERE team_id = ?'),
      insertType: db.prepare('INSERT INTO group_type_mappings (team_id, group_type, group_type_index) VALUES (?, ?, ?)'),
      group: db.prepare('SELECT properties, version FROM groups WHERE team_id = ? AND group_type_index = ? AND group_key = ?'),
      insertGroup: db.prepare(
        'INSERT INTO groups (team_id, group_type_index, group_key, properties, version, created_at) VALUES (?, ?, ?, ?, 1, ?)',
      ),
      updateGroup: db.prepare(
        'UPDATE groups SET properties = ?, version = version + 1 WHERE team_id = ? AND group_type_index = ? AND group_key = ?',
      ),
    }
  }

  private typesOf(teamId: number): Map<string, number> {
    let types = this.types.get(teamId)
    if (!types) {
      types = new Map(this.s.types.all(teamId).map((row) => [row.group_type, row.group_type_index]))
      this.types.set(teamId, types)
    }
    return types
  }

  /** The index of a group type; with `create`, a new type takes the lowest free index while one is left. */
  resolveType(teamId: number, groupType: string, create: boolean): GroupTypeResolution {
    const types = this.typesOf(teamId)
    const known = types.get(groupType)
    if (known !== undefined) return { index: known }
    if (!create) return { index: null, refused: false }
    const used = new Set(types.values())
    if (used.size >= MAX_GROUP_TYPES_PER_TEAM) return { index: null, refused: true }
    let index = 0
    while (used.has(index)) index++
    this.s.insertType.run(teamId, groupType, index)
    types.set(groupType, index)
    return { index }
  }

  /** Creates the group or applies `$group_set` to it. `createdAt` is used for a new group. */
  upsert(teamId: number, groupTypeIndex: number, groupKey: string, set: JsonObject, createdAt: string): void {
    const row = this.s.group.get(teamId, groupTypeIndex, groupKey)
    if (!row) {
      const { properties } = mergeGroupProperties({}, set)
      this.s.insertGroup.run(teamId, groupTypeIndex, groupKey, JSON.stringify(properties), createdAt)
      return
    }
    const { properties, changed } = mergeGroupProperties(parseObject(row.properties), set)
    if (changed) this.s.updateGroup.run(JSON.stringify(properties), teamId, groupTypeIndex, groupKey)
  }

  /** Removes the `$group_unset` keys from an existing group; a group that does not exist stays so. */
  unset(teamId: number, groupTypeIndex: number, groupKey: string, keys: unknown): void {
    const row = this.s.group.get(teamId, groupTypeIndex, groupKey)
    if (!row) return
    const { properties, changed } = unsetGroupProperties(parseObject(row.properties), keys)
    if (changed) this.s.updateGroup.run(JSON.stringify(properties), teamId, groupTypeIndex, groupKey)
  }

  resetCache(): void {
    this.types.clear()
  }
}
