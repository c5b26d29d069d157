/**
 * Which project a public request belongs to. The project API key (`phc_…`) is the normal answer; a
 * personal key (`phx_…`) is accepted together with an explicit `project_id` the key's user can see, as
 * PostHog does. Used on the main thread and in pool workers (read-only connections).
 */
import { AppError } from '../common/errors.js'
import type { Accounts } from './accounts.js'
import { PERSONAL_KEY_PREFIX, type PersonalKeys } from './api-keys.js'
import type { ProjectDirectory } from './project-directory.js'

export interface ResolvedProject {
  id: number
  anonymizeIps: boolean
  timezone: string
  /** persons/cookieless.ts: 0 disabled, 1 stateless, 2 stateful. */
  cookielessMode: number
}

export type ProjectResolver = (token: string | null, projectIdHint: unknown) => ResolvedProject

export function createProjectResolver(directory: ProjectDirectory, keys: PersonalKeys, accounts: Accounts): ProjectResolver {
  return (token, projectIdHint) => {
    if (token === null || token === '') {
      throw new AppError('invalid_api_key', {
        detail: 'API key not provided. You can find your project API key in your project settings.',
      })
    }
    if (token.startsWith(PERSONAL_KEY_PREFIX)) {
      const key = keys.find(token)
      const id = typeof projectIdHint === 'number' ? projectIdHint : typeof projectIdHint === 'string' && /^\d+$/.test(projectIdHint) ? Number(projectIdHint) : null
      const project = key && id !== null ? accounts.projectsOf(key.userId).find((p) => p.id === id) : undefined
      if (!project) {
        throw new AppError('invalid_project', {
          attr: 'project_id',
          detail: 'Invalid project: a personal API key needs the project_id of a project it can access.',
        })
      }
      return { id: project.id, anonymizeIps: project.anonymize_ips === 1, timezone: project.timezone, cookielessMode: project.cookieless_server_hash_mode ?? 0 }
    }
    const project = directory.byToken(token)
    if (!project) throw new AppError('invalid_api_key')
    return project
  }
}
