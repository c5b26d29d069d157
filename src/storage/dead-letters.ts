/**
 * The dead-letter store: everything the pipeline could not store, with the reason, so nothing is dropped
 * without a record. `skylark dlq replay` marks rows; the running consumer picks marked rows up and tries
 * them again (the CLI never writes to the spool, which belongs to the server process).
 */
import { migrate, openDatabase, type Db } from './sqlite/database.js'
import { DEAD_LETTER_MIGRATIONS } from './sqlite/migrations/dead-letters.js'

/** Where the failure happened: `sink` (the event store refused the row), `persons`, or `spool` (damage). */
export type DeadLetterStage = 'sink' | 'persons' | 'spool'

export interface DeadLetterInput {
  lane: string
  stage: DeadLetterStage
  error: string
  /** The event (CapturedEvent JSON for persons, the stored row JSON for sink) or null when unreadable. */
  payload: string | null
}

export interface DeadLetter extends DeadLetterInput {
  id: number
  failed_at: string
  attempts: number
  replay_requested_at: string | null
}

export class DeadLetters {
  readonly #db: Db

  constructor(file: string) {
    this.#db = openDatabase(file)
    migrate(this.#db, DEAD_LETTER_MIGRATIONS)
  }

  add(entries: readonly DeadLetterInput[]): void {
    const insert = this.#db.prepare('INSERT INTO dead_letters (lane, stage, error, payload, failed_at) VALUES (?, ?, ?, ?, ?)')
    const now = new Date().toISOString()
    this.#db.transaction(() => {
      for (const e of entries) insert.run(e.lane, e.stage, e.error.slice(0, 2000), e.payload, now)
    })()
  }

  count(): number {
    return (this.#db.prepare('SELECT COUNT(*) AS n FROM dead_letters').get() as { n: number }).n
  }

  list(limit: number, offset = 0): DeadLetter[] {
    return this.#db.prepare('SELECT * FROM dead_letters ORDER BY id LIMIT ? OFFSET ?').all(limit, offset) as DeadLetter[]
  }

  /** Marks one row (or all) for replay; returns how many were marked. */
  requestReplay(id?: number): number {
    const now = new Date().toISOString()
    const result =
      id === undefined
        ? this.#db.prepare('UPDATE dead_letters SET replay_requested_at = ?').run(now)
        : this.#db.prepare('UPDATE dead_letters SET replay_requested_at = ? WHERE id = ?').run(now, id)
    return result.changes
  }

  replayRequested(limit: number): DeadLetter[] {
    return this.#db
      .prepare('SELECT * FROM dead_letters WHERE replay_requested_at IS NOT NULL ORDER BY id LIMIT ?')
      .all(limit) as DeadLetter[]
  }

  /** The replay succeeded: the row is stored now. */
  remove(ids: readonly number[]): void {
    const del = this.#db.prepare('DELETE FROM dead_letters WHERE id = ?')
    this.#db.transaction(() => ids.forEach((id) => del.run(id)))()
  }

  /** The replay failed again: keep the row, with the new error, and stop retrying until asked again. */
  replayFailed(id: number, error: string): void {
    this.#db
      .prepare('UPDATE dead_letters SET error = ?, attempts = attempts + 1, replay_requested_at = NULL WHERE id = ?')
      .run(error.slice(0, 2000), id)
  }

  close(): void {
    this.#db.close()
  }
}
