/**
 * Organisation roles and their members. A role's feature-flag access level decides what its members may edit
 * (`canEditFlag`), so roles are real records with real memberships, not labels.
 */
import { iso, type Clock } from '../common/clock.js'
import { AppError, ValidationError } from '../common/errors.js'
import { uuidv4 } from '../common/ids.js'
import { isPlainObject } from '../common/json.js'
import type { Db } from '../storage/sqlite/database.js'
import { userSummary, type Accounts, type UserSummary } from './accounts.js'
import { prepared } from '../storage/sqlite/database.js'

/** PostHog's access levels for feature flags: 21 = can only view, 37 = can always edit. */
export const FlagAccessLevel = { view: 21, edit: 37 } as const

interface RoleRow {
  id: string
  organization_id: string
  name: string
  feature_flags_access_level: number
  created_by_id: number | null
  created_at: string
}

export interface RoleMembership {
  id: string
  role_id: string
  user: UserSummary
  joined_at: string
}

export interface RoleObject {
  id: string
  name: string
  feature_flags_access_level: number
  created_at: string
  created_by: UserSummary | null
  members: RoleMembership[]
  associated_flags: Array<{ id: number; key: string }>
}

export class Roles {
  readonly #db: Db
  readonly #accounts: Accounts
  readonly #clock: Clock

  constructor(db: Db, accounts: Accounts, clock: Clock) {
    this.#db = db
    this.#accounts = accounts
    this.#clock = clock
  }

  count(organizationId: string): number {
    return (
      prepared(this.#db, 'SELECT COUNT(*) AS n FROM roles WHERE organization_id = ?').get(organizationId) as { n: number }
    ).n
  }

  list(organizationId: string, limit: number, offset: number): RoleObject[] {
    const rows = prepared(this.#db, 'SELECT * FROM roles WHERE organization_id = ? ORDER BY created_at, id LIMIT ? OFFSET ?')
      .all(organizationId, limit, offset) as RoleRow[]
    return rows.map((r) => this.#toObject(r))
  }

  get(organizationId: string, id: string): RoleObject {
    return this.#toObject(this.#row(organizationId, id))
  }

  /** Validates a create body: `name` (required, unique per organisation), `feature_flags_access_level`. */
  create(organizationId: string, body: unknown, createdById: number | null): RoleObject {
    if (!isPlainObject(body)) throw new ValidationError('invalid_input', 'Expected a JSON object.')
    const { name, feature_flags_access_level: level } = body
    if (typeof name !== 'string' || name.trim() === '') {
      throw new ValidationError('required', 'This field is required.', 'name')
    }
    if (name.length > 200) throw new ValidationError('max_length', 'Ensure this field has no more than 200 characters.', 'name')
    if (level !== undefined && level !== FlagAccessLevel.view && level !== FlagAccessLevel.edit) {
      throw new ValidationError('invalid_choice', `"${String(level)}" is not a valid choice.`, 'feature_flags_access_level')
    }
    const exists = prepared(this.#db, 'SELECT 1 FROM roles WHERE organization_id = ? AND name = ?').get(organizationId, name)
    if (exists) throw new ValidationError('unique', 'There is already a role with this name.', 'name')
    const row: RoleRow = {
      id: uuidv4(),
      organization_id: organizationId,
      name,
      feature_flags_access_level: (level as number | undefined) ?? FlagAccessLevel.edit,
      created_by_id: createdById,
      created_at: iso(this.#clock.now()),
    }
    prepared(this.#db, 
        `INSERT INTO roles (id, organization_id, name, feature_flags_access_level, created_by_id, created_at)
         VALUES (@id, @organization_id, @name, @feature_flags_access_level, @created_by_id, @created_at)`,
      )
      .run(row)
    return this.#toObject(row)
  }

  delete(organizationId: string, id: string): void {
    this.#row(organizationId, id)
    prepared(this.#db, 'DELETE FROM roles WHERE id = ?').run(id)
  }

  addMember(organizationId: string, roleId: string, userUuid: unknown): RoleMembership {
    this.#row(organizationId, roleId)
    const user = typeof userUuid === 'string' ? this.#accounts.userByUuid(userUuid) : null
    if (!user || this.#accounts.membershipLevel(organizationId, user.id) === null) {
      throw new ValidationError('invalid_input', 'User does not exist in this organization.', 'user_uuid')
    }
    const existing = prepared(this.#db, 'SELECT 1 FROM role_memberships WHERE role_id = ? AND user_id = ?')
      .get(roleId, user.id)
    if (existing) throw new ValidationError('unique', 'User is already part of the role.', 'user_uuid')
    const membership = { id: uuidv4(), role_id: roleId, user_id: user.id, joined_at: iso(this.#clock.now()) }
    prepared(this.#db, 'INSERT INTO role_memberships (id, role_id, user_id, joined_at) VALUES (@id, @role_id, @user_id, @joined_at)')
      .run(membership)
    return { id: membership.id, role_id: roleId, user: userSummary(user), joined_at: membership.joined_at }
  }

  removeMember(organizationId: string, roleId: string, membershipId: string): void {
    this.#row(organizationId, roleId)
    const result = prepared(this.#db, 'DELETE FROM role_memberships WHERE id = ? AND role_id = ?').run(membershipId, roleId)
    if (result.changes === 0) throw new AppError('not_found')
  }

  members(roleId: string): RoleMembership[] {
    const rows = prepared(this.#db, 'SELECT id, user_id, joined_at FROM role_memberships WHERE role_id = ? ORDER BY joined_at, id')
      .all(roleId) as Array<{ id: string; user_id: number; joined_at: string }>
    return rows.flatMap((r) => {
      const user = this.#accounts.userById(r.user_id)
      return user ? [{ id: r.id, role_id: roleId, user: userSummary(user), joined_at: r.joined_at }] : []
    })
  }

  /** The roles the user is a member of, each with its feature-flag access level, for edit checks. */
  flagAccessOf(userId: number): Map<string, number> {
    const rows = prepared(
      this.#db,
      'SELECT r.id, r.feature_flags_access_level AS level FROM role_memberships m JOIN roles r ON r.id = m.role_id WHERE m.user_id = ?',
    ).all(userId) as Array<{ id: string; level: number }>
    return new Map(rows.map((r) => [r.id, r.level]))
  }

  #row(organizationId: string, id: string): RoleRow {
    const row = prepared(this.#db, 'SELECT * FROM roles WHERE id = ? AND organization_id = ?').get(id, organizationId) as
      | RoleRow
      | undefined
    if (!row) throw new AppError('not_found')
    return row
  }

  #toObject(row: RoleRow): RoleObject {
    const creator = row.created_by_id === null ? null : this.#accounts.userById(row.created_by_id)
    const flags = prepared(this.#db, 
        `SELECT f.id, f.key FROM feature_flag_role_access a JOIN feature_flags f ON f.id = a.feature_flag_id
         WHERE a.role_id = ? AND f.deleted = 0 ORDER BY f.id`,
      )
      .all(row.id) as Array<{ id: number; key: string }>
    return {
      id: row.id,
      name: row.name,
      feature_flags_access_level: row.feature_flags_access_level,
      created_at: row.created_at,
      created_by: creator ? userSummary(creator) : null,
      members: this.members(row.id),
      associated_flags: flags,
    }
  }
}
