/**
 * Role access to a feature flag: which view-only organisation roles may edit it anyway. Reading is open to
 * project members; adding or removing roles follows the same rule as editing the flag (see `canEditFlag`),
 * answered with PostHog's "You can't edit roles for this feature flag.".
 */
import { iso, type Clock } from '../../common/clock.js'
import { AppError, ValidationError } from '../../common/errors.js'
import { roleAccessCreateSchema, type RoleAccessWrite } from '../../schemas/feature-flag.js'
import { assertValid, createAjv, type ValidateFunction } from '../../schemas/index.js'
import type { Db } from '../../storage/sqlite/database.js'
import type { Project } from '../accounts.js'
import type { RoleObject, Roles } from '../roles.js'
import type { FeatureFlagObject } from './serialize.js'
import type { FeatureFlags } from './service.js'
import { prepared } from '../../storage/sqlite/database.js'

export const ROLE_EDIT_DENIED = "You can't edit roles for this feature flag."
const FLAG_NOT_FOUND = 'Feature flag not found.'

export interface RoleAccessObject {
  id: number
  feature_flag: FeatureFlagObject
  role: RoleObject
  role_id: string
  added_at: string
  updated_at: string
}

interface RoleAccessRow {
  id: number
  feature_flag_id: number
  role_id: string
  added_at: string
  updated_at: string
}

let validate: ValidateFunction<RoleAccessWrite> | undefined
const compiled = () => (validate ??= createAjv().compile<RoleAccessWrite>(roleAccessCreateSchema))

export class FlagRoleAccess {
  readonly #db: Db
  readonly #clock: Clock
  readonly #flags: FeatureFlags
  readonly #roles: Roles

  constructor(db: Db, clock: Clock, flags: FeatureFlags, roles: Roles) {
    this.#db = db
    this.#clock = clock
    this.#flags = flags
    this.#roles = roles
  }

  list(project: Project, flagId: number, userId: number, limit: number, offset: number): { count: number; results: RoleAccessObject[] } {
    const flag = this.#flags.record(project, flagId, FLAG_NOT_FOUND)
    const count = (
      prepared(this.#db, 'SELECT COUNT(*) AS n FROM feature_flag_role_access WHERE feature_flag_id = ?').get(flag.id) as { n: number }
    ).n
    const rows = prepared(this.#db, 'SELECT * FROM feature_flag_role_access WHERE feature_flag_id = ? ORDER BY added_at, id LIMIT ? OFFSET ?')
      .all(flag.id, limit, offset) as RoleAccessRow[]
    const flagObject = this.#flags.toObjects(project, [flag], userId)[0]
    return { count, results: rows.map((row) => this.#toObject(project, row, flagObject)) }
  }

  get(project: Project, flagId: number, id: number, userId: number): RoleAccessObject {
    const flag = this.#flags.record(project, flagId, FLAG_NOT_FOUND)
    return this.#toObject(project, this.#row(flag.id, id), this.#flags.toObjects(project, [flag], userId)[0])
  }

  create(project: Project, flagId: number, body: unknown, userId: number): RoleAccessObject {
    return this.#db
      .transaction(() => {
        const flag = this.#flags.record(project, flagId, FLAG_NOT_FOUND)
        if (!this.#flags.canEdit(project, flag, userId)) throw new AppError('permission_denied', { detail: ROLE_EDIT_DENIED })
        assertValid(compiled(), body)
        const role = prepared(this.#db, 'SELECT id FROM roles WHERE id = ? AND organization_id = ?')
          .get(body.role_id.toLowerCase(), project.organization_id) as { id: string } | undefined
        if (!role) throw new AppError('not_found', { detail: 'Role not found.' })
        const exists = prepared(this.#db, 'SELECT 1 FROM feature_flag_role_access WHERE feature_flag_id = ? AND role_id = ?').get(flag.id, role.id)
        if (exists) throw new ValidationError('unique', 'The fields feature_flag, role must make a unique set.', 'role_id')
        const now = iso(this.#clock.now())
        const info = prepared(this.#db, 'INSERT INTO feature_flag_role_access (feature_flag_id, role_id, added_at, updated_at) VALUES (?, ?, ?, ?)')
          .run(flag.id, role.id, now, now)
        return this.get(project, flag.id, Number(info.lastInsertRowid), userId)
      })
      .immediate()
  }

  delete(project: Project, flagId: number, id: number, userId: number): void {
    this.#db
      .transaction(() => {
        const flag = this.#flags.record(project, flagId, FLAG_NOT_FOUND)
        if (!this.#flags.canEdit(project, flag, userId)) throw new AppError('permission_denied', { detail: ROLE_EDIT_DENIED })
        this.#row(flag.id, id)
        prepared(this.#db, 'DELETE FROM feature_flag_role_access WHERE id = ?').run(id)
      })
      .immediate()
  }

  #row(flagId: number, id: number): RoleAccessRow {
    const row = prepared(this.#db, 'SELECT * FROM feature_flag_role_access WHERE id = ? AND feature_flag_id = ?').get(id, flagId) as
      | RoleAccessRow
      | undefined
    if (!row) throw new AppError('not_found')
    return row
  }

  #toObject(project: Project, row: RoleAccessRow, flag: FeatureFlagObject): RoleAccessObject {
    return {
      id: row.id,
      feature_flag: flag,
      role: this.#roles.get(project.organization_id, row.role_id),
      role_id: row.role_id,
      added_at: row.added_at,
      updated_at: row.updated_at,
    }
  }
}
