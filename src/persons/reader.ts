/**
 * The read side of persons.db, for flag evaluation and the API. Works on a read-only connection (WAL lets
 * it read while the consumer thread writes); every statement is prepared once. `HashKeyOverrideWriter` is
 * the one write that happens outside ingestion (experience continuity, §1.9) and needs a writable connection.
 */
import type { Statement, Transaction } from 'better-sqlite3'
import { isPlainObject, type JsonObject } from '../common/json.js'
import type { Db } from '../storage/index.js'
import type { PropertyNode } from '../storage/events/index.js'
import { groupsWhere, personsWhere, type GroupFilters, type PersonFilters } from './list-filters.js'

export interface PersonRecord {
  /** Row id: what cohorts and hash-key overrides reference. */
  id: number
  uuid: string
  properties: JsonObject
  is_identified: boolean
  /** ISO 8601. */
  created_at: string
}

export interface PersonWithDistinctIds extends PersonRecord {
  distinct_ids: string[]
}

export interface GroupRecord {
  group_type_index: number
  group_key: string
  group_properties: JsonObject
  created_at: string
}

export interface GroupTypeRecord {
  group_type: string
  group_type_index: number
  name_singular: string | null
  name_plural: string | null
}

export interface IngestionWarningRecord {
  type: string
  source: string
  details: JsonObject
  /** ISO 8601. */
  timestamp: string
}

export interface PersonListFilter extends PersonFilters {
  limit: number
  offset: number
}

interface PersonRowDb {
  id: number
  uuid: string
  properties: string
  is_identified: number
  created_at: string
}

function parseObject(text: string): JsonObject {
  try {
    const value = JSON.parse(text) as unknown
    return isPlainObject(value) ? value : {}
  } catch {
    return {}
  }
}

function toPerson(row: PersonRowDb): PersonRecord {
  return {
    id: row.id,
    uuid: row.uuid,
    properties: parseObject(row.properties),
    is_identified: row.is_identified === 1,
    created_at: row.created_at,
  }
}

/** True when any filter is set: the list then needs a statement of its own. */
function filtered(filter: PersonFilters & GroupFilters): boolean {
  return Boolean(filter.distinctId || filter.email || filter.search || filter.groupKey || filter.properties?.length)
}

/** A row's identity for the read cache: a person's id (a group's is 0) and its version. */
interface Stamp {
  id: number
  version: number
}

/** The id of an entry that remembers there is no such row. */
const ABSENT = -1

interface Entry {
  value: Readonly<PersonRecord> | JsonObject | null
  /** The persons.db generation in which the value was read or last found unchanged. */
  generation: number
  id: number
  version: number
}

/** Entries kept by the read cache before it starts over (≈2 KB each for a person with 20 properties). */
const READ_CACHE_MAX = 10_000
/** How often the read cache asks persons.db whether anything changed (see #freshCache). */
export const CHECK_EVERY_MS = 1

export class PersonReader {
  /**
   * Persons and group properties as last read, for /decide: parsing a person's properties was a quarter of a
   * 50-flag request. Each entry was read in some generation of persons.db; a generation ends when
   * `PRAGMA data_version` moves, i.e. when any other connection (the consumer thread, another process)
   * commits. An entry of an earlier generation is checked before it is handed out again: its row's id and
   * version (every write of a person or group bumps its version; a merge moves the distinct id to another
   * id) are read, and only a changed row is read and parsed again. Under ingestion persons.db commits many
   * times a second, and emptying the cache at each commit made every /decide a first-time read: a new
   * object, so the work /decide keeps beside a person's properties (flags/evaluate.ts) was lost as well.
   * Entries are frozen: shared. Every read made CHECK_EVERY_MS after a commit sees it.
   */
  readonly #cache = new Map<string, Entry>()
  #cacheVersion = -1
  #generation = 0
  #checkedAt = Number.NEGATIVE_INFINITY

  private readonly s: {
    dataVersion: Statement<[], number>
    personFor: Statement<[number, string], PersonRowDb & { version: number }>
    personStamp: Statement<[number, string], Stamp>
    groupTypes: Statement<[number], GroupTypeRecord>
    groupProperties: Statement<[number, number, string], Stamp & { properties: string }>
    groupStamp: Statement<[number, number, string], Stamp>
    cohorts: Statement<[number], { cohort_id: number }>
    overrides: Statement<[number, string], { person_id: number; feature_flag_key: string; hash_key: string }>
    listPersons: Statement<[number, number, number], PersonRowDb>
    countPersons: Statement<[number], { n: number }>
    distinctIdsOf: Statement<[string], { person_id: number; distinct_id: string }>
    distinctIdsOfUuid: Statement<[number, string], { distinct_id: string | null }>
    listGroups: Statement<[number, number, number, number], { group_key: string; properties: string; created_at: string }>
    countGroups: Statement<[number, number], { n: number }>
    listWarnings: Statement<[number, number, number], { type: string; source: string; details: string; timestamp: string }>
    countWarnings: Statement<[number], { n: number }>
    personsAfter: Statement<[number, number, number], { id: number; properties: string; distinct_id: string | null }>
    groupsAfter: Statement<[number, number, string, number], { group_key: string; properties: string }>
  }

  readonly #db: Db

  constructor(db: Db) {
    this.#db = db
    this.s = {
      dataVersion: db.prepare<[], number>('PRAGMA data_version').pluck(),
      personFor: db.prepare(
        `SELECT p.id, p.uuid, p.properties, p.is_identified, p.created_at, p.version
         FROM person_distinct_ids d JOIN persons p ON p.id = d.person_id
         WHERE d.team_id = ? AND d.distinct_id = ?`,
      ),
      personStamp: db.prepare(
        `SELECT p.id, p.version FROM person_distinct_ids d JOIN persons p ON p.id = d.person_id
         WHERE d.team_id = ? AND d.distinct_id = ?`,
      ),
      groupTypes: db.prepare(
        `SELECT group_type, group_type_index, name_singular, name_plural
         FROM group_type_mappings WHERE team_id = ? ORDER BY group_type_index`,
      ),
      groupProperties: db.prepare('SELECT properties, 0 AS id, version FROM groups WHERE team_id = ? AND group_type_index = ? AND group_key = ?'),
      groupStamp: db.prepare('SELECT 0 AS id, version FROM groups WHERE team_id = ? AND group_type_index = ? AND group_key = ?'),
      cohorts: db.prepare('SELECT cohort_id FROM cohort_people WHERE person_id = ? ORDER BY cohort_id'),
      overrides: db.prepare(
        `SELECT person_id, feature_flag_key, hash_key FROM hash_key_overrides
         WHERE team_id = ? AND person_id IN (SELECT value FROM json_each(?))`,
      ),
      listPersons: db.prepare(
        `SELECT id, uuid, properties, is_identified, created_at FROM persons
         WHERE team_id = ? ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?`,
      ),
      countPersons: db.prepare('SELECT COUNT(*) AS n FROM persons WHERE team_id = ?'),
      distinctIdsOf: db.prepare(
        `SELECT person_id, distinct_id FROM person_distinct_ids
         WHERE person_id IN (SELECT value FROM json_each(?)) ORDER BY distinct_id`,
      ),
      distinctIdsOfUuid: db.prepare(
        `SELECT d.distinct_id FROM persons p LEFT JOIN person_distinct_ids d ON d.person_id = p.id
         WHERE p.team_id = ? AND p.uuid = ? ORDER BY d.distinct_id`,
      ),
      listGroups: db.prepare(
        `SELECT group_key, properties, created_at FROM groups WHERE team_id = ? AND group_type_index = ?
         ORDER BY created_at DESC, group_key DESC LIMIT ? OFFSET ?`,
      ),
      countGroups: db.prepare('SELECT COUNT(*) AS n FROM groups WHERE team_id = ? AND group_type_index = ?'),
      listWarnings: db.prepare(
        `SELECT type, source, details, timestamp FROM ingestion_warnings
         WHERE team_id = ? ORDER BY id DESC LIMIT ? OFFSET ?`,
      ),
      countWarnings: db.prepare('SELECT COUNT(*) AS n FROM ingestion_warnings WHERE team_id = ?'),
      personsAfter: db.prepare(
        `SELECT p.id, p.properties, (SELECT MIN(d.distinct_id) FROM person_distinct_ids d WHERE d.person_id = p.id) AS distinct_id
         FROM persons p WHERE p.team_id = ? AND p.id > ? ORDER BY p.id LIMIT ?`,
      ),
      groupsAfter: db.prepare(
        'SELECT group_key, properties FROM groups WHERE team_id = ? AND group_type_index = ? AND group_key > ? ORDER BY group_key LIMIT ?',
      ),
    }
  }

  /**
   * Persons of the project in id order after `afterId`, with one of their distinct ids (the smallest), for
   * walking every person in batches (keyset paging).
   */
  personsAfter(teamId: number, afterId: number, limit: number): Array<{ id: number; distinctId: string; properties: JsonObject }> {
    return this.s.personsAfter
      .all(teamId, afterId, limit)
      .map((r) => ({ id: r.id, distinctId: r.distinct_id ?? '', properties: JSON.parse(r.properties) as JsonObject }))
  }

  /** Groups of one type in key order after `afterKey`. */
  groupsAfter(teamId: number, groupTypeIndex: number, afterKey: string, limit: number): Array<{ key: string; properties: JsonObject }> {
    return this.s.groupsAfter
      .all(teamId, groupTypeIndex, afterKey, limit)
      .map((r) => ({ key: r.group_key, properties: JSON.parse(r.properties) as JsonObject }))
  }

  /**
   * The cache, its generation moved on first if persons.db changed since the last check. The check itself
   * is a read transaction (≈8 µs, as much as the rest of a 50-flag /decide), so it runs at most once per
   * CHECK_EVERY_MS: a read may miss a commit made less than that long ago, as if it had arrived that much sooner.
   */
  #freshCache(): Map<string, Entry> {
    if (this.#cache.size >= READ_CACHE_MAX) this.#cache.clear()
    const now = performance.now()
    if (now - this.#checkedAt >= CHECK_EVERY_MS) {
      this.#checkedAt = now
      const version = this.s.dataVersion.get()!
      if (version !== this.#cacheVersion) {
        this.#generation++
        this.#cacheVersion = version
      }
    }
    return this.#cache
  }

  /**
   * `key`'s cached value while its row is unchanged (`stamp` reads the row's id and version, undefined when
   * there is none), else `load()`'s (frozen by the loader), remembered.
   */
  #cached<T extends Entry['value']>(key: string, stamp: () => Stamp | undefined, load: () => { value: T; stamp: Stamp | undefined }): T {
    const cache = this.#freshCache()
    const entry = cache.get(key)
    if (entry !== undefined) {
      if (entry.generation === this.#generation) return entry.value as T
      const current = stamp()
      if (current === undefined ? entry.id === ABSENT : current.id === entry.id && current.version === entry.version) {
        entry.generation = this.#generation
        return entry.value as T
      }
    }
    const loaded = load()
    cache.set(key, { value: loaded.value, generation: this.#generation, id: loaded.stamp?.id ?? ABSENT, version: loaded.stamp?.version ?? 0 })
    return loaded.value
  }

  /** The person of a distinct id (cached; the record and its properties are frozen). */
  personFor(teamId: number, distinctId: string): Readonly<PersonRecord> | null {
    return this.#cached(
      `p${teamId}:${distinctId}`,
      () => this.s.personStamp.get(teamId, distinctId),
      () => {
        const row = this.s.personFor.get(teamId, distinctId)
        if (!row) return { value: null, stamp: undefined }
        const person = toPerson(row)
        Object.freeze(person.properties)
        return { value: Object.freeze(person), stamp: row }
      },
    )
  }

  /** Group type index (as a string, the JSON key PostHog uses) → group type name. */
  groupTypeMapping(teamId: number): Record<string, string> {
    const mapping: Record<string, string> = {}
    for (const row of this.s.groupTypes.all(teamId)) mapping[String(row.group_type_index)] = row.group_type
    return mapping
  }

  groupTypes(teamId: number): GroupTypeRecord[] {
    return this.s.groupTypes.all(teamId)
  }

  /** A group's properties (cached and frozen, like persons). */
  groupProperties(teamId: number, groupTypeIndex: number, groupKey: string): JsonObject | null {
    return this.#cached(
      `g${teamId}:${groupTypeIndex}:${groupKey}`,
      () => this.s.groupStamp.get(teamId, groupTypeIndex, groupKey),
      () => {
        const row = this.s.groupProperties.get(teamId, groupTypeIndex, groupKey)
        return row ? { value: Object.freeze(parseObject(row.properties)), stamp: row } : { value: null, stamp: undefined }
      },
    )
  }

  staticCohortIdsFor(personId: number): number[] {
    return this.s.cohorts.all(personId).map((row) => row.cohort_id)
  }

  /**
   * Hash-key overrides of the given persons, flag key → hash key. When several persons have one for the same
   * flag, the person listed first wins (pass the person of `distinct_id` before that of `$anon_distinct_id`).
   */
  hashKeyOverrides(teamId: number, personIds: readonly number[]): Record<string, string> {
    if (personIds.length === 0) return {}
    const rank = new Map(personIds.map((id, i) => [id, i] as const))
    const best = new Map<string, { rank: number; hashKey: string }>()
    for (const row of this.s.overrides.all(teamId, JSON.stringify(personIds))) {
      const r = rank.get(row.person_id) ?? Number.MAX_SAFE_INTEGER
      const current = best.get(row.feature_flag_key)
      if (!current || r < current.rank) best.set(row.feature_flag_key, { rank: r, hashKey: row.hash_key })
    }
    const out: Record<string, string> = {}
    for (const [flagKey, { hashKey }] of best) out[flagKey] = hashKey
    return out
  }

  /** Persons of a project, newest first (PostHog's `-created_at, -id`), each with its distinct ids, filtered. */
  listPersons(teamId: number, filter: PersonListFilter): PersonWithDistinctIds[] {
    let rows: PersonRowDb[]
    if (!filtered(filter)) {
      rows = this.s.listPersons.all(teamId, filter.limit, filter.offset)
    } else {
      const where = personsWhere(teamId, filter)
      rows = this.#db
        .prepare(`SELECT id, uuid, properties, is_identified, created_at FROM persons WHERE ${where.sql} ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?`)
        .all(...where.params, filter.limit, filter.offset) as PersonRowDb[]
    }
    if (rows.length === 0) return []
    const ids = new Map<number, string[]>(rows.map((row) => [row.id, []]))
    for (const row of this.s.distinctIdsOf.all(JSON.stringify([...ids.keys()]))) ids.get(row.person_id)?.push(row.distinct_id)
    return rows.map((row) => ({ ...toPerson(row), distinct_ids: ids.get(row.id) ?? [] }))
  }

  /** The distinct ids of the person with this uuid, or null when the project has no such person. */
  distinctIdsOfPerson(teamId: number, uuid: string): string[] | null {
    const rows = this.s.distinctIdsOfUuid.all(teamId, uuid.toLowerCase())
    if (rows.length === 0) return null
    return rows.flatMap((r) => (r.distinct_id === null ? [] : [r.distinct_id]))
  }

  /**
   * The distinct ids of the project's persons whose properties meet every filter, or null once their text
   * passes `maxChars` (read no further).
   */
  distinctIdsMatching(teamId: number, properties: readonly PropertyNode[], maxChars: number): string[] | null {
    const where = personsWhere(teamId, { properties })
    const ids: string[] = []
    let chars = 0
    const rows = this.#db
      .prepare(`SELECT distinct_id FROM person_distinct_ids WHERE team_id = ? AND person_id IN (SELECT id FROM persons WHERE ${where.sql})`)
      .pluck()
      .iterate(teamId, ...where.params) as IterableIterator<string>
    for (const id of rows) {
      chars += id.length
      if (chars > maxChars) {
        rows.return?.()
        return null
      }
      ids.push(id)
    }
    return ids
  }

  countPersons(teamId: number, filter: PersonFilters = {}): number {
    if (!filtered(filter)) return this.s.countPersons.get(teamId)?.n ?? 0
    const where = personsWhere(teamId, filter)
    return (this.#db.prepare(`SELECT COUNT(*) AS n FROM persons WHERE ${where.sql}`).get(...where.params) as { n: number }).n
  }

  /** Groups of one type, newest first (as PostHog: created_at, then key, descending), filtered. */
  listGroups(teamId: number, groupTypeIndex: number, limit: number, offset: number, filter: GroupFilters = {}): GroupRecord[] {
    type Row = { group_key: string; properties: string; created_at: string }
    let rows: Row[]
    if (!filtered(filter)) {
      rows = this.s.listGroups.all(teamId, groupTypeIndex, limit, offset)
    } else {
      const where = groupsWhere(teamId, groupTypeIndex, filter)
      rows = this.#db
        .prepare(`SELECT group_key, properties, created_at FROM groups WHERE ${where.sql} ORDER BY created_at DESC, group_key DESC LIMIT ? OFFSET ?`)
        .all(...where.params, limit, offset) as Row[]
    }
    return rows.map((row) => ({
      group_type_index: groupTypeIndex,
      group_key: row.group_key,
      group_properties: parseObject(row.properties),
      created_at: row.created_at,
    }))
  }

  countGroups(teamId: number, groupTypeIndex: number, filter: GroupFilters = {}): number {
    if (!filtered(filter)) return this.s.countGroups.get(teamId, groupTypeIndex)?.n ?? 0
    const where = groupsWhere(teamId, groupTypeIndex, filter)
    return (this.#db.prepare(`SELECT COUNT(*) AS n FROM groups WHERE ${where.sql}`).get(...where.params) as { n: number }).n
  }

  /** Ingestion warnings of a project, newest first. */
  listIngestionWarnings(teamId: number, limit: number, offset: number): IngestionWarningRecord[] {
    return this.s.listWarnings.all(teamId, limit, offset).map((row) => ({
      type: row.type,
      source: row.source,
      details: parseObject(row.details),
      timestamp: row.timestamp,
    }))
  }

  countIngestionWarnings(teamId: number): number {
    return this.s.countWarnings.get(teamId)?.n ?? 0
  }
}

/**
 * Experience continuity (§1.9): records `hashKey` as the bucketing key of each flag for each existing person,
 * unless one of those persons already has an override for that flag ("first override wins").
 */
export class HashKeyOverrideWriter {
  private readonly existingPersons: Statement<[string, number], { id: number }>
  private readonly existingFlags: Statement<[number, string], { feature_flag_key: string }>
  private readonly insert: Statement<[number, number, string, string]>
  private readonly writeAll: Transaction<(teamId: number, personIds: readonly number[], flagKeys: readonly string[], hashKey: string) => number>

  constructor(db: Db) {
    this.existingPersons = db.prepare('SELECT id FROM persons WHERE id IN (SELECT value FROM json_each(?)) AND team_id = ?')
    this.existingFlags = db.prepare(
      `SELECT DISTINCT feature_flag_key FROM hash_key_overrides
       WHERE team_id = ? AND person_id IN (SELECT value FROM json_each(?))`,
    )
    this.insert = db.prepare(
      'INSERT OR IGNORE INTO hash_key_overrides (team_id, person_id, feature_flag_key, hash_key) VALUES (?, ?, ?, ?)',
    )
    this.writeAll = db.transaction((teamId: number, personIds: readonly number[], flagKeys: readonly string[], hashKey: string) => {
      const ids = JSON.stringify(personIds)
      const persons = this.existingPersons.all(ids, teamId).map((row) => row.id)
      if (persons.length === 0) return 0
      const taken = new Set(this.existingFlags.all(teamId, ids).map((row) => row.feature_flag_key))
      let written = 0
      for (const flagKey of new Set(flagKeys)) {
        if (taken.has(flagKey)) continue
        for (const personId of persons) written += this.insert.run(teamId, personId, flagKey, hashKey).changes
      }
      return written
    })
  }

  /** Returns how many override rows were written. */
  writeHashKeyOverrides(teamId: number, personIds: readonly number[], flagKeys: readonly string[], hashKey: string): number {
    if (personIds.length === 0 || flagKeys.length === 0) return 0
    // IMMEDIATE: the consumer thread writes persons.db; a deferred read-then-write could not upgrade.
    return this.writeAll.immediate(teamId, personIds, flagKeys, hashKey)
  }
}
