/**
 * Static cohort membership in persons.db (`cohort_people`), written from the main thread (experiment
 * exposure cohorts, cohorts from a flag, persons added or removed through the cohort API). The consumer
 * thread writes persons.db too; WAL and the busy timeout make these small transactions wait their turn
 * instead of failing. Needs a writable connection.
 */
import type { Statement, Transaction } from 'better-sqlite3'
import type { Db } from '../storage/index.js'

/** Distinct ids resolved per statement; well under SQLite's limits for json_each input. */
const CHUNK = 5000

export class StaticCohortWriter {
  readonly #personsOf: Statement<[number, string], { person_id: number }>
  readonly #clear: Statement<[number, number]>
  readonly #insert: Statement<[number, number, number]>
  readonly #replace: Transaction<(teamId: number, cohortId: number, distinctIds: readonly string[]) => number>
  readonly #personsByUuid: Statement<[number, string], { id: number }>
  readonly #remove: Statement<[number, number, number]>
  readonly #count: Statement<[number, number], { n: number }>
  readonly #add: Transaction<(teamId: number, cohortId: number, uuids: readonly string[]) => MembersChange>
  readonly #drop: Transaction<(teamId: number, cohortId: number, uuid: string) => MembersChange>
  readonly #personsByEmail: Statement<[number, string], { person_id: number }>
  readonly #addListed: Transaction<(teamId: number, cohortId: number, ids: readonly string[], kind: ListedId) => MembersChange>

  constructor(db: Db) {
    this.#personsOf = db.prepare(
      `SELECT DISTINCT person_id FROM person_distinct_ids
       WHERE team_id = ? AND distinct_id IN (SELECT value FROM json_each(?))`,
    )
    this.#clear = db.prepare('DELETE FROM cohort_people WHERE cohort_id = ? AND team_id = ?')
    this.#insert = db.prepare('INSERT OR IGNORE INTO cohort_people (cohort_id, person_id, team_id) VALUES (?, ?, ?)')
    this.#replace = db.transaction((teamId: number, cohortId: number, distinctIds: readonly string[]) => {
      this.#clear.run(cohortId, teamId)
      let written = 0
      for (let i = 0; i < distinctIds.length; i += CHUNK) {
        const chunk = JSON.stringify(distinctIds.slice(i, i + CHUNK))
        for (const { person_id } of this.#personsOf.all(teamId, chunk)) written += this.#insert.run(cohortId, person_id, teamId).changes
      }
      return written
    })
    this.#personsByUuid = db.prepare('SELECT id FROM persons WHERE team_id = ? AND uuid IN (SELECT value FROM json_each(?))')
    this.#remove = db.prepare('DELETE FROM cohort_people WHERE cohort_id = ? AND person_id = ? AND team_id = ?')
    this.#count = db.prepare('SELECT COUNT(*) AS n FROM cohort_people WHERE cohort_id = ? AND team_id = ?')
    this.#add = db.transaction((teamId: number, cohortId: number, uuids: readonly string[]) => {
      const persons = this.#personsByUuid.all(teamId, JSON.stringify(uuids.map((u) => u.toLowerCase())))
      for (const { id } of persons) this.#insert.run(cohortId, id, teamId)
      return { found: persons.length, count: this.#count.get(cohortId, teamId)!.n }
    })
    this.#personsByEmail = db.prepare(
      "SELECT id AS person_id FROM persons WHERE team_id = ? AND json_extract(properties, '$.email') IN (SELECT value FROM json_each(?))",
    )
    this.#addListed = db.transaction((teamId: number, cohortId: number, ids: readonly string[], kind: ListedId) => {
      const persons = new Set<number>()
      for (let i = 0; i < ids.length; i += CHUNK) {
        const chunk = JSON.stringify(ids.slice(i, i + CHUNK))
        for (const { person_id } of (kind === 'email' ? this.#personsByEmail : this.#personsOf).all(teamId, chunk)) persons.add(person_id)
      }
      for (const person of persons) this.#insert.run(cohortId, person, teamId)
      return { found: persons.size, count: this.#count.get(cohortId, teamId)!.n }
    })
    this.#drop = db.transaction((teamId: number, cohortId: number, uuid: string) => {
      const persons = this.#personsByUuid.all(teamId, JSON.stringify([uuid.toLowerCase()]))
      for (const { id } of persons) this.#remove.run(cohortId, id, teamId)
      return { found: persons.length, count: this.#count.get(cohortId, teamId)!.n }
    })
  }

  /**
   * Makes the persons of `distinctIds` (in the project) the whole membership of the cohort, in one
   * transaction; distinct ids without a person are skipped. Replacing rather than adding keeps the rows
   * right even if a cohort id is reused after a rolled-back creation. Returns how many persons it holds.
   */
  replaceMembers(teamId: number, cohortId: number, distinctIds: readonly string[]): number {
    // IMMEDIATE: the consumer thread writes persons.db; a deferred read-then-write could not upgrade.
    return this.#replace.immediate(teamId, cohortId, distinctIds)
  }

  /** Adds the persons of the project with these UUIDs (the others are skipped); already members stay once. */
  addPersons(teamId: number, cohortId: number, uuids: readonly string[]): MembersChange {
    return this.#add.immediate(teamId, cohortId, uuids)
  }

  /**
   * Adds the persons of the project a list names (a CSV upload): by distinct id or by the `email` person property
   * (by UUID: addPersons); names without a person are skipped, members already there stay once.
   */
  addListed(teamId: number, cohortId: number, ids: readonly string[], kind: ListedId): MembersChange {
    return this.#addListed.immediate(teamId, cohortId, ids, kind)
  }

  /** Removes the person of the project with this UUID, if a member; `found` 0 when the project has no such person. */
  removePerson(teamId: number, cohortId: number, uuid: string): MembersChange {
    return this.#drop.immediate(teamId, cohortId, uuid)
  }
}

/** How many of the given persons the project has, and how many members the cohort holds after the change. */
export interface MembersChange {
  found: number
  count: number
}

/** What a list of persons names them by, other than their UUIDs. */
export type ListedId = 'distinct_id' | 'email'
