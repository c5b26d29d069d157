/** An in-memory management store with one organisation, project and owner, and a clock tests can move. */
import { createManagement, MembershipLevel, type Project, type User } from '../../../src/management/index.js'
import { migrate, openDatabase } from '../../../src/storage/index.js'
import { MANAGEMENT_MIGRATIONS } from '../../../src/storage/sqlite/migrations/management.js'

export const T0 = Date.parse('2024-01-01T00:00:00.000Z')

export function flagWorld() {
  const db = openDatabase(':memory:')
  migrate(db, MANAGEMENT_MIGRATIONS)
  let now = T0
  const clock = { now: () => now }
  const m = createManagement(db, clock)
  const org = m.accounts.createOrganization('Org')
  const owner = m.accounts.createUser({ email: 'owner@example.com', first_name: 'Olive' })
  m.accounts.addMember(org.id, owner.id, MembershipLevel.owner)
  const project = m.accounts.createProject(org.id, 'Project')
  return {
    db,
    m,
    org,
    owner,
    project,
    advance(ms: number) {
      now += ms
    },
    member(email: string, level: number = MembershipLevel.member): User {
      const user = m.accounts.createUser({ email })
      m.accounts.addMember(org.id, user.id, level)
      return user
    },
    create(body: Record<string, unknown>, user: User = owner, p: Project = project) {
      return m.featureFlags.create(p, body, user.id)
    },
    update(id: number, body: Record<string, unknown>, user: User = owner) {
      return m.featureFlags.update(project, id, body, user.id)
    },
    cohort(body: Record<string, unknown>) {
      return m.cohorts.create(project.id, body, owner.id)
    },
  }
}

export const simple = (key: string, extra: Record<string, unknown> = {}) => ({
  key,
  filters: { groups: [{ properties: [], rollout_percentage: 100 }] },
  ...extra,
})
