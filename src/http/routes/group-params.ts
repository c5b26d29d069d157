/** The groups API's query parameters, read as PostHog's GroupsViewSet reads them, with its sentences. */
import { ValidationError } from '../../common/errors.js'
import { MAX_GROUP_TYPES_PER_TEAM } from '../../persons/index.js'

const REQUIRED = 'This query parameter is required.'

export function required(query: URLSearchParams, name: string): string {
  const value = query.get(name)
  if (!value) throw new ValidationError('invalid', REQUIRED, name)
  return value
}

const INTEGER = /^[-+]?\d{1,9}$/
const NOT_AN_INTEGER = 'A valid integer is required.'

/** A required group type index; not a number is 400 (PostHog answers 500 on find and property_values). */
export function requiredIndex(query: URLSearchParams): number {
  const raw = required(query, 'group_type_index').trim()
  if (!INTEGER.test(raw)) throw new ValidationError('invalid', NOT_AN_INTEGER, 'group_type_index')
  return Number(raw)
}

const LIST_INDEX_REQUIRED =
  'You must pass ?group_type_index= in this URL. To get a list of valid group types, call /api/:project_id/groups_types/.'

/** The group list's index, missing with PostHog's own sentence for that route. */
export function listIndex(query: URLSearchParams): number {
  const raw = query.get('group_type_index')?.trim() ?? ''
  if (raw === '') throw new ValidationError('invalid', LIST_INDEX_REQUIRED, 'group_type_index')
  if (!INTEGER.test(raw)) throw new ValidationError('invalid', NOT_AN_INTEGER, 'group_type_index')
  return Number(raw)
}

/** groups/related's optional index, read as PostHog's validate_group_type_index: an int from 0 to 4. */
export function optionalIndex(query: URLSearchParams): number | null {
  const raw = query.get('group_type_index')
  if (raw === null) return null
  const index = /^\s*[-+]?\d{1,9}\s*$/.test(raw) ? Number(raw) : Number.NaN
  if (!(index >= 0 && index < MAX_GROUP_TYPES_PER_TEAM)) throw new ValidationError('invalid', 'group_type_index is required to be at least 0 and less than 5')
  return index
}
