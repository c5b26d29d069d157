/**
 * Filling static cohorts through the API, as PostHog's cohort viewset does: person UUIDs on create
 * (`_create_static_person_ids`), an uploaded CSV on create or update, `add_persons_to_static_cohort` and
 * `remove_person_from_static_cohort`.
 * Members live in persons.db, which management may not import: the HTTP layer hands in the writer
 * (src/persons' StaticCohortWriter). After each write the cohort's `count` is what the writer reports.
 */
import { AppError, ValidationError } from '../../common/errors.js'
import { parseCsv } from '../../common/csv.js'
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

/** What an uploaded list of persons names them by. */
export type ListedId = 'distinct_id' | 'person_id' | 'email'

export interface StaticCohortMembers {
  addPersons(teamId: number, cohortId: number, uuids: readonly string[]): MembersChange
  /** Adds the project's persons a list names (by distinct id or `email` property); unknown names skipped. */
  addListed(teamId: number, cohortId: number, ids: readonly string[], kind: Exclude<ListedId, 'person_id'>): MembersChange
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

/** PostHog's CSVConfig: the headers that name an id column, and its refusals (each a 400 on `csv`). */
const HEADERS: ReadonlyArray<readonly [ListedId, readonly string[]]> = [
  ['person_id', ['person_id', 'person-id', 'person .id']],
  ['distinct_id', ['distinct_id', 'distinct-id']],
  ['email', ['email', 'e-mail']],
]
const csvError = (detail: string) => new ValidationError('invalid', detail, 'csv')
const EMPTY_FILE = 'CSV file is empty. Please upload a CSV file with at least one row of data.'
const NO_VALID_IDS = 'CSV file contains no valid person IDs, distinct IDs, or email addresses. Please ensure your file has data rows with person IDs, distinct IDs, or email addresses.'
const ENCODING_ERROR = 'CSV file encoding is not supported. Please save your file as UTF-8 and try again.'
const missingIdColumn = (columns: string) =>
  `Multi-column CSV must contain at least one column with a supported ID header: 'person_id', 'Person .id' (PostHog export format), 'distinct_id', 'distinct-id', or 'email'. Found columns: ${columns}`

/** The kind of id a header names, if any (case and surrounding spaces ignored). */
const headerKind = (header: string, kinds: readonly ListedId[]): ListedId | undefined =>
  HEADERS.find(([kind, names]) => kinds.includes(kind) && names.includes(header.trim().toLowerCase()))?.[0]

/**
 * The persons an uploaded CSV names, as PostHog's `_calculate_static_by_csv` reads it: one column is distinct ids,
 * unless its header says person ids or emails; with more columns, the first column whose header names person
 * ids, else distinct ids, else emails (rows too short for it skipped). Blank ids are left out.
 */
export function csvMembers(file: Uint8Array): { ids: string[]; kind: ListedId } {
  let text: string
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(file)
  } catch {
    throw csvError(ENCODING_ERROR)
  }
  const rows = parseCsv(text)
  const first = rows.findIndex((row) => row.length > 0)
  if (first < 0) throw csvError(EMPTY_FILE)
  const header = rows[first]!
  const rest = rows.slice(first + 1)
  const column = (rows: string[][], at: number) => rows.flatMap((row) => (row.length > at && row[at]!.trim() !== '' ? [row[at]!.trim()] : []))
  let found: { ids: string[]; kind: ListedId }
  if (header.filter((cell) => cell.trim() !== '').length <= 1) {
    const kind = headerKind(header[0]!, ['person_id', 'email'])
    found = kind ? { ids: column(rest, 0), kind } : { ids: column([header, ...rest], 0), kind: 'distinct_id' }
  } else {
    const kind = (['person_id', 'distinct_id', 'email'] as const).find((k) => header.some((cell) => headerKind(cell, [k])))
    if (kind === undefined) throw csvError(missingIdColumn(header.filter((cell) => cell.trim() !== '').join(', ') || 'none'))
    found = { ids: column(rest, header.findIndex((cell) => headerKind(cell, [kind]))), kind }
  }
  if (found.ids.length === 0) throw csvError(NO_VALID_IDS)
  return found
}

/** Adds the persons a CSV names (csvMembers, read first) to a static cohort, and counts it again. */
export function addCsvMembers(cohorts: Cohorts, members: StaticCohortMembers, teamId: number, id: number, listed: { ids: string[]; kind: ListedId }): CohortObject {
  const { kind, ids } = listed
  // Person ids are UUIDs: anything else names no person, as in add_persons_to_static_cohort.
  const change = kind === 'person_id' ? members.addPersons(teamId, id, uuidsOf(ids)) : members.addListed(teamId, id, ids, kind)
  cohorts.setCount(teamId, id, change.count)
  return cohorts.get(teamId, id)
}
