/**
 * The persons API's writes, as PostHog's PersonViewSet (posthog/api/person.py). None touches persons.db: its
 * one writer is the ingest consumer thread, and each write goes through the spool so the consumer applies it
 * in order with the person's events, durable once answered.
 * - DELETE persons/:id/ and POST persons/bulk_delete/ spool a person deletion (ingestion/control.ts); 202.
 * - PUT and PATCH persons/:id/ `{properties}` capture `$set` with those properties for the person's first distinct
 *   id (202): keys not given stay, on PUT too, as PostHog's update does.
 * - POST persons/:id/update_property/ captures `$set` with `{$set: {key: value}}` for the person's first
 *   distinct id (202), persons/:id/delete_property/ captures `$delete_person_property` with `{$unset: [key]}`
 *   (201 `{"success": true}`), as PostHog's capture_internal does.
 * PostHog's own 400 bodies there (update_property's with code and detail swapped, delete_property's
 * `{"success": false}`) are the contract's envelope here.
 */
import { ValidationError } from '../../common/errors.js'
import type { IngestionService } from '../../ingestion/index.js'
import { parsePersonId, type PersonReader } from '../../persons/index.js'
import { answer, type ProjectApiRequest } from '../api.js'
import { personObject, personOf } from './person-object.js'

/** PostHog's bulk_delete limit per call, for `ids` and for `distinct_ids`. */
const BULK_MAX = 1000

/** Python's truthiness of a JSON value (`if request.data.get("delete_events")`). */
function truthy(value: unknown): boolean {
  if (Array.isArray(value)) return value.length > 0
  if (value !== null && typeof value === 'object') return Object.keys(value).length > 0
  return Boolean(value)
}

/**
 * `?delete_events`: PostHog tests only that the parameter is there, so `?delete_events=false` deletes events
 * too; skylark reads false, 0, no and off as no, since what it deletes can't come back.
 */
function deleteEventsParam(query: URLSearchParams): boolean {
  const value = query.get('delete_events')
  return value !== null && !/^(false|0|no|off)$/i.test(value.trim())
}

function body(req: ProjectApiRequest): Record<string, unknown> {
  const b = req.body
  if (b === null || typeof b !== 'object' || Array.isArray(b)) throw new ValidationError('parse_error', 'The body must be a JSON object.')
  return b as Record<string, unknown>
}

function idList(value: unknown, attr: 'ids' | 'distinct_ids'): string[] {
  if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) throw new ValidationError('not_a_list', 'Expected a list of strings.', attr)
  if (value.length > BULK_MAX) throw new ValidationError('invalid_input', `You can only pass ${BULK_MAX} ${attr} in one call`, attr)
  return value
}

export function personWriteHandlers(persons: PersonReader, ingestion: IngestionService) {
  /** The distinct id PostHog captures for: its first (skylark keeps no order of addition; the listed first). */
  const firstDistinctId = (req: ProjectApiRequest): string | null => personObject(personOf(persons, req)).distinct_ids[0] ?? null
  /**
   * PUT and PATCH: `properties` are required (before the person is looked up, as PostHog checks), then captured
   * as they are, as PostHog's `$set` (a value that is not an object changes nothing, as from a client).
   */
  const setProperties = async (req: ProjectApiRequest) => {
    const properties = body(req).properties
    if (properties === undefined || properties === null) throw new ValidationError('required', 'This field is required.', 'properties')
    const distinctId = firstDistinctId(req)
    if (distinctId !== null) await ingestion.captureInternal(req.project.id, distinctId, '$set', { $set: properties })
    return answer(202)
  }
  return {
    persons_destroy: async (req: ProjectApiRequest) => {
      const person = personOf(persons, req)
      await ingestion.deletePersons(req.project.id, { uuids: [person.uuid], distinctIds: person.distinct_ids, deleteEvents: deleteEventsParam(req.query) })
      return answer(202)
    },
    persons_bulk_delete: async (req: ProjectApiRequest) => {
      const b = body(req)
      let uuids: string[] = []
      let distinctIds: string[] = []
      // As PostHog: distinct_ids when given (non-empty), else ids; never both.
      if (truthy(b.distinct_ids)) distinctIds = idList(b.distinct_ids, 'distinct_ids')
      else if (truthy(b.ids)) {
        uuids = idList(b.ids, 'ids').flatMap((id) => {
          const ref = parsePersonId(id)
          return ref.kind === 'uuid' ? [ref.uuid] : []
        })
      } else throw new ValidationError('invalid_input', 'You need to specify either distinct_ids or ids')
      await ingestion.deletePersons(req.project.id, { uuids, distinctIds, deleteEvents: truthy(b.delete_events) })
      return answer(202)
    },
    persons_update: (req: ProjectApiRequest) => setProperties(req),
    persons_partial_update: (req: ProjectApiRequest) => setProperties(req),
    persons_update_property: async (req: ProjectApiRequest) => {
      const b = body(req)
      // PostHog's newest check is for the key's presence: `{"value": null}` sets the property to null.
      if (!Object.hasOwn(b, 'value')) throw new ValidationError('required', 'This field is required.', 'value')
      if (b.key === undefined || b.key === null) throw new ValidationError('required', 'This field is required.', 'key')
      if (typeof b.key !== 'string') throw new ValidationError('invalid', 'Not a valid string.', 'key')
      const distinctId = firstDistinctId(req)
      if (distinctId !== null) await ingestion.captureInternal(req.project.id, distinctId, '$set', { $set: { [b.key]: b.value } })
      return answer(202)
    },
    persons_delete_property: async (req: ProjectApiRequest) => {
      const b = body(req)
      const key = b.$unset
      if (key === undefined || key === null) throw new ValidationError('required', 'This field is required.', '$unset')
      if (typeof key !== 'string') throw new ValidationError('invalid', 'Not a valid string.', '$unset')
      const distinctId = firstDistinctId(req)
      if (distinctId !== null) await ingestion.captureInternal(req.project.id, distinctId, '$delete_person_property', { $unset: [key] })
      return answer(201, { success: true })
    },
  }
}
