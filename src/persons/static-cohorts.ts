/**
 * Static cohort membership in persons.db (`cohort_people`), written from the main thread (experiment
 * exposure cohorts). The consumer thread writes persons.db too; WAL and the busy timeout make these small
 * transactions wait their turn instead of failing. Needs a writable connection.
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
}
