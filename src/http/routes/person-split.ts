/**
 * POST persons/:id/split/, as PostHog's PersonViewSet.split (posthog/api/person.py): `{main_distinct_id}` keeps
 * that distinct id on the person and moves every other one onto a new person of its own; `{distinct_ids_to_split}`
 * moves only those. The person keeps its properties. PostHog queues a task and answers 201 `{"success": true}`;
 * skylark spools a control record (ingestion/control.ts) that the consumer applies in order with the events, and
 * answers the same once it is durable: an event sent after the answer lands on the new person.
 */
import { ValidationError } from '../../common/errors.js'
import { pyRepr } from '../../common/python-format.js'
import type { IngestionService } from '../../ingestion/index.js'
import { originDistinctId, type PersonReader } from '../../persons/index.js'
import { answer, type ProjectApiRequest } from '../api.js'
import { personObject, personOf } from './person-object.js'

/** `distinct_ids_to_split` checked as PostHog checks it; null when not given. */
function idsToSplit(value: unknown, main: string | null, owned: readonly string[]): string[] | null {
  if (value === undefined || value === null) return null
  const attr = 'distinct_ids_to_split'
  if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) throw new ValidationError('invalid', 'must be a list of strings', attr)
  if (value.length === 0) throw new ValidationError('invalid', 'must not be empty', attr)
  if (main !== null) throw new ValidationError('invalid_input', 'main_distinct_id cannot be combined with distinct_ids_to_split')
  const unknown = [...new Set(value.filter((id) => !owned.includes(id)))].sort()
  if (unknown.length > 0) throw new ValidationError('invalid', `not on this person: ${pyRepr(unknown)}`, attr)
  return value
}

export function personSplitHandler(persons: PersonReader, ingestion: IngestionService) {
  return async (req: ProjectApiRequest) => {
    const person = personOf(persons, req)
    const b = req.body
    if (b === null || typeof b !== 'object' || Array.isArray(b)) throw new ValidationError('parse_error', 'The body must be a JSON object.')
    const given = (b as Record<string, unknown>).main_distinct_id
    if (given !== undefined && given !== null && typeof given !== 'string') throw new ValidationError('invalid', 'Not a valid string.', 'main_distinct_id')
    // PostHog reads an empty main_distinct_id as none given.
    const main = typeof given === 'string' && given !== '' ? given : null
    const only = idsToSplit((b as Record<string, unknown>).distinct_ids_to_split, main, person.distinct_ids)
    // PostHog splits every id off when main is not one of the person's, leaving it none: refused here instead.
    if (main !== null && !person.distinct_ids.includes(main)) throw new ValidationError('invalid', `not on this person: ${pyRepr(main)}`, 'main_distinct_id')
    // Unnamed, PostHog keeps the person's oldest distinct id: the one its uuid derives from, else the one listed first.
    const keep = only !== null ? null : (main ?? originDistinctId(req.project.id, person.uuid, person.distinct_ids) ?? personObject(person).distinct_ids[0] ?? null)
    await ingestion.splitPerson(req.project.id, { uuid: person.uuid, mainDistinctId: keep, distinctIdsToSplit: only })
    return answer(201, { success: true })
  }
}
