/** SQL over `early_access_features`. No rules here: callers validate and authorise. */
import { prepared, type Db } from '../../storage/sqlite/database.js'
import { toRecord, toRow, type EarlyAccessFeatureRecord, type EarlyAccessFeatureRow } from './record.js'

/** A feature with what its public form names: the flag's key and the assignee's names. */
export interface FeatureWithNames extends EarlyAccessFeatureRecord {
  flag_key: string | null
  assignee_first_name: string | null
  assignee_last_name: string | null
  assignee_role_name: string | null
}

type NamedRow = EarlyAccessFeatureRow & Omit<FeatureWithNames, keyof EarlyAccessFeatureRecord>

const WITH_NAMES = `SELECT e.*, f.key AS flag_key, u.first_name AS assignee_first_name, u.last_name AS assignee_last_name,
    r.name AS assignee_role_name
  FROM early_access_features e
  LEFT JOIN feature_flags f ON f.id = e.feature_flag_id
  LEFT JOIN users u ON u.id = e.assigned_user_id
  LEFT JOIN roles r ON r.id = e.assigned_role_id`

const withNames = (row: NamedRow): FeatureWithNames => ({ ...row, ...toRecord(row) })

/** PostHog's queryset has no order, so Postgres answers in insertion order; so does skylark. */
const ORDER = 'ORDER BY e.created_at, e.rowid'

export class EarlyAccessRepository {
  readonly #db: Db

  constructor(db: Db) {
    this.#db = db
  }

  get(teamId: number, id: string): EarlyAccessFeatureRecord | null {
    const row = prepared(this.#db, 'SELECT * FROM early_access_features WHERE id = ? AND team_id = ?').get(id, teamId) as EarlyAccessFeatureRow | undefined
    return row ? toRecord(row) : null
  }

  list(teamId: number, limit: number, offset: number): { count: number; records: EarlyAccessFeatureRecord[] } {
    const { count } = prepared(this.#db, 'SELECT count(*) AS count FROM early_access_features WHERE team_id = ?').get(teamId) as { count: number }
    const rows = prepared(this.#db, `SELECT e.* FROM early_access_features e WHERE e.team_id = ? ${ORDER} LIMIT ? OFFSET ?`).all(teamId, limit, offset) as EarlyAccessFeatureRow[]
    return { count, records: rows.map(toRecord) }
  }

  insert(record: EarlyAccessFeatureRecord): void {
    prepared(
      this.#db,
      `INSERT INTO early_access_features (id, team_id, feature_flag_id, name, description, stage, documentation_url, payload,
         created_by_id, assigned_user_id, assigned_role_id, created_at)
       VALUES (@id, @team_id, @feature_flag_id, @name, @description, @stage, @documentation_url, @payload,
         @created_by_id, @assigned_user_id, @assigned_role_id, @created_at)`,
    ).run(toRow(record))
  }

  update(record: EarlyAccessFeatureRecord): void {
    prepared(
      this.#db,
      `UPDATE early_access_features SET name = @name, description = @description, stage = @stage, documentation_url = @documentation_url,
         payload = @payload, assigned_user_id = @assigned_user_id, assigned_role_id = @assigned_role_id
       WHERE id = @id AND team_id = @team_id`,
    ).run(toRow(record))
  }

  delete(teamId: number, id: string): void {
    prepared(this.#db, 'DELETE FROM early_access_features WHERE id = ? AND team_id = ?').run(id, teamId)
  }

  /** Whether a feature links the flag (PostHog's `flag.features.exists()`). */
  flagHasFeature(flagId: number): boolean {
    return prepared(this.#db, 'SELECT 1 FROM early_access_features WHERE feature_flag_id = ? LIMIT 1').get(flagId) !== undefined
  }

  /** The project's features in one of `stages`, with their names, for the public list. */
  inStages(teamId: number, stages: readonly string[]): FeatureWithNames[] {
    const rows = prepared(this.#db, `${WITH_NAMES} WHERE e.team_id = ? AND e.stage IN (SELECT value FROM json_each(?)) ${ORDER}`).all(teamId, JSON.stringify(stages)) as NamedRow[]
    return rows.map(withNames)
  }

  /** The features of each of the flags, with their names (the flag object's `features`). */
  ofFlags(flagIds: readonly number[]): Map<number, FeatureWithNames[]> {
    const byFlag = new Map<number, FeatureWithNames[]>()
    if (flagIds.length === 0) return byFlag
    const rows = prepared(this.#db, `${WITH_NAMES} WHERE e.feature_flag_id IN (SELECT value FROM json_each(?)) ${ORDER}`).all(JSON.stringify([...new Set(flagIds)])) as NamedRow[]
    for (const row of rows) {
      const feature = withNames(row)
      const list = byFlag.get(row.feature_flag_id!) ?? []
      list.push(feature)
      byFlag.set(row.feature_flag_id!, list)
    }
    return byFlag
  }

  roleInOrganization(roleId: string, organizationId: string): boolean {
    return prepared(this.#db, 'SELECT 1 FROM roles WHERE id = ? AND organization_id = ?').get(roleId, organizationId) !== undefined
  }
}
