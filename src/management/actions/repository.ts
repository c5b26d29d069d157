/** SQL over `actions`. No rules here: callers validate and authorise. */
import { prepared, type Db } from '../../storage/sqlite/database.js'
import type { ActionListQuery } from './input.js'
import { toRecord, toRow, type ActionRecord, type ActionRow } from './record.js'

const CREATOR_NAME = (part: 'first_name' | 'last_name') => `(SELECT u.${part} FROM users u WHERE u.id = a.created_by_id)`

/** PostgreSQL's null placement, which PostHog's lists have: last going up, first going down. */
const sortKey = (expression: string, descending: boolean) => `${expression} ${descending ? 'DESC NULLS FIRST' : 'ASC NULLS LAST'}`

function orderBy(query: ActionListQuery): string {
  const o = query.ordering
  if (o === null) return `ORDER BY ${sortKey('a.last_calculated_at', true)}, ${sortKey('a.name', false)}, a.id`
  const keys =
    o.field === 'created_by'
      ? [sortKey(CREATOR_NAME('first_name'), o.descending), sortKey(CREATOR_NAME('last_name'), o.descending)]
      : [sortKey(`a.${o.field}`, o.descending)]
  // A stable tie-break within equal values, as PostHog adds it.
  if (o.field !== 'name') keys.push(sortKey('a.name', false))
  return `ORDER BY ${keys.join(', ')}, a.id`
}

export class ActionRepository {
  readonly #db: Db

  constructor(db: Db) {
    this.#db = db
  }

  /** The project's action, a soft-deleted one too (PostHog reads and changes those by id). */
  get(teamId: number, id: number): ActionRecord | null {
    const row = prepared(this.#db, 'SELECT * FROM actions WHERE id = ? AND team_id = ?').get(id, teamId) as ActionRow | undefined
    return row ? toRecord(row) : null
  }

  /** The project's live actions among these ids. */
  live(teamId: number, ids: readonly number[]): ActionRecord[] {
    if (ids.length === 0) return []
    const rows = prepared(this.#db, 'SELECT * FROM actions WHERE team_id = ? AND deleted = 0 AND id IN (SELECT value FROM json_each(?))').all(teamId, JSON.stringify(ids)) as ActionRow[]
    return rows.map(toRecord)
  }

  /** Another live action of the project with exactly this name (a null name is one too), if any. */
  namedLike(teamId: number, name: string | null, exceptId: number | null): number | null {
    const row = prepared(this.#db, 'SELECT id FROM actions WHERE team_id = ? AND deleted = 0 AND name IS ? AND id IS NOT ? ORDER BY id LIMIT 1').get(teamId, name, exceptId) as
      | { id: number }
      | undefined
    return row?.id ?? null
  }

  list(teamId: number, query: ActionListQuery, limit: number, offset: number): { count: number; records: ActionRecord[] } {
    const clauses = ['a.team_id = @teamId', 'a.deleted = 0']
    const params: Record<string, unknown> = { teamId, limit, offset }
    if (query.search !== null) {
      // LIKE ignores ASCII case, as Django's icontains does.
      clauses.push(`a.name LIKE @search ESCAPE '\\'`)
      params.search = `%${query.search.replace(/[\\%_]/g, (c) => '\\' + c)}%`
    }
    if (query.createdByIds.length > 0) {
      clauses.push('a.created_by_id IN (SELECT value FROM json_each(@createdBy))')
      params.createdBy = JSON.stringify(query.createdByIds)
    }
    if (query.tags.length > 0) {
      clauses.push('EXISTS (SELECT 1 FROM json_each(a.tags) t WHERE t.value IN (SELECT value FROM json_each(@tags)))')
      params.tags = JSON.stringify(query.tags)
    }
    const where = clauses.join(' AND ')
    const { count } = prepared(this.#db, `SELECT count(*) AS count FROM actions a WHERE ${where}`).get(params) as { count: number }
    const rows = prepared(this.#db, `SELECT a.* FROM actions a WHERE ${where} ${orderBy(query)} LIMIT @limit OFFSET @offset`).all(params) as ActionRow[]
    return { count, records: rows.map(toRecord) }
  }

  insert(record: Omit<ActionRecord, 'id'>): number {
    const row: Partial<ActionRow> = toRow({ ...record, id: 0 })
    delete row.id
    const info = prepared(
      this.#db,
      `INSERT INTO actions (team_id, name, description, tags, post_to_slack, slack_message_format, steps, deleted, pinned_at,
         created_by_id, created_at, updated_at, last_calculated_at)
       VALUES (@team_id, @name, @description, @tags, @post_to_slack, @slack_message_format, @steps, @deleted, @pinned_at,
         @created_by_id, @created_at, @updated_at, @last_calculated_at)`,
    ).run(row)
    return Number(info.lastInsertRowid)
  }

  update(record: ActionRecord): void {
    prepared(
      this.#db,
      `UPDATE actions SET name = @name, description = @description, tags = @tags, post_to_slack = @post_to_slack,
         slack_message_format = @slack_message_format, steps = @steps, deleted = @deleted, pinned_at = @pinned_at,
         updated_at = @updated_at
       WHERE id = @id AND team_id = @team_id`,
    ).run(toRow(record))
  }
}
