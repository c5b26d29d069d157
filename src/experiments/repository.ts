/**
 * SQL over `experiments` and the list endpoint's query parameters (PostHog's `status`, `archived`,
 * `search`, `created_by_id`, `feature_flag_id`, `event`, `order`). No rules here: callers validate and authorise.
 */
import { ValidationError } from '../common/errors.js'
import type { Db } from '../storage/index.js'
import { SETTINGS_KEYS, toRecord, toRow, type ExperimentRecord, type ExperimentRow } from './record.js'

/** PostHog's list statuses; `running` and `paused` part on whether the flag is on. */
export type ExperimentListStatus = 'draft' | 'running' | 'paused' | 'stopped'

export interface ExperimentListFilter {
  status?: ExperimentListStatus
  /** Only archived (true) or only not archived (false, the default). */
  archived: boolean
  search?: string
  createdByIds?: number[]
  featureFlagId?: number
  /** Only experiments whose metrics (inline or linked shared ones) name this event, or an action with a step on it. */
  event?: string
  /** Only these experiments: the service's answer to `event` (idsNamingEvent), which the SQL does not read. */
  ids?: ReadonlySet<number>
  /** An ORDER BY clause from ORDERS. */
  order: string
}

const FLAG_ACTIVE = 'EXISTS (SELECT 1 FROM feature_flags f WHERE f.id = experiments.feature_flag_id AND f.active = 1)'
const DURATION = `CASE WHEN start_date IS NULL THEN NULL WHEN end_date IS NOT NULL THEN julianday(end_date) - julianday(start_date)
  ELSE julianday('now') - julianday(start_date) END`
const STATUS_RANK = 'CASE WHEN start_date IS NULL THEN 0 WHEN end_date IS NULL THEN 1 ELSE 2 END'
const CREATOR = `(SELECT COALESCE(NULLIF(u.first_name, ''), u.email) FROM users u WHERE u.id = experiments.created_by_id)`

/** PostHog's EXPERIMENT_ORDER_ALLOWLIST; `created_by` sorts by first name, else e-mail, as its list column does. */
const ORDER_EXPRESSIONS: ReadonlyMap<string, string> = new Map([
  ['created_at', 'created_at'],
  ['updated_at', 'updated_at'],
  ['name', 'name'],
  ['start_date', 'start_date'],
  ['end_date', 'end_date'],
  ['duration', DURATION],
  ['status', STATUS_RANK],
  ['created_by', CREATOR],
])

/** Nulls sort as in PostgreSQL: last going up, first going down. */
function orderClause(raw: string | null): string {
  const value = raw || '-created_at'
  const descending = value.startsWith('-')
  const expression = ORDER_EXPRESSIONS.get(descending ? value.slice(1) : value)
  if (expression === undefined) throw new ValidationError('invalid', `Invalid order field: '${value}'`)
  const direction = descending ? 'DESC NULLS FIRST' : 'ASC NULLS LAST'
  return `${expression} ${direction}, id ${descending ? 'DESC' : 'ASC'}`
}

/** PostHog's `parse_created_by_ids`: one id, a comma-separated list or a JSON list; what isn't an id is skipped. */
export function parseCreatedByIds(raw: string | null): number[] {
  const text = raw?.trim()
  if (!text) return []
  let items: unknown[]
  if (text.startsWith('[')) {
    try {
      const parsed: unknown = JSON.parse(text)
      items = Array.isArray(parsed) ? parsed : [parsed]
    } catch {
      return []
    }
  } else {
    items = text.split(',')
  }
  return items.flatMap((item) => {
    const id = typeof item === 'number' ? item : typeof item === 'string' && /^\s*[+-]?\d+\s*$/.test(item) ? Number(item) : NaN
    return Number.isSafeInteger(id) ? [id] : []
  })
}

const STATUSES: ReadonlyMap<string, ExperimentListStatus> = new Map([
  ['draft', 'draft'],
  ['running', 'running'],
  ['paused', 'paused'],
  ['stopped', 'stopped'],
  ['complete', 'stopped'],
])

/**
 * As PostHog reads them: an unknown `status` (or `all`) filters nothing, `complete` is `stopped`;
 * `archived` is true only for "true" (any case) and defaults to false; `order` is one of PostHog's
 * fields, `-` for descending (default `-created_at`).
 */
export function parseExperimentListQuery(query: URLSearchParams): ExperimentListFilter {
  const filter: ExperimentListFilter = { archived: false, order: orderClause(query.get('order')) }
  const status = STATUSES.get(query.get('status')?.toLowerCase() ?? '')
  if (status) filter.status = status
  const archived = query.get('archived')
  if (archived !== null) filter.archived = archived.toLowerCase() === 'true'
  const search = query.get('search')
  if (search) filter.search = search
  const createdByIds = parseCreatedByIds(query.get('created_by_id'))
  if (createdByIds.length > 0) filter.createdByIds = createdByIds
  const flagId = query.get('feature_flag_id')
  if (flagId) {
    if (!/^\s*[+-]?\d{1,15}\s*$/.test(flagId)) throw new ValidationError('invalid', 'feature_flag_id must be an integer')
    filter.featureFlagId = Number(flagId)
  }
  const event = query.get('event')
  if (event) filter.event = event
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
    if (filter.status === 'running') where.push(`start_date IS NOT NULL AND end_date IS NULL AND ${FLAG_ACTIVE}`)
    if (filter.status === 'paused') where.push(`start_date IS NOT NULL AND end_date IS NULL AND NOT ${FLAG_ACTIVE}`)
    if (filter.status === 'stopped') where.push('start_date IS NOT NULL AND end_date IS NOT NULL')
    if (filter.search !== undefined) {
      where.push(`name LIKE ? ESCAPE '\\'`)
      params.push(`%${filter.search.replace(/[\\%_]/g, (c) => '\\' + c)}%`)
    }
    if (filter.createdByIds !== undefined) {
      where.push(`created_by_id IN (${filter.createdByIds.map(() => '?').join(', ')})`)
      params.push(...filter.createdByIds)
    }
    if (filter.featureFlagId !== undefined) {
      where.push('feature_flag_id = ?')
      params.push(filter.featureFlagId)
    }
    if (filter.ids !== undefined) {
      where.push('id IN (SELECT value FROM json_each(?))')
      params.push(JSON.stringify([...filter.ids]))
    }
    const clause = where.join(' AND ')
    const count = (this.#db.prepare(`SELECT COUNT(*) AS n FROM experiments WHERE ${clause}`).get(...params) as { n: number }).n
    const rows = this.#db
      .prepare(`SELECT * FROM experiments WHERE ${clause} ORDER BY ${filter.order} LIMIT ? OFFSET ?`)
      .all(...params, limit, offset) as ExperimentRow[]
    return { count, records: rows.map(toRecord) }
  }

  /**
   * Each live experiment's metric queries, as the `event` filter reads them: its inline and secondary metrics and
   * the queries of the shared metrics linked to it.
   */
  metricQueries(teamId: number): Array<{ id: number; queries: unknown[] }> {
    const rows = this.#db
      .prepare(
        `SELECT e.id, e.metrics, e.metrics_secondary,
           (SELECT json_group_array(json(s.query)) FROM experiment_to_saved_metrics l JOIN experiment_saved_metrics s ON s.id = l.saved_metric_id
            WHERE l.experiment_id = e.id) AS linked
         FROM experiments e WHERE e.team_id = ? AND e.deleted = 0`,
      )
      .all(teamId) as Array<{ id: number; metrics: string | null; metrics_secondary: string | null; linked: string }>
    return rows.map((r) => ({ id: r.id, queries: [r.metrics, r.metrics_secondary, r.linked].map((text) => (text === null ? null : (JSON.parse(text) as unknown))) }))
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
        `INSERT INTO experiments (team_id, name, description, feature_flag_id, exposure_cohort_id, holdout_id, start_date, end_date,
           parameters, secondary_metrics, filters, archived, deleted, type, created_by_id, created_at, updated_at, ${SETTINGS_KEYS.join(', ')})
         VALUES (@team_id, @name, @description, @feature_flag_id, @exposure_cohort_id, @holdout_id, @start_date, @end_date,
           @parameters, @secondary_metrics, @filters, @archived, @deleted, @type, @created_by_id, @created_at, @updated_at,
           ${SETTINGS_KEYS.map((k) => `@${k}`).join(', ')})`,
      )
      .run(toRow({ ...record, id: 0 }))
    return Number(info.lastInsertRowid)
  }

  update(record: ExperimentRecord): void {
    const row = toRow(record)
    this.#db
      .prepare(
        `UPDATE experiments SET name = @name, description = @description, exposure_cohort_id = @exposure_cohort_id, holdout_id = @holdout_id,
           start_date = @start_date, end_date = @end_date, parameters = @parameters, secondary_metrics = @secondary_metrics,
           filters = @filters, archived = @archived, deleted = @deleted, type = @type, updated_at = @updated_at,
           ${SETTINGS_KEYS.map((k) => `${k} = @${k}`).join(', ')}
         WHERE id = @id AND team_id = @team_id`,
      )
      .run(row)
  }
}
