/** SQL over `annotations`. No rules here: callers validate and authorise. */
import { prepared, type Db } from '../../storage/sqlite/database.js'
import type { AnnotationListQuery } from './input.js'
import { toRecord, toRow, type AnnotationRecord, type AnnotationRow } from './record.js'

/** Where a project's annotations are: its own, and its organisation's organisation-scoped ones. */
export interface Visibility {
  teamId: number
  organizationId: string
}

/** An annotation with the name of its dashboard, as the API answers it. */
export interface AnnotationWithNames extends AnnotationRecord {
  dashboard_name: string | null
}

type NamedRow = AnnotationRow & { dashboard_name: string | null }

/**
 * The visible annotations: of the project or of its organisation with that scope, and not attached to a
 * soft-deleted dashboard (they come back when it does).
 */
const VISIBLE = `SELECT a.*, d.name AS dashboard_name FROM annotations a LEFT JOIN dashboards d ON d.id = a.dashboard_id
  WHERE (a.team_id = @teamId OR (a.scope = 'organization' AND a.organization_id = @organizationId))
    AND (d.id IS NULL OR d.deleted = 0)`

/**
 * PostHog's `-date_marker` on Postgres, where nulls sort first when descending; the newest row first among
 * equals, so pages are stable.
 */
const NEWEST_MARKER_FIRST = 'ORDER BY a.date_marker IS NULL DESC, a.date_marker DESC, a.id DESC'

const withNames = (row: NamedRow): AnnotationWithNames => ({ ...toRecord(row), dashboard_name: row.dashboard_name })

export class AnnotationRepository {
  readonly #db: Db

  constructor(db: Db) {
    this.#db = db
  }

  /** The annotation if the project sees it; a soft-deleted one only with `includeDeleted` (a PATCH may restore it). */
  get(where: Visibility, id: number, includeDeleted: boolean): AnnotationWithNames | null {
    const row = prepared(this.#db, `${VISIBLE} AND a.id = @id${includeDeleted ? '' : ' AND a.deleted = 0'}`).get({ ...where, id }) as NamedRow | undefined
    return row ? withNames(row) : null
  }

  list(where: Visibility, query: AnnotationListQuery, limit: number, offset: number): { count: number; records: AnnotationWithNames[] } {
    const clauses = ['a.deleted = 0']
    const params: Record<string, unknown> = { ...where, limit, offset }
    if (query.emojiOnly) clauses.push('0')
    if (query.scope !== null) {
      clauses.push('a.scope = @scope')
      params.scope = query.scope
    }
    if (query.dateFrom !== null) {
      clauses.push('a.date_marker >= @dateFrom')
      params.dateFrom = query.dateFrom
    }
    if (query.dateTo !== null) {
      clauses.push('a.date_marker <= @dateTo')
      params.dateTo = query.dateTo
    }
    if (query.hidden !== null) clauses.push(query.hidden ? 'a.hidden_in_user_interface = 1' : 'coalesce(a.hidden_in_user_interface, 0) = 0')
    query.search.forEach((term, i) => {
      // LIKE ignores ASCII case, as Postgres' icontains does.
      clauses.push(`a.content LIKE @search${i} ESCAPE '\\'`)
      params[`search${i}`] = `%${term.replace(/[\\%_]/g, (c) => '\\' + c)}%`
    })
    const filtered = `${VISIBLE} AND ${clauses.join(' AND ')}`
    const { count } = prepared(this.#db, `SELECT count(*) AS count FROM (${filtered})`).get(params) as { count: number }
    const rows = prepared(this.#db, `${filtered} ${NEWEST_MARKER_FIRST} LIMIT @limit OFFSET @offset`).all(params) as NamedRow[]
    return { count, records: rows.map(withNames) }
  }

  insert(record: Omit<AnnotationRecord, 'id'>): number {
    const row: Partial<AnnotationRow> = toRow({ ...record, id: 0 })
    delete row.id
    const info = prepared(
      this.#db,
      `INSERT INTO annotations (team_id, organization_id, content, date_marker, creation_type, scope, dashboard_id, emoji,
         hidden_in_user_interface, tags, deleted, created_by_id, created_at, updated_at)
       VALUES (@team_id, @organization_id, @content, @date_marker, @creation_type, @scope, @dashboard_id, @emoji,
         @hidden_in_user_interface, @tags, @deleted, @created_by_id, @created_at, @updated_at)`,
    ).run(row)
    return Number(info.lastInsertRowid)
  }

  update(record: AnnotationRecord): void {
    prepared(
      this.#db,
      `UPDATE annotations SET team_id = @team_id, content = @content, date_marker = @date_marker, creation_type = @creation_type,
         scope = @scope, dashboard_id = @dashboard_id, emoji = @emoji, hidden_in_user_interface = @hidden_in_user_interface,
         tags = @tags, deleted = @deleted, updated_at = @updated_at
       WHERE id = @id`,
    ).run(toRow(record))
  }

  /** A live dashboard of the project, by id, with its name. */
  dashboard(teamId: number, id: number): { id: number; name: string } | null {
    return (prepared(this.#db, 'SELECT id, name FROM dashboards WHERE id = ? AND team_id = ? AND deleted = 0').get(id, teamId) as { id: number; name: string } | undefined) ?? null
  }
}
