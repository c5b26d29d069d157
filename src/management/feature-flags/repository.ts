/** SQL over `feature_flags` and the tables hanging off it. No rules here: callers validate and authorise. */
import type { Db } from '../../storage/sqlite/database.js'
import type { FlagListFilter } from './list-query.js'
import { toRecord, toRow, type FeatureFlagRecord, type FeatureFlagRow } from './record.js'
import { prepared } from '../../storage/sqlite/database.js'

const placeholders = (values: readonly unknown[]) => values.map(() => '?').join(', ')

/** Groups `[key, value]` pairs by key, keeping order. */
function groupBy<K, V>(pairs: Array<[K, V]>): Map<K, V[]> {
  const map = new Map<K, V[]>()
  for (const [k, v] of pairs) {
    const list = map.get(k)
    if (list) list.push(v)
    else map.set(k, [v])
  }
  return map
}

/** A flag-type condition anywhere in the release groups that names `?` (the referenced flag's id). */
const DEPENDS_ON = `EXISTS (
  SELECT 1 FROM json_each(f.filters, '$.groups') g, json_each(g.value, '$.properties') p
  WHERE json_extract(p.value, '$.type') = 'flag' AND CAST(json_extract(p.value, '$.key') AS TEXT) = ?)`

export class FlagRepository {
  readonly #db: Db

  constructor(db: Db) {
    this.#db = db
  }

  /** The flag of the project, deleted or not. */
  get(teamId: number, id: number): FeatureFlagRecord | null {
    const row = prepared(this.#db, 'SELECT * FROM feature_flags WHERE id = ? AND team_id = ?').get(id, teamId) as FeatureFlagRow | undefined
    return row ? toRecord(row) : null
  }

  liveByKey(teamId: number, key: string): FeatureFlagRecord | null {
    const row = prepared(this.#db, 'SELECT * FROM feature_flags WHERE team_id = ? AND key = ? AND deleted = 0').get(teamId, key) as
      | FeatureFlagRow
      | undefined
    return row ? toRecord(row) : null
  }

  /** The live flags of the project among `ids`, by id. */
  liveByIds(teamId: number, ids: readonly number[]): FeatureFlagRecord[] {
    if (ids.length === 0) return []
    const rows = prepared(this.#db, `SELECT * FROM feature_flags WHERE team_id = ? AND deleted = 0 AND id IN (SELECT value FROM json_each(?)) ORDER BY id`)
      .all(teamId, JSON.stringify([...new Set(ids)])) as FeatureFlagRow[]
    return rows.map(toRecord)
  }

  insert(record: Omit<FeatureFlagRecord, 'id'>): number {
    const row = toRow({ ...record, id: 0 })
    const info = prepared(this.#db, 
        `INSERT INTO feature_flags (team_id, key, name, filters, deleted, active, ensure_experience_continuity,
           rollback_conditions, performed_rollback, tags, evaluation_tags, analytics_dashboards, has_enriched_analytics, usage_dashboard_id,
           evaluation_runtime, bucketing_identifier, is_remote_configuration, has_encrypted_payloads, version, created_by_id, last_modified_by_id,
           created_at, updated_at)
         VALUES (@team_id, @key, @name, @filters, @deleted, @active, @ensure_experience_continuity, @rollback_conditions,
           @performed_rollback, @tags, @evaluation_tags, @analytics_dashboards, @has_enriched_analytics, @usage_dashboard_id, @evaluation_runtime, @bucketing_identifier,
           @is_remote_configuration, @has_encrypted_payloads, @version, @created_by_id, @last_modified_by_id, @created_at,
           @updated_at)`,
      )
      .run(row)
    return Number(info.lastInsertRowid)
  }

  update(record: FeatureFlagRecord): void {
    prepared(this.#db, 
        `UPDATE feature_flags SET key = @key, name = @name, filters = @filters, deleted = @deleted, active = @active,
           ensure_experience_continuity = @ensure_experience_continuity, rollback_conditions = @rollback_conditions,
           performed_rollback = @performed_rollback, tags = @tags, evaluation_tags = @evaluation_tags, analytics_dashboards = @analytics_dashboards,
           has_enriched_analytics = @has_enriched_analytics, evaluation_runtime = @evaluation_runtime, bucketing_identifier = @bucketing_identifier,
           is_remote_configuration = @is_remote_configuration, has_encrypted_payloads = @has_encrypted_payloads,
           version = @version, last_modified_by_id = @last_modified_by_id, created_at = @created_at, updated_at = @updated_at
         WHERE id = @id AND team_id = @team_id`,
      )
      .run(toRow(record))
  }

  /** Active, live flags other than `flagId` with a condition on it, by key. */
  dependents(teamId: number, flagId: number): FeatureFlagRecord[] {
    const rows = prepared(this.#db, `SELECT * FROM feature_flags f WHERE team_id = ? AND deleted = 0 AND active = 1 AND id != ? AND ${DEPENDS_ON} ORDER BY key`)
      .all(teamId, flagId, String(flagId)) as FeatureFlagRow[]
    return rows.map(toRecord)
  }

  /** Ids of the live experiments of each flag. */
  experimentIds(flagIds: readonly number[]): Map<number, number[]> {
    if (flagIds.length === 0) return new Map()
    const rows = prepared(this.#db, `SELECT id, feature_flag_id FROM experiments WHERE deleted = 0 AND feature_flag_id IN (${placeholders(flagIds)}) ORDER BY id`)
      .all(...flagIds) as Array<{ id: number; feature_flag_id: number }>
    return groupBy(rows.map((r) => [r.feature_flag_id, r.id]))
  }

  /** Role ids with access to each flag. */
  roleAccessRoleIds(flagIds: readonly number[]): Map<number, string[]> {
    if (flagIds.length === 0) return new Map()
    const rows = prepared(this.#db, `SELECT feature_flag_id, role_id FROM feature_flag_role_access WHERE feature_flag_id IN (${placeholders(flagIds)}) ORDER BY id`)
      .all(...flagIds) as Array<{ feature_flag_id: number; role_id: string }>
    return groupBy(rows.map((r) => [r.feature_flag_id, r.role_id]))
  }

  cohortNames(teamId: number, ids: readonly number[]): Map<number, string> {
    if (ids.length === 0) return new Map()
    const rows = prepared(this.#db, `SELECT id, name FROM cohorts WHERE team_id = ? AND id IN (${placeholders(ids)})`)
      .all(teamId, ...ids) as Array<{ id: number; name: string }>
    return new Map(rows.map((r) => [r.id, r.name]))
  }

  /** Which of `ids` are dashboards of the project. */
  dashboardIds(teamId: number, ids: readonly number[]): Set<number> {
    if (ids.length === 0) return new Set()
    const rows = prepared(this.#db, `SELECT id FROM dashboards WHERE team_id = ? AND id IN (${placeholders(ids)})`)
      .all(teamId, ...ids) as Array<{ id: number }>
    return new Set(rows.map((r) => r.id))
  }

  /** Live flags matching the filter; without `limit` every match is returned. */
  list(teamId: number, filter: FlagListFilter, limit?: number, offset = 0): { count: number; records: FeatureFlagRecord[] } {
    const where = ['f.team_id = ?', 'f.deleted = 0']
    const params: unknown[] = [teamId]
    if (filter.search !== undefined) {
      const like = `%${filter.search.replace(/[\\%_]/g, (c) => '\\' + c)}%`
      where.push(`(f.key LIKE ? ESCAPE '\\' OR f.name LIKE ? ESCAPE '\\' OR EXISTS (
        SELECT 1 FROM experiments e WHERE e.feature_flag_id = f.id AND e.deleted = 0 AND e.name LIKE ? ESCAPE '\\'))`)
      params.push(like, like, like)
    }
    if (filter.active !== undefined) {
      where.push('f.active = ?')
      params.push(filter.active ? 1 : 0)
    }
    if (filter.createdById !== undefined) {
      where.push('f.created_by_id = ?')
      params.push(filter.createdById)
    }
    if (filter.evaluationRuntime !== undefined) {
      where.push('f.evaluation_runtime = ?')
      params.push(filter.evaluationRuntime)
    }
    const variants = `COALESCE(json_array_length(f.filters, '$.multivariate.variants'), 0)`
    if (filter.type === 'boolean') where.push(`${variants} = 0`)
    if (filter.type === 'multivariant') where.push(`${variants} > 0`)
    if (filter.type === 'experiment') where.push('EXISTS (SELECT 1 FROM experiments e WHERE e.feature_flag_id = f.id)')
    if (filter.type === 'remote_config') where.push('f.is_remote_configuration = 1')
    if (filter.tags) {
      where.push(`EXISTS (SELECT 1 FROM json_each(f.tags) t WHERE t.value IN (${placeholders(filter.tags)}))`)
      params.push(...filter.tags)
    }
    if (filter.hasEvaluationTags !== undefined) where.push(`json_array_length(f.evaluation_tags) ${filter.hasEvaluationTags ? '>' : '='} 0`)
    if (filter.excludedKeys) {
      where.push(`f.key NOT IN (${placeholders(filter.excludedKeys)})`)
      params.push(...filter.excludedKeys)
    }
    const clause = where.join(' AND ')
    const direction = filter.order.descending ? 'DESC' : 'ASC'
    const count = (prepared(this.#db, `SELECT COUNT(*) AS n FROM feature_flags f WHERE ${clause}`).get(...params) as { n: number }).n
    const page = limit === undefined ? '' : ' LIMIT ? OFFSET ?'
    const rows = prepared(this.#db, `SELECT f.* FROM feature_flags f WHERE ${clause} ORDER BY f.${filter.order.column} ${direction}, f.id ${direction}${page}`)
      .all(...params, ...(limit === undefined ? [] : [limit, offset])) as FeatureFlagRow[]
    return { count, records: rows.map(toRecord) }
  }

  /** Every flag of the project, for evaluation: live ones, optionally only active. */
  definitions(teamId: number, activeOnly: boolean): FeatureFlagRecord[] {
    const rows = prepared(this.#db, `SELECT * FROM feature_flags WHERE team_id = ? AND deleted = 0 ${activeOnly ? 'AND active = 1' : ''} ORDER BY id`)
      .all(teamId) as FeatureFlagRow[]
    return rows.map(toRecord)
  }
}
