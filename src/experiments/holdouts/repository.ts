/** SQL over `experiment_holdouts` and the experiments that name a holdout. No rules here: callers validate. */
import type { Db } from '../../storage/index.js'
import { toHoldoutRecord, type HoldoutRecord, type HoldoutRow } from './record.js'

export class HoldoutRepository {
  readonly #db: Db

  constructor(db: Db) {
    this.#db = db
  }

  get(teamId: number, id: number): HoldoutRecord | null {
    const row = this.#db.prepare('SELECT * FROM experiment_holdouts WHERE id = ? AND team_id = ?').get(id, teamId) as HoldoutRow | undefined
    return row ? toHoldoutRecord(row) : null
  }

  /** Newest first, as PostHog's `ordering = "-created_at"`. */
  list(teamId: number, limit: number, offset: number): { count: number; records: HoldoutRecord[] } {
    const count = (this.#db.prepare('SELECT COUNT(*) AS n FROM experiment_holdouts WHERE team_id = ?').get(teamId) as { n: number }).n
    const rows = this.#db
      .prepare('SELECT * FROM experiment_holdouts WHERE team_id = ? ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?')
      .all(teamId, limit, offset) as HoldoutRow[]
    return { count, records: rows.map(toHoldoutRecord) }
  }

  insert(record: Omit<HoldoutRecord, 'id'>): number {
    const info = this.#db
      .prepare(
        `INSERT INTO experiment_holdouts (team_id, name, description, filters, created_by_id, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(record.team_id, record.name, record.description, JSON.stringify(record.filters), record.created_by_id, record.created_at, record.updated_at)
    return Number(info.lastInsertRowid)
  }

  update(record: HoldoutRecord): void {
    this.#db
      .prepare('UPDATE experiment_holdouts SET name = ?, description = ?, filters = ?, updated_at = ? WHERE id = ? AND team_id = ?')
      .run(record.name, record.description, JSON.stringify(record.filters), record.updated_at, record.id, record.team_id)
  }

  /** Deletes the holdout; its experiments are left without one (PostHog's SET_NULL). */
  delete(teamId: number, id: number): void {
    this.#db.prepare('UPDATE experiments SET holdout_id = NULL WHERE team_id = ? AND holdout_id = ?').run(teamId, id)
    this.#db.prepare('DELETE FROM experiment_holdouts WHERE id = ? AND team_id = ?').run(id, teamId)
  }

  /** The flags of every experiment naming the holdout, deleted experiments too (PostHog's `experiment_set.all()`). */
  experimentFlagIds(teamId: number, id: number): number[] {
    const rows = this.#db
      .prepare('SELECT DISTINCT feature_flag_id AS f FROM experiments WHERE team_id = ? AND holdout_id = ?')
      .all(teamId, id) as { f: number }[]
    return rows.map((r) => r.f)
  }
}
