/** SQL over `scheduled_changes`. No rules here: callers validate and authorise. */
import { prepared, type Db } from '../../storage/sqlite/database.js'
import { toRecord, toRow, type ScheduledChangeRecord, type ScheduledChangeRow } from './record.js'

export interface ListFilter {
  model_name?: string
  record_id?: string
}

const COLUMNS = `team_id, record_id, model_name, payload, scheduled_at, executed_at, failure_reason, failure_count, is_recurring,
  recurrence_interval, cron_expression, last_executed_at, end_date, timezone, created_by_id, created_at, updated_at`

export class ScheduledChangeRepository {
  readonly #db: Db

  constructor(db: Db) {
    this.#db = db
  }

  get(teamId: number, id: number): ScheduledChangeRecord | null {
    const row = prepared(this.#db, 'SELECT * FROM scheduled_changes WHERE id = ? AND team_id = ?').get(id, teamId) as ScheduledChangeRow | undefined
    return row ? toRecord(row) : null
  }

  byId(id: number): ScheduledChangeRecord | null {
    const row = prepared(this.#db, 'SELECT * FROM scheduled_changes WHERE id = ?').get(id) as ScheduledChangeRow | undefined
    return row ? toRecord(row) : null
  }

  /** PostHog's queryset has no order, so Postgres answers in insertion order; so does skylark. */
  list(teamId: number, filter: ListFilter, limit: number, offset: number): { count: number; records: ScheduledChangeRecord[] } {
    const where = 'team_id = @team AND (@model IS NULL OR model_name = @model) AND (@record IS NULL OR record_id = @record)'
    const args = { team: teamId, model: filter.model_name ?? null, record: filter.record_id ?? null }
    const { count } = prepared(this.#db, `SELECT count(*) AS count FROM scheduled_changes WHERE ${where}`).get(args) as { count: number }
    const rows = prepared(this.#db, `SELECT * FROM scheduled_changes WHERE ${where} ORDER BY id LIMIT @limit OFFSET @offset`).all({ ...args, limit, offset }) as ScheduledChangeRow[]
    return { count, records: rows.map(toRecord) }
  }

  insert(record: Omit<ScheduledChangeRecord, 'id'>): number {
    const { id: _id, ...row } = toRow({ ...record, id: 0 })
    const names = COLUMNS.split(',').map((c) => `@${c.trim()}`).join(', ')
    return Number(prepared(this.#db, `INSERT INTO scheduled_changes (${COLUMNS}) VALUES (${names})`).run(row).lastInsertRowid)
  }

  update(record: ScheduledChangeRecord): void {
    const sets = COLUMNS.split(',').map((c) => `${c.trim()} = @${c.trim()}`).join(', ')
    prepared(this.#db, `UPDATE scheduled_changes SET ${sets} WHERE id = @id`).run(toRow(record))
  }

  delete(teamId: number, id: number): void {
    prepared(this.#db, 'DELETE FROM scheduled_changes WHERE id = ? AND team_id = ?').run(id, teamId)
  }

  /** Ids of the changes not yet done whose time has come, oldest first (PostHog takes at most 10,000 a run). */
  dueIds(nowIso: string, limit = 10_000): number[] {
    const rows = prepared(this.#db, 'SELECT id FROM scheduled_changes WHERE executed_at IS NULL AND scheduled_at <= ? ORDER BY scheduled_at, id LIMIT ?').all(nowIso, limit) as Array<{ id: number }>
    return rows.map((r) => r.id)
  }

  /** When the next change not yet done falls due after `nowIso`, or null. */
  nextDueAfter(nowIso: string): string | null {
    const row = prepared(this.#db, 'SELECT min(scheduled_at) AS at FROM scheduled_changes WHERE executed_at IS NULL AND scheduled_at > ?').get(nowIso) as { at: string | null }
    return row.at
  }
}
