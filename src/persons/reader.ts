/**
 * The read side of persons.db for flag evaluation (cached), and through `listing`, `groups`, `definitions`
 * (keyed lookups) and `scans` (the reads that scan, asked of a thread of their own by the service) for the API.
 * Works on a read-only connection (WAL lets it read while the consumer thread writes); every statement is
 * prepared once. The one write outside ingestion, experience continuity's overrides, is hash-key-overrides.ts.
 */
import type { Statement } from 'better-sqlite3'
import type { JsonObject } from '../common/json.js'
import type { Db } from '../storage/index.js'
import { DefinitionReads } from './definition-reads.js'
import { GroupReads } from './group-reads.js'
import { PersonListing } from './listing.js'
import { inPlaceScans, type PersonScans } from './scans.js'
import { parseObject, toPerson, type PersonRecord, type PersonRowDb } from './rows.js'

export interface GroupTypeRecord {
  group_type: string
  group_type_index: number
  name_singular: string | null
  name_plural: string | null
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
    personsAfter: Statement<[number, number, number], { id: number; properties: string; distinct_id: string | null }>
    groupsAfter: Statement<[number, number, string, number], { group_key: string; properties: string }>
  }

  /** The persons API's keyed lookups over the same connection (its lists are in `scans`). */
  readonly listing: Pick<PersonListing, 'personByUuid' | 'distinctIdsOfPerson'>
  /** The groups API's keyed lookups (find, by keys). */
  readonly groups: Pick<GroupReads, 'find' | 'byKeys'>
  /** Event and property definitions by id or name. */
  readonly definitions: Pick<DefinitionReads, 'event' | 'property' | 'hasEvents' | 'eventNamesSeen'>
  /** The API's reads that scan: the lists and their counts, searches, definitions lists, group property values. */
  readonly scans: PersonScans

  /** `scans` defaults to the same reads over `db` on the calling thread. */
  constructor(db: Db, scans: PersonScans = inPlaceScans(db)) {
    this.listing = new PersonListing(db)
    this.groups = new GroupReads(db)
    this.definitions = new DefinitionReads(db)
    this.scans = scans
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
}
