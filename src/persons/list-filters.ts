/**
 * WHERE clauses of the persons and groups lists, as PostHog's person and groups APIs filter them. Their
 * shape follows the request (property groups nest), so they are prepared per request; the unfiltered lists
 * keep statements prepared once.
 */
import { compileSqliteProperties, type PropertyNode } from '../storage/events/index.js'

export interface PersonFilters {
  /** The person owning this distinct id. */
  distinctId?: string | null
  /** The `email` property equals it. */
  email?: string | null
  /** The email contains it (any case), or a distinct id or the uuid equals it. */
  search?: string | null
  /** Conditions on person properties, all of which must hold. */
  properties?: readonly PropertyNode[]
}

export interface GroupFilters {
  /** The key contains it, any case. */
  groupKey?: string | null
  /** The properties' JSON text contains it (any case), or the key equals it (any case). */
  search?: string | null
}

export interface Where {
  sql: string
  params: unknown[]
}

/** Over `persons` (its `properties` column) and `person_distinct_ids`. */
export function personsWhere(teamId: number, f: PersonFilters): Where {
  const parts = ['team_id = ?']
  const params: unknown[] = [teamId]
  const ownsId = 'id IN (SELECT person_id FROM person_distinct_ids WHERE team_id = ? AND distinct_id = ?)'
  if (f.distinctId) {
    parts.push(ownsId)
    params.push(teamId, f.distinctId)
  }
  const conditions: PropertyNode[] = [...(f.properties ?? [])]
  if (f.email) conditions.push({ key: 'email', operator: 'exact', value: f.email })
  if (conditions.length > 0) {
    const c = compileSqliteProperties(conditions)
    parts.push(c.sql)
    params.push(...c.params)
  }
  if (f.search) {
    const email = compileSqliteProperties([{ key: 'email', operator: 'icontains', value: f.search }])
    parts.push(`(${email.sql} OR ${ownsId} OR uuid = lower(?))`)
    params.push(...email.params, teamId, f.search, f.search)
  }
  return { sql: parts.join(' AND '), params }
}

/** Over `groups`, within one project and type. */
export function groupsWhere(teamId: number, groupTypeIndex: number, f: GroupFilters): Where {
  const parts = ['team_id = ?', 'group_type_index = ?']
  const params: unknown[] = [teamId, groupTypeIndex]
  if (f.groupKey) {
    parts.push('instr(lower(group_key), lower(?)) > 0')
    params.push(f.groupKey)
  }
  if (f.search) {
    parts.push('(instr(lower(properties), lower(?)) > 0 OR lower(group_key) = lower(?))')
    params.push(f.search, f.search)
  }
  return { sql: parts.join(' AND '), params }
}
