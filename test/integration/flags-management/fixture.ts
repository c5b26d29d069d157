/**
 * A running server plus direct access to its management.db, to create the users, memberships, roles and
 * keys the permission tests need (the API has no user management).
 */
import { rmSync } from 'node:fs'
import { systemClock } from '../../../src/common/clock.js'
import { createManagement, MembershipLevel, type User } from '../../../src/management/index.js'
import { dataPaths, openManagementDb } from '../../../src/storage/index.js'
import { bootstrapDataDir, startServer, tempDir, type TestResponse, type TestServer } from '../../helpers/server.js'

export interface Member {
  user: User
  key: string
  call(method: string, path: string, body?: unknown): Promise<TestResponse>
}

export async function flagServer() {
  const dataDir = tempDir('skylark-flags-')
  bootstrapDataDir(dataDir)
  const db = openManagementDb(dataPaths(dataDir))
  const m = createManagement(db, systemClock)
  let server: TestServer
  try {
    server = await startServer({ dataDir })
  } catch (error) {
    db.close()
    rmSync(dataDir, { recursive: true, force: true })
    throw error
  }
  const projectId = server.boot.project_id
  const orgId = server.boot.organization_id
  const base = `/api/projects/${projectId}`
  let counter = 0

  const keyFor = (user: User, scopes: string[]): Member => {
    const key = m.keys.create({ userId: user.id, label: 'test', scopes }).key
    return { user, key, call: (method, path, body) => server.api(method, path, body, key) }
  }

  return {
    server,
    db,
    m,
    projectId,
    orgId,
    base,
    flags: `${base}/feature_flags/`,
    /** A new user in the project's organisation with a key of the given scopes. */
    member(level: number = MembershipLevel.member, scopes: string[] = ['*'], organizationId = orgId): Member {
      const user = m.accounts.createUser({ email: `user${++counter}-${Date.now()}@example.com`, first_name: `User${counter}` })
      m.accounts.addMember(organizationId, user.id, level)
      return keyFor(user, scopes)
    },
    /** Another key of an existing user. */
    keyFor,
    async close() {
      await server.stop()
      db.close()
      server.cleanup()
    },
  }
}

export type FlagServer = Awaited<ReturnType<typeof flagServer>>

export const simpleFlag = (key: string, extra: Record<string, unknown> = {}) => ({
  key,
  filters: { groups: [{ properties: [], rollout_percentage: 100 }] },
  ...extra,
})
