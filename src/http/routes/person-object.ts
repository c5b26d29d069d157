/** A person as the persons API answers it (list items and retrieve), and the person a path's `:id` names. */
import { AppError, ValidationError } from '../../common/errors.js'
import { notAPersonIdDetail, parsePersonId, type PersonReader, type PersonWithDistinctIds } from '../../persons/index.js'
import type { ProjectApiRequest } from '../api.js'

/** PostHog's default display-name properties, first set one wins. */
const NAME_PROPERTIES = ['email', 'Email', '$email', 'name', 'Name', 'username', 'Username', 'UserName']

/** PostHog's is_anonymous_id: five lowercase alphanumeric runs joined by dashes, as generated ids (UUIDs) are. */
const ANONYMOUS_ID = /^([a-z0-9]+-){4}[a-z0-9]+$/

/** The distinct ids as PostHog lists them: those that look chosen (not generated) first, else in stored order. */
function distinctIdsInOrder(ids: readonly string[]): string[] {
  return [...ids.filter((id) => !ANONYMOUS_ID.test(id)), ...ids.filter((id) => ANONYMOUS_ID.test(id))]
}

/** PostHog's display name: a display-name property, else the first distinct id in that order, else the uuid. */
function displayName(person: PersonWithDistinctIds, distinctIds: readonly string[]): string {
  for (const key of NAME_PROPERTIES) {
    const value = person.properties[key]
    if (typeof value === 'string' && value !== '') return value
  }
  return distinctIds[0] ?? person.uuid
}

/**
 * A person as PostHog's persons list answers it (an actor). skylark does not track when a person was last
 * seen, and has no recordings or insight data points, so those fields are null or empty.
 */
export function personObject(person: PersonWithDistinctIds) {
  const distinctIds = distinctIdsInOrder(person.distinct_ids)
  return {
    type: 'person',
    id: person.uuid,
    uuid: person.uuid,
    name: displayName(person, distinctIds),
    distinct_ids: distinctIds,
    properties: person.properties,
    is_identified: person.is_identified,
    created_at: person.created_at,
    last_seen_at: null,
    matched_recordings: [],
    value_at_data_point: null,
  }
}

/** The project's person named by the path's `:id` (PostHog's get_pk_or_uuid): 404 when none, 400 when no id at all. */
export function personOf(persons: PersonReader, req: ProjectApiRequest): PersonWithDistinctIds {
  const ref = parsePersonId(req.params.id)
  if (ref.kind === 'invalid') throw new ValidationError('invalid_input', notAPersonIdDetail(req.params.id))
  const person = ref.kind === 'uuid' ? persons.listing.personByUuid(req.project.id, ref.uuid) : null
  if (!person) throw new AppError('not_found')
  return person
}
