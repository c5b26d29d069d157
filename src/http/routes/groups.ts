/**
 * The groups API as PostHog's (scope `group:read`), read from persons.db and the event store:
 * GET groups/?group_type_index=N (the list: `group_key` containing it, `search` in the properties or the exact key),
 * GET groups_types/ (the project's group types),
 * GET groups/find/?group_type_index=&group_key= (one group, exactly by key),
 * GET groups/related/?group_type_index=&id= (the persons and groups that shared events with a group, or with a
 * person when there is no group_type_index, in the last 90 days),
 * GET groups/property_definitions/ (each type's property keys with how many groups carry them),
 * GET groups/property_values/?group_type_index=&key=&value= (a property's most common values).
 */
import { AppError, ValidationError } from '../../common/errors.js'
import type { GroupRecord, PersonReader } from '../../persons/index.js'
import { pageEnvelope, parsePage } from '../../common/pagination.js'
import { PAGE_QUERY, type OperationDoc } from '../../schemas/openapi.js'
import { freeFormObject } from '../../schemas/shared.js'
import type { EventFilter, EventStore } from '../../storage/events/index.js'
import { answer, projectRoute, type ApiContext, type ProjectApiRequest } from '../api.js'
import type { Router } from '../router.js'
import { fromStore } from './events.js'
import { personObject } from './person-object.js'

const PROJECT = '/api/projects/:project_id'
const param = (name: string, description: string, type = 'string') => ({ name, description, schema: { type } })
const INDEX_PARAM = param('group_type_index', 'The group type (0–4).', 'integer')

export const GROUP_OPERATIONS = [
  {
    operationId: 'groups_list',
    method: 'get',
    path: `${PROJECT}/groups/`,
    summary: 'Groups of one type, newest first, filtered by group_key (containing it) or search (properties containing it, or the exact key).',
    tag: 'groups',
    scope: 'group:read',
    query: [INDEX_PARAM, param('group_key', 'Part of the group key.'), param('search', 'Text in the properties, or the exact key.'), ...PAGE_QUERY],
    responses: { 200: 'PaginatedGroupList' },
  },
  {
    operationId: 'groups_types_list',
    method: 'get',
    path: `${PROJECT}/groups_types/`,
    summary: "The project's group types, by index.",
    tag: 'groups',
    scope: 'group:read',
    responses: { 200: 'GroupTypeList' },
  },
  {
    operationId: 'groups_find',
    method: 'get',
    path: `${PROJECT}/groups/find/`,
    summary: 'One group, by type and exact key.',
    tag: 'groups',
    scope: 'group:read',
    query: [INDEX_PARAM, param('group_key', 'The key of the group.')],
    responses: { 200: 'GroupFound' },
  },
  {
    operationId: 'groups_related',
    method: 'get',
    path: `${PROJECT}/groups/related/`,
    summary: 'The persons and groups that shared events with a group (or, without group_type_index, a person) in the last 90 days.',
    tag: 'groups',
    scope: 'group:read',
    query: [{ ...INDEX_PARAM, description: "The group's type; absent when `id` is a person's uuid." }, param('id', 'The group key or person uuid.')],
    responses: { 200: 'RelatedActors' },
  },
  {
    operationId: 'groups_property_definitions',
    method: 'get',
    path: `${PROJECT}/groups/property_definitions/`,
    summary: "Per group type, its groups' property keys with how many groups carry each.",
    tag: 'groups',
    scope: 'group:read',
    responses: { 200: 'GroupPropertyDefinitions' },
  },
  {
    operationId: 'groups_property_values',
    method: 'get',
    path: `${PROJECT}/groups/property_values/`,
    summary: "Up to 20 most common values of a property among a type's groups.",
    tag: 'groups',
    scope: 'group:read',
    query: [INDEX_PARAM, param('key', 'The property.'), param('value', 'Only values like `%value%`, in any case.')],
    responses: { 200: 'GroupPropertyValues' },
  },
] as const satisfies readonly OperationDoc[]

const NAME_COUNT = { type: 'object', properties: { name: { type: 'string' }, count: { type: 'integer' } } }

const GROUP = {
  type: 'object',
  properties: { group_type_index: { type: 'integer' }, group_key: { type: 'string' }, group_properties: freeFormObject, created_at: { type: 'string' } },
} as const

export const GROUP_COMPONENTS = {
  PaginatedGroupList: {
    type: 'object',
    properties: { count: { type: 'integer' }, next: { type: ['string', 'null'] }, previous: { type: ['string', 'null'] }, results: { type: 'array', items: GROUP } },
  },
  GroupTypeList: { type: 'array', items: freeFormObject },
  GroupFound: {
    type: 'object',
    properties: {
      group_type_index: { type: 'integer' },
      group_key: { type: 'string' },
      group_properties: freeFormObject,
      created_at: { type: 'string' },
      notebook: { type: ['string', 'null'] },
    },
  },
  RelatedActors: { type: 'array', items: freeFormObject },
  GroupPropertyDefinitions: { type: 'object', additionalProperties: { type: 'array', items: NAME_COUNT } },
  GroupPropertyValues: { type: 'object', properties: { results: { type: 'array', items: NAME_COUNT }, refreshing: { type: 'boolean' } } },
}

/** PostHog's window for related actors. */
const RELATED_DAYS = 90
const REQUIRED = 'This query parameter is required.'

function required(query: URLSearchParams, name: string): string {
  const value = query.get(name)
  if (!value) throw new ValidationError('invalid', REQUIRED, name)
  return value
}

const INTEGER = /^[-+]?\d{1,9}$/
const NOT_AN_INTEGER = 'A valid integer is required.'

/** A required group type index; not a number is 400 (PostHog answers 500 on find and property_values). */
function requiredIndex(query: URLSearchParams): number {
  const raw = required(query, 'group_type_index').trim()
  if (!INTEGER.test(raw)) throw new ValidationError('invalid', NOT_AN_INTEGER, 'group_type_index')
  return Number(raw)
}

const LIST_INDEX_REQUIRED =
  'You must pass ?group_type_index= in this URL. To get a list of valid group types, call /api/:project_id/groups_types/.'

/** The group list's index, missing with PostHog's own sentence for that route. */
function listIndex(query: URLSearchParams): number {
  const raw = query.get('group_type_index')?.trim() ?? ''
  if (raw === '') throw new ValidationError('invalid', LIST_INDEX_REQUIRED, 'group_type_index')
  if (!INTEGER.test(raw)) throw new ValidationError('invalid', NOT_AN_INTEGER, 'group_type_index')
  return Number(raw)
}

/** groups/related's optional index, read as PostHog's validate_group_type_index: an int from 0 to 4. */
function optionalIndex(query: URLSearchParams): number | null {
  const raw = query.get('group_type_index')
  if (raw === null) return null
  const index = /^\s*[-+]?\d{1,9}\s*$/.test(raw) ? Number(raw) : Number.NaN
  if (!(index >= 0 && index < 5)) throw new ValidationError('invalid', 'group_type_index is required to be at least 0 and less than 5')
  return index
}

/** A group as PostHog's actors are serialised (serialize_groups). */
function groupActor(group: GroupRecord) {
  return {
    id: group.group_key,
    type: 'group',
    group_type_index: group.group_type_index,
    group_key: group.group_key,
    created_at: group.created_at,
    matched_recordings: [],
    properties: group.group_properties,
    value_at_data_point: null,
  }
}

/** As PostHog's RelatedActorsQuery: the persons first (for a group), then each other type's groups. */
async function relatedActors(persons: PersonReader, events: EventStore, req: ProjectApiRequest): Promise<object[]> {
  const teamId = req.project.id
  const id = required(req.query, 'id')
  const index = optionalIndex(req.query)
  const now = Date.now()
  // PostHog's bounds are both strict; stored times are whole milliseconds.
  const filter: EventFilter = { teamId, after: now - RELATED_DAYS * 86_400_000 + 1, before: now }
  if (index === null) filter.distinctIds = persons.listing.distinctIdsOfPerson(teamId, id) ?? []
  else filter.group = { index, key: id }
  const { distinctIds, groupKeys } = await fromStore(events.actors(filter))
  const people = index === null ? [] : persons.groups.personsOf(teamId, distinctIds).map(personObject)
  const groups = persons
    .groupTypes(teamId)
    .filter((type) => type.group_type_index !== index)
    .flatMap((type) => persons.groups.byKeys(teamId, type.group_type_index, groupKeys[type.group_type_index] ?? []).map(groupActor))
  return [...people, ...groups]
}

export function registerGroupRoutes(router: Router, api: ApiContext, persons: PersonReader, events: EventStore | undefined, maxBodyBytes: number): void {
  const handlers = {
    groups_list: (req: ProjectApiRequest) => {
      const index = listIndex(req.query)
      const page = parsePage(req.query)
      const teamId = req.project.id
      const filter = { groupKey: req.query.get('group_key') || null, search: req.query.get('search') || null }
      const results = persons.listing.listGroups(teamId, index, page.limit, page.offset, filter)
      return pageEnvelope(req.baseUrl, req.ctx.path, req.query, page, persons.listing.countGroups(teamId, index, filter), results)
    },
    // skylark keeps neither dashboards nor column choices per group type, nor when a type was first seen.
    groups_types_list: (req: ProjectApiRequest) =>
      persons.groupTypes(req.project.id).map((type) => ({ ...type, detail_dashboard: null, default_columns: null, created_at: null })),
    groups_find: (req: ProjectApiRequest) => {
      const index = requiredIndex(req.query)
      const group = persons.groups.find(req.project.id, index, required(req.query, 'group_key'))
      if (!group) throw new AppError('not_found')
      // PostHog links a CRM notebook here; skylark has none.
      return { ...group, notebook: null }
    },
    groups_related: (req: ProjectApiRequest) => relatedActors(persons, events!, req),
    groups_property_definitions: (req: ProjectApiRequest) => persons.groups.propertyDefinitions(req.project.id),
    groups_property_values: (req: ProjectApiRequest) => {
      const index = requiredIndex(req.query)
      const results = persons.groups.propertyValues(req.project.id, index, required(req.query, 'key'), req.query.get('value') || null)
      return answer(200, { results, refreshing: false })
    },
  }
  for (const op of GROUP_OPERATIONS) {
    // Related actors are found through shared events.
    if (op.operationId === 'groups_related' && !events) continue
    router.add(op.method, op.path, projectRoute(api, { scope: op.scope }, handlers[op.operationId]), { maxBodyBytes })
  }
}
