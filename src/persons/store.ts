/**
 * The write side of persons.db for the persons stage: persons and their distinct ids, merges, personless
 * distinct ids. Statements are prepared once; recently used persons stay in a bounded LRU keyed by
 * (team, distinct id), including "no person" answers, so a busy distinct id costs no query.
 *
 * The consumer thread is the only writer of these tables, so the cache can only go stale through this class,
 * which keeps it current. After a rollback the caller must call `resetCache()`.
 */
import type { Statement } from 'better-sqlite3'
import { uuidv5, uuidv7 } from '../common/ids.js'
import type { JsonObject } from '../common/json.js'
import { Lru } from '../geoip/index.js'
import type { Db } from '../storage/index.js'

/** PostHog's namespace for person uuids derived from `${team_id}:${distinct_id}`. */
export const PERSON_UUID_NAMESPACE = '932979b4-65c3-4424-8467-0b66ec27bc22'

export function personUuidFor(teamId: number, distinctId: string): string {
  return uuidv5(`${teamId}:${distinctId}`, PERSON_UUID_NAMESPACE)
}

export interface Person {
  /** Row id in persons.db (what cohorts, hash-key overrides and distinct ids reference). */
  readonly id: number
  readonly uuid: string
  readonly teamId: number
  properties: JsonObject
  isIdentified: boolean
  version: number
  /** ISO 8601 with milliseconds and Z. */
  createdAt: string
  /** Set when this person was merged away: every cached reference then resolves to the survivor. */
  mergedInto: Person | null
}

interface PersonRowDb {
  id: number
  uuid: string
  properties: string
  is_identified: number
  version: number
  created_at: string
}

const NO_PERSON = null

/**
 * The cached form of properties just written: parsed back from their JSON. Built key by key (copyObject), a
 * person's ≈50 properties are a dictionary-mode object of ≈3.2 KB; parsed, ≈1.3 KB, and the cache holds up
 * to 20,000 persons. It also equals what a later read from persons.db gives.
 */
function compact(json: string): JsonObject {
  return JSON.parse(json) as JsonObject
}

export class PersonStore {
  private readonly cache: Lru<string, Person | typeof NO_PERSON>
  private readonly personless: Lru<string, true>
  private readonly s: {
    byDistinctId: Statement<[number, string], PersonRowDb>
    insertPerson: Statement<[string, number, string, number, number, string]>
    insertDistinctId: Statement<[number, string, number]>
    updatePerson: Statement<[string, number, number, string, number]>
    moveDistinctIds: Statement<[number, number]>
    moveCohorts: Statement<[number, number]>
    dropCohorts: Statement<[number]>
    copyOverrides: Statement<[number, number, number]>
    dropOverrides: Statement<[number]>
    deletePerson: Statement<[number]>
    insertPersonless: Statement<[number, string]>
    selectPersonless: Statement<[number, string], { one: number }>
    idsByUuid: Statement<[number, string], number>
    idsByDistinctId: Statement<[number, string], number>
    distinctIdsOf: Statement<[number], string>
    dropDistinctIds: Statement<[number]>
    byUuid: Statement<[number, string], { id: number; version: number }>
    moveDistinctId: Statement<[number, number, string]>
  }

  constructor(private readonly db: Db, cacheSize: number) {
    this.cache = new Lru(cacheSize)
    this.personless = new Lru(cacheSize)
    this.s = {
      byDistinctId: db.prepare(
        `SELECT p.id, p.uuid, p.properties, p.is_identified, p.version, p.created_at
         FROM person_distinct_ids d JOIN persons p ON p.id = d.person_id
         WHERE d.team_id = ? AND d.distinct_id = ?`,
      ),
      insertPerson: db.prepare(
        `INSERT INTO persons (uuid, team_id, properties, is_identified, version, created_at)
         VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (uuid) DO NOTHING`,
      ),
      insertDistinctId: db.prepare('INSERT INTO person_distinct_ids (team_id, distinct_id, person_id) VALUES (?, ?, ?)'),
      updatePerson: db.prepare('UPDATE persons SET properties = ?, is_identified = ?, version = ?, created_at = ? WHERE id = ?'),
      moveDistinctIds: db.prepare('UPDATE person_distinct_ids SET person_id = ? WHERE person_id = ?'),
      moveCohorts: db.prepare('UPDATE OR IGNORE cohort_people SET person_id = ? WHERE person_id = ?'),
      dropCohorts: db.prepare('DELETE FROM cohort_people WHERE person_id = ?'),
      copyOverrides: db.prepare(
        `INSERT OR IGNORE INTO hash_key_overrides (team_id, person_id, feature_flag_key, hash_key)
         SELECT team_id, ?, feature_flag_key, hash_key FROM hash_key_overrides WHERE team_id = ? AND person_id = ?`,
      ),
      dropOverrides: db.prepare('DELETE FROM hash_key_overrides WHERE person_id = ?'),
      deletePerson: db.prepare('DELETE FROM persons WHERE id = ?'),
      insertPersonless: db.prepare('INSERT OR IGNORE INTO personless_distinct_ids (team_id, distinct_id) VALUES (?, ?)'),
      selectPersonless: db.prepare('SELECT 1 AS one FROM personless_distinct_ids WHERE team_id = ? AND distinct_id = ?'),
      idsByUuid: db.prepare<[number, string], number>('SELECT id FROM persons WHERE team_id = ? AND uuid IN (SELECT value FROM json_each(?))').pluck(),
      idsByDistinctId: db
        .prepare<[number, string], number>('SELECT DISTINCT person_id FROM person_distinct_ids WHERE team_id = ? AND distinct_id IN (SELECT value FROM json_each(?))')
        .pluck(),
      distinctIdsOf: db.prepare<[number], string>('SELECT distinct_id FROM person_distinct_ids WHERE person_id = ?').pluck(),
      dropDistinctIds: db.prepare('DELETE FROM person_distinct_ids WHERE person_id = ?'),
      byUuid: db.prepare('SELECT id, version FROM persons WHERE team_id = ? AND uuid = ?'),
      moveDistinctId: db.prepare('UPDATE person_distinct_ids SET person_id = ? WHERE team_id = ? AND distinct_id = ?'),
    }
  }

  private key(teamId: number, distinctId: string): string {
    return `${teamId}:${distinctId}`
  }

  /** The person a distinct id belongs to, or null. */
  fetch(teamId: number, distinctId: string): Person | null {
    const key = this.key(teamId, distinctId)
    const cached = this.cache.get(key)
    if (cached !== undefined) {
      if (cached === NO_PERSON || cached.mergedInto === null) return cached
      let survivor = cached
      while (survivor.mergedInto !== null) survivor = survivor.mergedInto
      this.cache.set(key, survivor)
      return survivor
    }
    const row = this.s.byDistinctId.get(teamId, distinctId)
    const person: Person | null = row
      ? {
          id: row.id,
          uuid: row.uuid,
          teamId,
          properties: JSON.parse(row.properties) as JsonObject,
          isIdentified: row.is_identified === 1,
          version: row.version,
          createdAt: row.created_at,
          mergedInto: null,
        }
      : null
    this.cache.set(key, person)
    return person
  }

  /**
   * Creates a person owning `distinctIds` (none of which may have a person). Its uuid is derived from the
   * first id as in PostHog, so events stored before the person existed already carry it; should that uuid
   * be taken (a person deleted and its ids reused), a fresh UUIDv7 is used.
   */
  create(teamId: number, distinctIds: readonly string[], properties: JsonObject, isIdentified: boolean, createdAt: string): Person {
    const json = JSON.stringify(properties)
    let uuid = personUuidFor(teamId, distinctIds[0])
    let result = this.s.insertPerson.run(uuid, teamId, json, isIdentified ? 1 : 0, 0, createdAt)
    if (result.changes === 0) {
      uuid = uuidv7()
      result = this.s.insertPerson.run(uuid, teamId, json, isIdentified ? 1 : 0, 0, createdAt)
    }
    const person: Person = {
      id: Number(result.lastInsertRowid),
      uuid,
      teamId,
      properties: compact(json),
      isIdentified,
      version: 0,
      createdAt,
      mergedInto: null,
    }
    for (const distinctId of distinctIds) this.addDistinctId(person, distinctId)
    return person
  }

  addDistinctId(person: Person, distinctId: string): void {
    this.s.insertDistinctId.run(person.teamId, distinctId, person.id)
    this.cache.set(this.key(person.teamId, distinctId), person)
  }

  /** Writes the person's current fields (the caller has changed them and bumped the version). */
  save(person: Person): void {
    const json = JSON.stringify(person.properties)
    this.s.updatePerson.run(json, person.isIdentified ? 1 : 0, person.version, person.createdAt, person.id)
    person.properties = compact(json)
  }

  /**
   * Moves everything of `source` to `target` and deletes `source`: distinct ids, static cohort memberships
   * and feature-flag hash-key overrides (the target's own overrides win on conflict). `target` must already
   * hold its merged fields; it is saved here.
   */
  merge(source: Person, target: Person): void {
    this.save(target)
    this.s.moveCohorts.run(target.id, source.id)
    this.s.dropCohorts.run(source.id)
    this.s.copyOverrides.run(target.id, source.teamId, source.id)
    this.s.dropOverrides.run(source.id)
    this.s.moveDistinctIds.run(target.id, source.id)
    this.s.deletePerson.run(source.id)
    source.mergedInto = target
  }

  /**
   * Deletes the project's persons with these uuids or owning these distinct ids: the person, its distinct ids,
   * static cohort memberships and hash-key overrides. Returns the distinct ids they had; each is "no person"
   * from now on, so its next event creates a new one.
   */
  deletePersons(teamId: number, uuids: readonly string[], distinctIds: readonly string[]): string[] {
    const ids = new Set([...this.s.idsByUuid.all(teamId, JSON.stringify(uuids)), ...this.s.idsByDistinctId.all(teamId, JSON.stringify(distinctIds))])
    const freed: string[] = []
    for (const id of ids) {
      for (const distinctId of this.s.distinctIdsOf.all(id)) {
        freed.push(distinctId)
        this.cache.set(this.key(teamId, distinctId), NO_PERSON)
      }
      this.s.dropCohorts.run(id)
      this.s.dropOverrides.run(id)
      this.s.dropDistinctIds.run(id)
      this.s.deletePerson.run(id)
    }
    return freed
  }

  /** The project's person with this uuid (row id and version), or null. */
  byUuid(teamId: number, uuid: string): { id: number; version: number } | null {
    return this.s.byUuid.get(teamId, uuid) ?? null
  }

  /** The distinct ids of a person (by row id), in no particular order. */
  distinctIdsOf(personId: number): string[] {
    return this.s.distinctIdsOf.all(personId)
  }

  /**
   * Moves a distinct id onto a new person of its own, without properties, as PostHog's split: its uuid is the
   * uuidv5 of the distinct id, or a fresh UUIDv7 when that is taken (by the person it leaves, when the split
   * keeps another id than the one it was created from). PostHog moves it onto the person holding that uuid instead.
   */
  splitOff(teamId: number, distinctId: string, version: number, createdAt: string): Person {
    let uuid = personUuidFor(teamId, distinctId)
    let result = this.s.insertPerson.run(uuid, teamId, '{}', 0, version, createdAt)
    if (result.changes === 0) {
      uuid = uuidv7()
      result = this.s.insertPerson.run(uuid, teamId, '{}', 0, version, createdAt)
    }
    const person: Person = { id: Number(result.lastInsertRowid), uuid, teamId, properties: {}, isIdentified: false, version, createdAt, mergedInto: null }
    this.s.moveDistinctId.run(person.id, teamId, distinctId)
    this.cache.set(this.key(teamId, distinctId), person)
    return person
  }

  /** Notes that a distinct id was used by a personless event while it had no person. */
  markPersonless(teamId: number, distinctId: string): void {
    const key = this.key(teamId, distinctId)
    if (this.personless.get(key)) return
    this.s.insertPersonless.run(teamId, distinctId)
    this.personless.set(key, true)
  }

  wasPersonless(teamId: number, distinctId: string): boolean {
    const key = this.key(teamId, distinctId)
    if (this.personless.get(key)) return true
    const found = this.s.selectPersonless.get(teamId, distinctId) !== undefined
    if (found) this.personless.set(key, true)
    return found
  }

  resetCache(): void {
    this.cache.clear()
    this.personless.clear()
  }
}
