/**
 * First-run setup: a default organisation, project and owner, and an all-scopes personal key so the
 * service is usable the moment it starts. Idempotent for the records; every call that asks for a key gets
 * a fresh one, because stored keys can't be shown again.
 */
import type { Accounts } from './accounts.js'
import { MembershipLevel } from './accounts.js'
import type { PersonalKeys } from './api-keys.js'

export const DEFAULT_USER_EMAIL = 'admin@skylark.local'

export interface BootstrapResult {
  organization_id: string
  project_id: number
  project_api_key: string
  /** Server-only: reads this project's flag definitions and remote config (SDKs' `secretKey`). */
  project_secret_api_key: string
  personal_api_key: string | null
  /** True when this call created the organisation and project. */
  created: boolean
}

export function bootstrap(accounts: Accounts, keys: PersonalKeys, options: { createKey: boolean }): BootstrapResult {
  // IMMEDIATE takes the write lock up front, so a CLI call and a starting server can't both create.
  return accounts.db
    .transaction(() => {
      let created = false
      let project = accounts.projects()[0]
      if (!project) {
        const org = accounts.createOrganization('Default organization')
        const user = accounts.userByEmail(DEFAULT_USER_EMAIL) ?? accounts.createUser({ email: DEFAULT_USER_EMAIL, first_name: 'Admin' })
        accounts.addMember(org.id, user.id, MembershipLevel.owner)
        project = accounts.createProject(org.id, 'Default project')
        created = true
      }
      const owner = ownerOf(accounts, project.organization_id)
      const personal = options.createKey
        ? keys.create({ userId: owner.id, label: created ? 'bootstrap' : 'bootstrap (cli)', scopes: ['*'] }).key
        : null
      return {
        organization_id: project.organization_id,
        project_id: project.id,
        project_api_key: project.api_token,
        project_secret_api_key: project.secret_api_token,
        personal_api_key: personal,
        created,
      }
    })
    .immediate()
}

function ownerOf(accounts: Accounts, organizationId: string) {
  const row = accounts.db
    .prepare(
      `SELECT user_id FROM organization_memberships WHERE organization_id = ? ORDER BY level DESC, joined_at LIMIT 1`,
    )
    .get(organizationId) as { user_id: number } | undefined
  const existing = row ? accounts.userById(row.user_id) : null
  if (existing) return existing
  const user = accounts.userByEmail(DEFAULT_USER_EMAIL) ?? accounts.createUser({ email: DEFAULT_USER_EMAIL, first_name: 'Admin' })
  accounts.addMember(organizationId, user.id, MembershipLevel.owner)
  return user
}
