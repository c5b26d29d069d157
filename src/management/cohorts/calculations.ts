/**
 * What is known of dynamic cohorts' counts, as PostHog keeps it: a cohort's `is_calculating`, `last_calculation`
 * and `errors_calculating`, and each calculation's record (its CohortCalculationHistory: the filters counted, the
 * count or the error, when it started and finished). The calculator (calculator.ts) writes them; the cohort API
 * reads them. A calculation's one "query" is the count as a whole: its `query_ms`, nothing of ClickHouse's
 * (memory, rows read), which a count over persons.db does not have.
 */
import { randomUUID } from 'node:crypto'
import { iso } from '../../common/clock.js'
import type { JsonObject } from '../../common/json.js'
import { prepared, type Db } from '../../storage/sqlite/database.js'

/** PostHog's calculate_cohorts: a dynamic cohort is counted again once its last count is this old, */
export const MAX_AGE_MS = 15 * 60_000
/** unless more than this many calculations of it in a row failed (`errors_calculating__lte=20`). */
export const MAX_ERRORS = 20
/** The calculations kept per cohort: older ones are dropped as new ones start (PostHog keeps all). */
export const HISTORY_KEPT = 200

export interface CohortKey {
  teamId: number
  id: number
}

/** One calculation as PostHog's CohortCalculationHistorySerializer writes it. */
export interface CalculationObject {
  id: string
  filters: JsonObject
  count: number | null
  started_at: string
  finished_at: string | null
  queries: Array<{ query_ms: number }> | null
  error: string | null
  duration_seconds: number | null
  is_completed: boolean
  is_successful: boolean
  total_query_ms: number | null
  total_memory_mb: null
  total_read_rows: null
  total_written_rows: null
  main_query: null
  main_query_id: null
}

interface CalculationRow {
  id: string
  filters: string
  count: number | null
  started_at: string
  finished_at: string | null
  query_ms: number | null
  error: string | null
}

function toObject(row: CalculationRow): CalculationObject {
  const finished = row.finished_at !== null
  return {
    id: row.id,
    filters: JSON.parse(row.filters) as JsonObject,
    count: row.count,
    started_at: row.started_at,
    finished_at: row.finished_at,
    queries: row.query_ms === null ? null : [{ query_ms: row.query_ms }],
    error: row.error,
    duration_seconds: finished ? (Date.parse(row.finished_at!) - Date.parse(row.started_at)) / 1000 : null,
    is_completed: finished,
    is_successful: finished && row.error === null,
    // PostHog sums only non-zero query_ms, so a count that took no measurable time reads null.
    total_query_ms: row.query_ms || null,
    total_memory_mb: null,
    total_read_rows: null,
    total_written_rows: null,
    main_query: null,
    main_query_id: null,
  }
}

const keyOf = (row: { team_id: number; id: number }): CohortKey => ({ teamId: row.team_id, id: row.id })

export class CohortCalculations {
  readonly #db: Db

  constructor(db: Db) {
    this.#db = db
  }

  /** Live dynamic cohorts due a count (never counted, or MAX_AGE_MS since), least recently counted first. */
  due(now: number, limit: number): CohortKey[] {
    const rows = prepared(this.#db,
      `SELECT team_id, id FROM cohorts
       WHERE deleted = 0 AND is_static = 0 AND is_calculating = 0 AND errors_calculating <= ${MAX_ERRORS}
         AND (last_calculation IS NULL OR last_calculation <= ?)
       ORDER BY last_calculation IS NOT NULL, last_calculation, id LIMIT ?`,
    ).all(iso(now - MAX_AGE_MS), limit) as Array<{ team_id: number; id: number }>
    return rows.map(keyOf)
  }

  /** Cohorts marked calculating: asked for by a write, or left mid-count by a process that stopped. */
  calculating(): CohortKey[] {
    return (prepared(this.#db, 'SELECT team_id, id FROM cohorts WHERE is_calculating = 1 ORDER BY id').all() as Array<{ team_id: number; id: number }>).map(keyOf)
  }

  /** Starts a calculation of the cohort's `filters` at `at`: its record, and the cohort marked calculating. */
  begin(key: CohortKey, filters: JsonObject, at: number): string {
    const id = randomUUID()
    this.#db.transaction(() => {
      prepared(this.#db, 'INSERT INTO cohort_calculations (id, team_id, cohort_id, filters, started_at) VALUES (?, ?, ?, ?, ?)')
        .run(id, key.teamId, key.id, JSON.stringify(filters), iso(at))
      prepared(this.#db,
        `DELETE FROM cohort_calculations WHERE cohort_id = ? AND id NOT IN
         (SELECT id FROM cohort_calculations WHERE cohort_id = ? ORDER BY started_at DESC, rowid DESC LIMIT ${HISTORY_KEPT})`,
      ).run(key.id, key.id)
      prepared(this.#db, 'UPDATE cohorts SET is_calculating = 1 WHERE id = ? AND team_id = ?').run(key.id, key.teamId)
    })()
    return id
  }

  /**
   * Ends a calculation: with its count, the cohort's count, `last_calculation` and no errors; with an error, one
   * more error and the count kept. `again`: another is queued, so the cohort stays calculating.
   */
  finish(run: string, key: CohortKey, outcome: { count: number } | { error: string }, startedAt: number, at: number, again: boolean): void {
    const count = 'count' in outcome ? outcome.count : null
    const error = 'error' in outcome ? outcome.error : null
    this.#db.transaction(() => {
      prepared(this.#db, 'UPDATE cohort_calculations SET count = ?, error = ?, finished_at = ?, query_ms = ? WHERE id = ?')
        .run(count, error, iso(at), Math.max(0, Math.round(at - startedAt)), run)
      const sql = error === null
        ? 'UPDATE cohorts SET count = ?, last_calculation = ?, errors_calculating = 0, is_calculating = ? WHERE id = ? AND team_id = ?'
        : 'UPDATE cohorts SET errors_calculating = errors_calculating + 1, is_calculating = ? WHERE id = ? AND team_id = ?'
      const statement = prepared(this.#db, sql)
      if (error === null) statement.run(count, iso(at), again ? 1 : 0, key.id, key.teamId)
      else statement.run(again ? 1 : 0, key.id, key.teamId)
    })()
  }

  /** A cohort no longer counted (deleted, static or gone) stops calculating. */
  settle(key: CohortKey): void {
    prepared(this.#db, 'UPDATE cohorts SET is_calculating = 0 WHERE id = ? AND team_id = ?').run(key.id, key.teamId)
  }

  /** The cohort's calculations, newest first, and how many it has. */
  history(key: CohortKey, limit: number, offset: number): { count: number; results: CalculationObject[] } {
    const rows = prepared(this.#db,
      'SELECT * FROM cohort_calculations WHERE cohort_id = ? AND team_id = ? ORDER BY started_at DESC, rowid DESC LIMIT ? OFFSET ?',
    ).all(key.id, key.teamId, limit, offset) as CalculationRow[]
    const count = (prepared(this.#db, 'SELECT COUNT(*) AS n FROM cohort_calculations WHERE cohort_id = ? AND team_id = ?').get(key.id, key.teamId) as { n: number }).n
    return { count, results: rows.map(toObject) }
  }

  /** The error of the cohort's newest failed calculation, if any. */
  lastError(cohortId: number): string | null {
    const row = prepared(this.#db,
      'SELECT error FROM cohort_calculations WHERE cohort_id = ? AND error IS NOT NULL ORDER BY started_at DESC, rowid DESC LIMIT 1',
    ).get(cohortId) as { error: string } | undefined
    return row?.error ?? null
  }
}
