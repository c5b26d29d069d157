/**
 * SQL over `experiments` and the list endpoint's query parameters (PostHog's `status`, `archived`,
 * `search`, `created_by_id`, `order`). No rules here: callers validate and authorise.
 */
import { NEWEST_FIRST, parseCreatedById, parseListOrder, type ListOrder } from '../common/pagination.js'
import type { Db } from '../storage/index.js'
import { toRecord, toRow, type ExperimentRecord, type ExperimentRow, type ExperimentStatus } from './record.js'

export interface ExperimentListFilter {
  status?: ExperimentStatus
  /** Only archived (true) or only not archived (false, the default). */
  archived: boolean
  search?: string
  createdById?: number
  order: ListOrder
}

const ORDER_COLUMNS: ReadonlyMap<string, string> = new Map([
  ['id', 'id'],
  ['name', 'name'],
  ['description', 'description'],
  ['created_at', 'created_at'],
  ['updated_at', 'updated_at'],
  ['start_date', 'start_date'],
  ['end_date', 'end_date'],
  ['archived', 'archived'],
  ['created_by', 'created_by_id'],
  ['created_by_id', 'created_by_id'],
  ['type', 'type'],
])

const STATUSES: readonly string[] = ['draft', 'running', 'complete']

/**
 * As PostHog reads them: an unknown `status` (or `all`) filters nothing; `archived` is true only for
 * "true" (any case) and defaults to false; `order` is a field, `-` for descending (default `-created_at`).
 */
export function parseExperimentListQuery(query: URLSearchParams): ExperimentListFilter {
  const filter: ExperimentListFilter = { archived: false, order: parseListOrder(query.get('order'), ORDER_COLUMNS, NEWEST_FIRST) }
  const status = query.get('status')?.toLowerCase()
  if (status && STATUSES.includes(status)) filter.status = status as ExperimentStatus
  const archived = query.get('archived')
  if (archived !== null) filter.archived = archived.toLowerCase() === 'true'
  const search = query.get('search')
  if (search) filter.search = search
  const createdById = parseCreatedById(query)
  if (createdById !== undefined) filter.createdById = createdById
  return filter
}

export class ExperimentRepository {
  readonly #db: Db

  constructor(db: Db) {
    this.#db = db
  }

  /** A live (not deleted) experiment of the project. */
  get(teamId: number, id: number): ExperimentRecord | null {
    const row = this.#db.prepare('SELECT * FROM experiments WHERE id = ? AND team_id = ? AND deleted = 0').get(id, teamId) as
      | ExperimentRow
      | undefined
    return row ? toRecord(row) : null
  }

  /** Any experiment of the project, deleted ones too (PATCH `deleted: false` restores them). */
  getAny(teamId: number, id: number): ExperimentRecord | null {
    const row = this.#db.prepare('SELECT * FROM experiments WHERE id = ? AND team_id = ?').get(id, teamId) as ExperimentRow | undefined
    return row ? toRecord(row) : null
  }

  list(teamId: number, filter: ExperimentListFilter, limit: number, offset: number): { count: number; records: ExperimentRecord[] } {
    const where = ['team_id = ?', 'deleted = 0', 'archived = ?']
    const params: unknown[] = [teamId, filter.archived ? 1 : 0]
    if (filter.status === 'draft') where.push('start_date IS NULL')
    if (filter.status === 'running') where.push('start_date IS NOT NULL AND end_date IS NULL')
    if (filter.status === 'complete') where.push('end_date IS NOT NULL')
    if (filter.search !== undefined) {
      where.push(`name LIKE ? ESCAPE '\\'`)
      params.push(`%${filter.search.replace(/[\\%_]/g, (c) => '\\' + c)}%`)
    }
    if (filter.createdById !== undefined) {
      where.push('created_by_id = ?')
      params.push(filter.createdById)
    }
    const clause = where.join(' AND ')
    const count = (this.#db.prepare(`SELECT COUNT(*) AS n FROM experiments WHERE ${clause}`).get(...params) as { n: number }).n
    const direction = filter.order.descending ? 'DESC' : 'ASC'
    const rows = this.#db
      .prepare(`SELECT * FROM experiments WHERE ${clause} ORDER BY ${filter.order.column} ${direction}, id ${direction} LIMIT ? OFFSET ?`)
      .all(...params, limit, offset) as ExperimentRow[]
    return { count, records: rows.map(toRecord) }
  }

  /** Whether a live experiment of the project has this name (duplicates number their names). */
  nameTaken(teamId: number, name: string): boolean {
    return this.#db.prepare('SELECT 1 FROM experiments WHERE team_id = ? AND name = ? AND deleted = 0').get(teamId, name) !== undefined
  }

  /** Whether another live, unarchived experiment uses the flag (archiving leaves such a flag on). */
  othersUsingFlag(teamId: number, flagId: number, exceptId: number): boolean {
    return (
      this.#db
        .prepare('SELECT 1 FROM experiments WHERE team_id = ? AND feature_flag_id = ? AND id != ? AND deleted = 0 AND archived = 0')
        .get(teamId, flagId, exceptId) !== undefined
    )
  }

  /** Launched, not ended, not archived, not deleted: the experiments whose flag must be implemented by now. */
  running(teamId: number): ExperimentRecord[] {
    const rows = this.#db
      .prepare(
        `SELECT * FROM experiments WHERE team_id = ? AND deleted = 0 AND archived = 0
         AND start_date IS NOT NULL AND end_date IS NULL ORDER BY created_at DESC, id DESC`,
      )
      .all(teamId) as ExperimentRow[]
    return rows.map(toRecord)
  }

  insert(record: Omit<ExperimentRecord, 'id'>): number {
    const info = this.#db
      .prepare(
        `INSERT INTO experiments (team_id, name, description, feature_flag_id, exposure_cohort_id, start_date, end_date,
           parameters, secondary_metrics, filters, archived, deleted, type, created_by_id, created_at, updated_at)
         VALUES (@team_id, @name, @description, @feature_flag_id, @exposure_cohort_id, @start_date, @end_date,
           @parameters, @secondary_metrics, @filters, @archived, @deleted, @type, @created_by_id, @created_at, @updated_at)`,
      )
      .run(toRow({ ...record, id: 0 }))
    return Number(info.lastInsertRowid)
  }

  update(record: ExperimentRecord): void {
    const row = toRow(record)
    this.#db
      .prepare(
        `UPDATE experiments SET name = @name, description = @description, exposure_cohort_id = @exposure_cohort_id,
           start_date = @start_date, end_date = @end_date, parameters = @parameters, secondary_metrics = @secondary_metrics,
           filters = @filters, archived = @archived, deleted = @deleted, type = @type, updated_at = @updated_at
         WHERE id = @id AND team_id = @team_id`,
      )
      .run(row)
  }
}
