/**
 * Who is calling the management API, and what they may reach. Failures follow PostHog's bodies: 401
 * `not_authenticated` without a key, 401 `invalid_personal_api_key` for an unknown or revoked one, 403
 * `permission_denied` for a missing scope, and 404 for a project the caller can't see, so that other
 * organisations' projects are indistinguishable from ones that don't exist.
 */
import { AppError } from '../common/errors.js'
import type { Accounts, Organization, Project, User } from './accounts.js'
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

  /** The user's projects the key may reach (all of them, or its `scoped_teams`), oldest first. */
  visibleProjects(principal: Principal): Project[] {
    const scoped = principal.key.scopedTeams
    return this.#accounts.projectsOf(principal.user.id).filter((p) => scoped === null || scoped.includes(p.id))
  }

  /** The project named in the path if the key can see it, else null. */
  visibleProject(principal: Principal, projectId: string): Project | null {
    const visible = this.visibleProjects(principal)
    return (projectId === '@current' ? visible[0] : /^\d+$/.test(projectId) ? visible.find((p) => p.id === Number(projectId)) : undefined) ?? null
  }

  /**
   * The user's organisations the key may reach: a key limited to some projects reaches only their
   * organisations (PostHog refuses such a key on organisation routes with 403; here they stay as narrow as
   * the project list, and the others answer 404 like ones that don't exist).
   */
  visibleOrganizations(principal: Principal): Organization[] {
    const orgs = this.#accounts.organizationsOf(principal.user.id)
    if (principal.key.scopedTeams === null) return orgs
    const reachable = new Set(this.visibleProjects(principal).map((p) => p.organization_id))
    return orgs.filter((o) => reachable.has(o.id))
  }

  /**
   * What `@current` means, PostHog's user.team and user.organization: the key's first project, and that
   * project's organisation, so the two always agree (a user with no project: the first organisation).
   */
  current(principal: Principal): { project: Project | null; organization: Organization | null } {
    const project = this.visibleProjects(principal)[0] ?? null
    const orgs = this.visibleOrganizations(principal)
    return { project, organization: (project ? orgs.find((o) => o.id === project.organization_id) : orgs[0]) ?? null }
  }

  /** The organisation named in the path (`@current` as above), 404 when not a member. */
  organization(principal: Principal, organizationId: string): { id: string; level: number } {
    const org = this.visibleOrganization(principal, organizationId)
    const level = org ? this.#accounts.membershipLevel(org.id, principal.user.id) : null
    if (!org || level === null) throw new AppError('not_found', { detail: 'Organization not found.' })
    return { id: org.id, level }
  }

  visibleOrganization(principal: Principal, organizationId: string): Organization | null {
    if (organizationId === '@current') return this.current(principal).organization
    return this.visibleOrganizations(principal).find((o) => o.id === organizationId) ?? null
  }
}

export function requireScope(principal: Principal, scope: Scope): void {
  if (!hasScope(principal.key.scopes, scope)) {
    throw new AppError('permission_denied', { detail: `API key missing required scope '${scope}'` })
  }
}
