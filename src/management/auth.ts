/**
 * Who is calling the management API, and what they may reach. Failures follow PostHog's bodies: 401
 * `not_authenticated` without a key, 401 `invalid_personal_api_key` for an unknown or revoked one, 403
 * `permission_denied` for a missing scope, and 404 for a project the caller can't see, so that other
 * organisations' projects are indistinguishable from ones that don't exist.
 */
import { AppError } from '../common/errors.js'
import type { Accounts, Project, User } from './accounts.js'
import type { PersonalKey, PersonalKeys } from './api-keys.js'
import { hasScope, type Scope } from './scopes.js'

export interface Principal {
  readonly user: User
  readonly key: PersonalKey
}

export class Authenticator {
  readonly #accounts: Accounts
  readonly #keys: PersonalKeys

  constructor(accounts: Accounts, keys: PersonalKeys) {
    this.#accounts = accounts
    this.#keys = keys
  }

  /** Reads `Authorization: Bearer <key>`; throws the matching 401 when that fails. */
  authenticate(authorization: string | undefined): Principal {
    const match = authorization ? /^Bearer\s+(\S+)\s*$/i.exec(authorization) : null
    if (!match) throw new AppError('not_authenticated')
    const key = this.#keys.find(match[1])
    const user = key ? this.#accounts.userById(key.userId) : null
    if (!key || !user) throw new AppError('invalid_personal_api_key')
    return { user, key }
  }

  /**
   * The project named in the path (`@current` = the key's first project). A project outside the user's
   * organisations, or outside the key's project scope, is reported exactly like a missing one.
   */
  project(principal: Principal, projectId: string): Project {
    const project = this.visibleProject(principal, projectId)
    if (!project) throw new AppError('not_found', { detail: 'Project not found.' })
    return project
  }

  /** The project named in the path if the key can see it, else null. */
  visibleProject(principal: Principal, projectId: string): Project | null {
    const visible = this.#accounts
      .projectsOf(principal.user.id)
      .filter((p) => principal.key.scopedTeams === null || principal.key.scopedTeams.includes(p.id))
    return (projectId === '@current' ? visible[0] : /^\d+$/.test(projectId) ? visible.find((p) => p.id === Number(projectId)) : undefined) ?? null
  }

  /** The organisation named in the path (`@current` = the user's first one), 404 when not a member. */
  organization(principal: Principal, organizationId: string): { id: string; level: number } {
    const orgs = this.#accounts.organizationsOf(principal.user.id)
    const org = organizationId === '@current' ? orgs[0] : orgs.find((o) => o.id === organizationId)
    const level = org ? this.#accounts.membershipLevel(org.id, principal.user.id) : null
    if (!org || level === null) throw new AppError('not_found', { detail: 'Organization not found.' })
    return { id: org.id, level }
  }
}

export function requireScope(principal: Principal, scope: Scope): void {
  if (!hasScope(principal.key.scopes, scope)) {
    throw new AppError('permission_denied', { detail: `API key missing required scope '${scope}'` })
  }
}
