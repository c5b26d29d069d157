/** SQL over `experiment_saved_metrics` and `experiment_to_saved_metrics`. No rules here: callers validate and authorise. */
import type { JsonObject } from '../../common/json.js'
import { prepared, type Db } from '../../storage/sqlite/database.js'
import { toLink, toSavedMetric, toSavedMetricRow, type SavedMetricLinkRecord, type SavedMetricLinkRow, type SavedMetricRecord, type SavedMetricRow } from './record.js'

export class SavedMetricRepository {
  readonly #db: Db

  constructor(db: Db) {
    this.#db = db
  }

  get(teamId: number, id: number): SavedMetricRecord | null {
    const row = prepared(this.#db, 'SELECT * FROM experiment_saved_metrics WHERE id = ? AND team_id = ?').get(id, teamId) as SavedMetricRow | undefined
    return row ? toSavedMetric(row) : null
  }

  /** The project's metrics among `ids` (each once, whatever the list repeats). */
  many(teamId: number, ids: readonly number[]): SavedMetricRecord[] {
    const rows = prepared(this.#db, 'SELECT * FROM experiment_saved_metrics WHERE team_id = ? AND id IN (SELECT value FROM json_each(?))').all(teamId, JSON.stringify(ids)) as SavedMetricRow[]
    return rows.map(toSavedMetric)
  }

  /** All of the project's metrics, as PostHog orders them: by name, case-insensitively. */
  all(teamId: number): SavedMetricRecord[] {
    const rows = prepared(this.#db, 'SELECT * FROM experiment_saved_metrics WHERE team_id = ? ORDER BY lower(name), id').all(teamId) as SavedMetricRow[]
    return rows.map(toSavedMetric)
  }

  /** The names of the project's other metrics (PostHog's uniqueness check compares them case-insensitively). */
  names(teamId: number, exceptId: number | null): string[] {
    const rows = prepared(this.#db, 'SELECT name FROM experiment_saved_metrics WHERE team_id = ? AND id IS NOT ?').all(teamId, exceptId) as Array<{ name: string }>
    return rows.map((r) => r.name)
  }

  insert(record: Omit<SavedMetricRecord, 'id'>): number {
    const info = prepared(
      this.#db,
      `INSERT INTO experiment_saved_metrics (team_id, name, description, query, tags, created_by_id, created_at, updated_at)
       VALUES (@team_id, @name, @description, @query, @tags, @created_by_id, @created_at, @updated_at)`,
    ).run(toSavedMetricRow({ ...record, id: 0 }))
    return Number(info.lastInsertRowid)
  }

  update(record: SavedMetricRecord): void {
    prepared(
      this.#db,
      `UPDATE experiment_saved_metrics SET name = @name, description = @description, query = @query, tags = @tags, updated_at = @updated_at
       WHERE id = @id AND team_id = @team_id`,
    ).run(toSavedMetricRow(record))
  }

  /** Deletes the metric; its links go with it (ON DELETE CASCADE), as in PostHog. */
  delete(teamId: number, id: number): void {
    prepared(this.#db, 'DELETE FROM experiment_saved_metrics WHERE id = ? AND team_id = ?').run(id, teamId)
  }

  /** An experiment's links, oldest first (the order PostHog's reverse relation answers in). */
  links(experimentId: number): SavedMetricLinkRecord[] {
    const rows = prepared(this.#db, 'SELECT * FROM experiment_to_saved_metrics WHERE experiment_id = ? ORDER BY id').all(experimentId) as SavedMetricLinkRow[]
    return rows.map(toLink)
  }

  insertLink(experimentId: number, savedMetricId: number, metadata: JsonObject, now: string): void {
    prepared(
      this.#db,
      'INSERT INTO experiment_to_saved_metrics (experiment_id, saved_metric_id, metadata, created_at, updated_at) VALUES (?, ?, ?, ?, ?)',
    ).run(experimentId, savedMetricId, JSON.stringify(metadata), now, now)
  }

  updateLinkMetadata(id: number, metadata: JsonObject, now: string): void {
    prepared(this.#db, 'UPDATE experiment_to_saved_metrics SET metadata = ?, updated_at = ? WHERE id = ?').run(JSON.stringify(metadata), now, id)
  }

  deleteLink(id: number): void {
    prepared(this.#db, 'DELETE FROM experiment_to_saved_metrics WHERE id = ?').run(id)
  }
}
