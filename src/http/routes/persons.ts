/**
 * Persons API, read from persons.db, filtered as PostHog's:
 * GET /api/projects/:project_id/persons/ (`person:read`; `distinct_id` (that id's person), `email` (exact),
 * `search` (email containing it, or an exact distinct id or uuid), `properties` (person property, HogQL and
 * cohort filters)),
 * GET, PUT, PATCH and DELETE persons/:id/, POST persons/bulk_delete/, persons/:id/update_property/ and
 * persons/:id/delete_property/ (person-writes.ts) and persons/:id/split/ (person-split.ts) as PostHog's
 * PersonViewSet: writes go through ingestion, never straight to persons.db, whose one writer is the consumer
 * thread.
 * The groups API is in groups.ts.
 */
import { pageEnvelope } from '../../common/pagination.js'
import type { IngestionService } from '../../ingestion/index.js'
import { cohortMembership, evaluatedCohortsNamed, performedReader, storesCanRun, type PerformedReader } from '../../management/index.js'
import type { PersonReader } from '../../persons/index.js'
import { CSV_QUERY, PAGE_QUERY, type OperationDoc } from '../../schemas/openapi.js'
import { hogqlFields, hogqlFilter, type EventStore, type PropertyNode } from '../../storage/events/index.js'
import { projectRoute, type ApiContext, type ProjectApiRequest } from '../api.js'
import { csvAnswer, csvHeaders, listRead } from '../csv.js'
import type { Router } from '../router.js'
import { personObject, personOf } from './person-object.js'
import { personSplitHandler } from './person-split.js'
import { personWriteHandlers } from './person-writes.js'
import { asIs, propertiesJson, readPropertyFilters, refuseHogql, type FilterKinds } from './property-filters.js'

const PROJECT = '/api/projects/:project_id'
const FREE_FORM = { type: 'object', additionalProperties: true } as const

export const PERSON_OPERATIONS = [
  { operationId: 'persons_list', method: 'get', path: `${PROJECT}/persons/`, summary: 'Persons, newest first, filtered by distinct_id, email, search or person properties.', tag: 'persons', scope: 'person:read', query: [...PAGE_QUERY, ...CSV_QUERY], responses: { 200: 'PaginatedPersonList' } },
  { operationId: 'persons_retrieve', method: 'get', path: `${PROJECT}/persons/:id/`, summary: 'One person, by its uuid.', tag: 'persons', scope: 'person:read', responses: { 200: 'Person' } },
  { operationId: 'persons_update', method: 'put', path: `${PROJECT}/persons/:id/`, summary: 'Set the person properties given (captured as a $set event; the others stay as they are).', tag: 'persons', scope: 'person:write', requestBody: 'PersonPropertiesUpdate', responses: { 202: null } },
  { operationId: 'persons_partial_update', method: 'patch', path: `${PROJECT}/persons/:id/`, summary: 'The same as PUT: set the person properties given (a $set event).', tag: 'persons', scope: 'person:write', requestBody: 'PersonPropertiesUpdate', responses: { 202: null } },
  { operationId: 'persons_destroy', method: 'delete', path: `${PROJECT}/persons/:id/`, summary: 'Delete the person (its distinct ids, cohort memberships and flag overrides); with ?delete_events=true its events too. Done in order with ingestion; 202 once durable.', tag: 'persons', scope: 'person:write', query: [{ name: 'delete_events', description: 'Also delete the events of its distinct ids.', schema: { type: 'boolean' } }], responses: { 202: null } },
  { operationId: 'persons_bulk_delete', method: 'post', path: `${PROJECT}/persons/bulk_delete/`, summary: 'Delete up to 1000 persons by distinct_ids, else by ids (uuids).', tag: 'persons', scope: 'person:write', requestBody: 'PersonBulkDelete', responses: { 202: null } },
  { operationId: 'persons_update_property', method: 'post', path: `${PROJECT}/persons/:id/update_property/`, summary: 'Set one person property (captured as a $set event).', tag: 'persons', scope: 'person:write', requestBody: 'PersonPropertyUpdate', responses: { 202: null } },
  { operationId: 'persons_split', method: 'post', path: `${PROJECT}/persons/:id/split/`, summary: "Split a person merged by mistake: every distinct id but main_distinct_id (by default the person's oldest), or only distinct_ids_to_split, becomes a new person without properties; the person keeps its properties. Done in order with ingestion; 201 once durable.", tag: 'persons', scope: 'person:write', requestBody: 'PersonSplit', responses: { 201: 'Success' } },
  { operationId: 'persons_delete_property', method: 'post', path: `${PROJECT}/persons/:id/delete_property/`, summary: 'Remove one person property (captured as a $delete_person_property event with $unset).', tag: 'persons', scope: 'person:write', requestBody: 'PersonPropertyDelete', responses: { 201: 'Success' } },
] as const satisfies readonly OperationDoc[]

const PERSON = {
  type: 'object',
  properties: {
    type: { type: 'string' },
    id: { type: 'string', format: 'uuid' },
    uuid: { type: 'string', format: 'uuid' },
    name: { type: 'string' },
    distinct_ids: { type: 'array', items: { type: 'string' } },
    properties: FREE_FORM,
    is_identified: { type: 'boolean' },
    created_at: { type: 'string', format: 'date-time' },
    last_seen_at: { type: ['string', 'null'] },
    matched_recordings: { type: 'array', items: FREE_FORM },
    value_at_data_point: { type: ['number', 'null'] },
  },
} as const

export const PERSON_COMPONENTS = {
  Person: PERSON,
  PaginatedPersonList: {
    type: 'object',
    properties: { count: { type: 'integer' }, next: { type: ['string', 'null'] }, previous: { type: ['string', 'null'] }, results: { type: 'array', items: PERSON } },
  },
  PersonBulkDelete: {
    type: 'object',
    properties: {
      distinct_ids: { type: 'array', items: { type: 'string' }, maxItems: 1000 },
      ids: { type: 'array', items: { type: 'string', format: 'uuid' }, maxItems: 1000 },
      delete_events: { type: 'boolean' },
    },
  },
  PersonPropertiesUpdate: { type: 'object', properties: { properties: FREE_FORM }, required: ['properties'] },
  PersonPropertyUpdate: { type: 'object', properties: { key: { type: 'string' }, value: {} }, required: ['key', 'value'] },
  PersonSplit: {
    type: 'object',
    properties: { main_distinct_id: { type: ['string', 'null'] }, distinct_ids_to_split: { type: ['array', 'null'], items: { type: 'string' }, minItems: 1 } },
  },
  PersonPropertyDelete: { type: 'object', properties: { $unset: { type: 'string' } }, required: ['$unset'] },
}

/**
 * Person property filters, on the persons listed (the regex operators too, for patterns every store runs);
 * HogQL ones too, where `properties.<key>` is the person's (as in PostHog's persons query), and so is
 * `person.properties.<key>`. The events' fields (`event`, `distinct_id`) are no person's.
 */
const PERSON_PROPERTY_FILTERS: FilterKinds = {
  byDefault: 'person',
  kinds: new Map([
    ['person', asIs],
    [
      'hogql',
      (filter) => {
        const refuse = (detail: string) => refuseHogql(filter, detail)
        const condition = hogqlFilter(filter, refuse, storesCanRun)
        return hogqlFields(condition.hogql).length > 0 ? refuse('The persons list reads properties, not the fields of events (event, distinct_id).') : condition
      },
    ],
  ]),
  regex: storesCanRun,
}

/**
 * A persons list's `properties`: PERSON_PROPERTY_FILTERS, and cohort filters as the persons of the project's cohort
 * they name, each dynamic one evaluated first with its behavioural conditions read by `performed` (none: refused).
 */
export async function personFilters(api: ApiContext, teamId: number, raw: string | null, performed: PerformedReader | null): Promise<PropertyNode[] | undefined> {
  const cohortById = (team: number, id: number) => api.management.cohorts.record(team, id)
  const tree = propertiesJson(raw)
  const evaluated = await evaluatedCohortsNamed(tree, cohortById, teamId, performed, Date.now())
  return readPropertyFilters(tree, { ...PERSON_PROPERTY_FILTERS, cohort: (leaf) => cohortMembership(leaf, cohortById, teamId, 'properties', evaluated) })
}

/** `ingestion` null (tests without capture): the persons API reads only. `events` reads cohort filters' behavioural conditions. */
export function registerPersonRoutes(router: Router, api: ApiContext, persons: PersonReader, ingestion: IngestionService | null, events: EventStore | null, maxBodyBytes: number): void {
  const options = { maxBodyBytes }
  const performed = events && performedReader(events, api.management.actions)
  const writes = ingestion ? personWriteHandlers(persons, ingestion) : null
  const handlers = {
    persons_list: async (req: ProjectApiRequest) => {
      const q = req.query
      const { csv, page } = listRead(req)
      const filter = {
        distinctId: q.get('distinct_id') || null,
        email: q.get('email') || null,
        search: q.get('search') || null,
        properties: await personFilters(api, req.project.id, q.get('properties'), performed),
      }
      const teamId = req.project.id
      const listed = persons.scans.listing.listPersons(teamId, { ...filter, ...page })
      // A CSV page has no count, as PostHog's renderer drops it.
      if (csv) return csvAnswer((await listed).map(personObject))
      const [rows, count] = await Promise.all([listed, persons.scans.listing.countPersons(teamId, filter)])
      return pageEnvelope(req.baseUrl, req.ctx.path, q, page, count, rows.map(personObject))
    },
    persons_retrieve: (req: ProjectApiRequest) => personObject(personOf(persons, req)),
    ...writes,
    ...(ingestion ? { persons_split: personSplitHandler(persons, ingestion) } : null),
  }
  for (const op of PERSON_OPERATIONS) {
    const handler = handlers[op.operationId as keyof typeof handlers]
    if (handler) router.add(op.method, op.path, projectRoute(api, { scope: op.scope }, handler), { ...options, readsHeaders: csvHeaders(op) })
  }
}
