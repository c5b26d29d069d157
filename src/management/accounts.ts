/**
 * Organisations, users, memberships and projects: the records every other part hangs off. Writes are
 * rare (bootstrap, CLI); reads on the hot path go through ProjectDirectory's in-memory map instead.
 */
import { iso, type Clock } from '../common/clock.js'
import { randomKey, uuidv4 } from '../common/ids.js'
import type { Db } from '../storage/sqlite/database.js'
import { prepared } from '../storage/sqlite/database.js'
import type { ProjectChanges } from './project-settings.js'

export const PROJECT_KEY_PREFIX = 'phc_'
export const SECRET_KEY_PREFIX = 'phs_'

/** PostHog's OrganizationMembership levels. */
export const MembershipLevel = { member: 1, admin: 8, owner: 15 } as const

export interface Organization {
  id: string
  name: string
  created_at: string
}

export interface User {
  id: number
  uuid: string
  distinct_id: string
  first_name: string
  last_name: string
  email: string
  is_email_verified: number
  hedgehog_config: string | null
  created_at: string
}

export interface Project {
  id: number
  organization_id: string
  name: string
  api_token: string
  /** The project secret API key (`phs_…`): reads flag definitions and remote config, nothing else. */
  secret_api_token: string
  anonymize_ips: number
  /** An IANA zone name (PostHog's Team.timezone, default UTC): the wall clock of the project's cron schedules. */
  timezone: string
  /** PostHog's Team.test_account_filters, as JSON text: the property filters experiments leave out with `filterTestAccounts`. */
  test_account_filters: string
  /** PostHog's Team.modifiers, as JSON text (`null` until set): skylark keeps the bounce rate's two (project-settings.ts). */
  modifiers: string
  /** PostHog's Team.cookieless_server_hash_mode: 0 disabled, 1 stateless, 2 stateful (persons/cookieless.ts); null reads as 0. */
  cookieless_server_hash_mode: number | null
  created_at: string
  updated_at: string
}

/** The user summary embedded as `created_by` in API objects. */
export interface UserSummary {
  id: number
  uuid: string
  distinct_id: string
  first_name: string
  last_name: string
  email: string
  is_email_verified: boolean
  hedgehog_config: Record<string, unknown> | null
}

export function userSummary(user: User): UserSummary {
  return {
    id: user.id,
    uuid: user.uuid,
    distinct_id: user.distinct_id,
    first_name: user.first_name,
    last_name: user.last_name,
    email: user.email,
    is_email_verified: user.is_email_verified === 1,
    hedgehog_config: user.hedgehog_config ? (JSON.parse(user.hedgehog_config) as Record<string, unknown>) : null,
  }
}

export class Accounts {
  readonly #db: Db
  readonly #clock: Clock

  constructor(db: Db, clock: Clock) {
    this.#db = db
    this.#clock = clock
  }

  get db(): Db {
    return this.#db
  }

  createOrganization(name: string): Organization {
    const org: Organization = { id: uuidv4(), name, created_at: iso(this.#clock.now()) }
    prepared(this.#db, 'INSERT INTO organizations (id, name, created_at) VALUES (@id, @name, @created_at)').run(org)
    return org
  }

  createUser(input: { email: string; first_name?: string; last_name?: string }): User {
    const uuid = uuidv4()
    const info = prepared(this.#db, 
        `INSERT INTO users (uuid, distinct_id, first_name, last_name, email, is_email_verified, created_at)
         VALUES (?, ?, ?, ?, ?, 0, ?)`,
      )
      .run(uuid, uuid, input.first_name ?? '', input.last_name ?? '', input.email, iso(this.#clock.now()))
    return this.userById(Number(info.lastInsertRowid))!
  }

  addMember(organizationId: string, userId: number, level: number): void {
    prepared(this.#db, 
        `INSERT INTO organization_memberships (organization_id, user_id, level, joined_at) VALUES (?, ?, ?, ?)
         ON CONFLICT (organization_id, user_id) DO UPDATE SET level = excluded.level`,
      )
      .run(organizationId, userId, level, iso(this.#clock.now()))
  }

  createProject(organizationId: string, name: string): Project {
    const now = iso(this.#clock.now())
    const info = prepared(this.#db, 
        `INSERT INTO projects (organization_id, name, api_token, secret_api_token, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)`,
      )
      .run(organizationId, name, randomKey(PROJECT_KEY_PREFIX), randomKey(SECRET_KEY_PREFIX), now, now)
    return this.projectById(Number(info.lastInsertRowid))!
  }

  userById(id: number): User | null {
    return (prepared(this.#db, 'SELECT * FROM users WHERE id = ?').get(id) as User | undefined) ?? null
  }

  userByEmail(email: string): User | null {
    return (prepared(this.#db, 'SELECT * FROM users WHERE email = ?').get(email) as User | undefined) ?? null
  }

  userByUuid(uuid: string): User | null {
    return (prepared(this.#db, 'SELECT * FROM users WHERE uuid = ?').get(uuid) as User | undefined) ?? null
  }

  organizationById(id: string): Organization | null {
    return (prepared(this.#db, 'SELECT * FROM organizations WHERE id = ?').get(id) as Organization | undefined) ?? null
  }

  projectById(id: number): Project | null {
    return (prepared(this.#db, 'SELECT * FROM projects WHERE id = ?').get(id) as Project | undefined) ?? null
  }

  projects(): Project[] {
    return prepared(this.#db, 'SELECT * FROM projects ORDER BY id').all() as Project[]
  }

  organizations(): Organization[] {
    // Creation order, ties (one millisecond) by insertion: the slugs (account-objects.ts) give the first namesake the plain one.
    return prepared(this.#db, 'SELECT * FROM organizations ORDER BY created_at, rowid').all() as Organization[]
  }

  memberCount(organizationId: string): number {
    return prepared(this.#db, 'SELECT COUNT(*) FROM organization_memberships WHERE organization_id = ?').pluck().get(organizationId) as number
  }

  /** Changes a project's settings (the caller reloads the ProjectDirectory so capture sees them at once). */
  updateProject(id: number, changes: ProjectChanges): Project {
    const now = iso(this.#clock.now())
    prepared(
      this.#db,
      `UPDATE projects SET name = COALESCE(@name, name), anonymize_ips = COALESCE(@anonymize_ips, anonymize_ips),
         timezone = COALESCE(@timezone, timezone), test_account_filters = COALESCE(@test_account_filters, test_account_filters),
         modifiers = COALESCE(@modifiers, modifiers),
         cookieless_server_hash_mode = CASE WHEN @set_cookieless THEN @cookieless ELSE cookieless_server_hash_mode END,
         updated_at = @now WHERE id = @id`,
    ).run({
      id,
      now,
      name: changes.name ?? null,
      anonymize_ips: changes.anonymize_ips === undefined ? null : changes.anonymize_ips ? 1 : 0,
      timezone: changes.timezone ?? null,
      test_account_filters: changes.test_account_filters ?? null,
      modifiers: changes.modifiers ?? null,
      set_cookieless: changes.cookieless_server_hash_mode === undefined ? 0 : 1,
      cookieless: changes.cookieless_server_hash_mode ?? null,
    })
    return this.projectById(id)!
  }

  /** Membership level of the user in the organisation, or null when not a member. */
  membershipLevel(organizationId: string, userId: number): number | null {
    const row = prepared(this.#db, 'SELECT level FROM organization_memberships WHERE organization_id = ? AND user_id = ?')
      .get(organizationId, userId) as { level: number } | undefined
    return row?.level ?? null
  }

  organizationsOf(userId: number): Organization[] {
    return prepared(this.#db, 
        `SELECT o.* FROM organizations o JOIN organization_memberships m ON m.organization_id = o.id
         WHERE m.user_id = ? ORDER BY m.joined_at, o.id`,
      )
      .all(userId) as Organization[]
  }

  /** Projects of every organisation the user belongs to, oldest first. */
  projectsOf(userId: number): Project[] {
    return prepared(this.#db, 
        `SELECT p.* FROM projects p JOIN organization_memberships m ON m.organization_id = p.organization_id
         WHERE m.user_id = ? ORDER BY p.id`,
      )
      .all(userId) as Project[]
  }
}
