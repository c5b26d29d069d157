/**
 * Filling static cohorts through the API, as PostHog's cohort viewset does: person UUIDs on create
 * (`_create_static_person_ids`), `add_persons_to_static_cohort` and `remove_person_from_static_cohort`.
 * Members live in persons.db, which management may not import: the HTTP layer hands in the writer
 * (src/persons' StaticCohortWriter). After each write the cohort's `count` is what the writer reports.
 */
import { AppError, ValidationError } from '../../common/errors.js'
import { isPlainObject } from '../../common/json.js'
import type { CohortActor, CohortObject, Cohorts } from './service.js'

/** PostHog's DEFAULT_COHORT_INSERT_BATCH_SIZE: the most persons one request may add. */
export const MAX_PERSONS_PER_ADD = 1000
const UUID_RE = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i

export interface MembersChange {
  /** How many of the given persons the project has. */
  found: number
  /** Members of the cohort after the change. */
  count: number
}

export interface StaticCohortMembers {
  addPersons(teamId: number, cohortId: number, uuids: readonly string[]): MembersChange
  removePerson(teamId: number, cohortId: number, uuid: string): MembersChange
}

/** UUIDs in PostHog's hyphenated form; persons.db keeps them so. Anything else names no person. */
const canonical = (text: string): string | null => {
  if (!UUID_RE.test(text)) return null
  const hex = text.replace(/-/g, '').toLowerCase()
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}

const uuidsOf = (items: readonly unknown[]): string[] =>
  items.flatMap((item) => {
    const uuid = typeof item === 'string' ? canonical(item) : null
    return uuid === null ? [] : [uuid]
  })

/** Creates the cohort; a static one sent `_create_static_person_ids` starts with those persons (an empty list: none, count 0). */
export function createCohort(cohorts: Cohorts, members: StaticCohortMembers, teamId: number, body: unknown, actor: CohortActor): CohortObject {
  const cohort = cohorts.create(teamId, body, actor.userId, actor)
  const ids = isPlainObject(body) ? body._create_static_person_ids : undefined
  if (!cohort.is_static || !Array.isArray(ids)) return cohort
  const { count } = members.addPersons(teamId, cohort.id, uuidsOf(ids))
  cohorts.setCount(teamId, cohort.id, count)
  return cohorts.get(teamId, cohort.id)
}

export function addPersonsToStaticCohort(cohorts: Cohorts, members: StaticCohortMembers, teamId: number, id: number, body: unknown, actor: CohortActor): void {
  const cohort = cohorts.get(teamId, id)
  if (!cohort.is_static) throw new ValidationError('invalid', 'Can only add users to static cohorts')
  const ids = isPlainObject(body) ? body.person_ids : undefined
  if (!Array.isArray(ids)) throw new ValidationError('invalid', 'person_ids must be a list')
  if (ids.length === 0) throw new ValidationError('invalid', 'person_ids cannot be empty')
  if (ids.length > MAX_PERSONS_PER_ADD) throw new ValidationError('invalid', 'List size exceeds limit')
  const uuids = uuidsOf(ids)
  // PostHog looks the persons up before writing; here the lookup and the write are one transaction.
  const change = uuids.length === 0 ? { found: 0, count: 0 } : members.addPersons(teamId, id, uuids)
  if (change.found === 0) throw new ValidationError('invalid', 'No valid users to add to cohort')
  cohorts.setCount(teamId, id, change.count)
  cohorts.logMembers(teamId, id, 'persons_added_manually', actor)
}

export function removePersonFromStaticCohort(cohorts: Cohorts, members: StaticCohortMembers, teamId: number, id: number, body: unknown, actor: CohortActor): void {
  const cohort = cohorts.get(teamId, id)
  if (!cohort.is_static) throw new ValidationError('invalid', 'Can only remove users from static cohorts')
  const personId = isPlainObject(body) ? body.person_id : undefined
  if (!personId) throw new ValidationError('invalid', 'person_id is required')
  if (typeof personId !== 'string') throw new ValidationError('invalid', 'person_id must be a string')
  const uuid = canonical(personId)
  if (uuid === null) throw new ValidationError('invalid', 'person_id must be a valid UUID')
  const change = members.removePerson(teamId, id, uuid)
  if (change.found === 0) throw new AppError('not_found', { detail: "Person with this UUID does not exist in the cohort's team" })
  cohorts.setCount(teamId, id, change.count)
  cohorts.logMembers(teamId, id, 'person_removed_manually', actor)
}
