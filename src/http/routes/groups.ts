/**
 * The groups API as PostHog's, read (scope `group:read`) from persons.db and the event store:
 * GET groups/?group_type_index=N (the list: `group_key` containing it, `search` in the properties or the exact key),
 * GET groups_types/ (the project's group types),
 * GET groups/find/?group_type_index=&group_key= (one group, exactly by key),
 * GET groups/related/?group_type_index=&id= (the persons and groups that shared events with a group, or with a
 * person when there is no group_type_index, in the last 90 days),
 * GET groups/property_definitions/ (each type's property keys with how many groups carry them),
 * GET groups/property_values/?group_type_index=&key=&value= (a property's most common values).
 * The writes (scope `group:write`: POST groups/, groups/update_property/, groups/delete_property/) go through
 * ingestion, never straight to persons.db (group-writes.ts).
 */
import { AppError, ValidationError } from '../../common/errors.js'
import type { GroupRecord, PersonReader } from '../../persons/index.js'
import { pageEnvelope, parsePage } from '../../common/pagination.js'
import { PAGE_QUERY, type OperationDoc } from '../../schemas/openapi.js'
import { freeFormObject } from '../../schemas/shared.js'
import type { EventFilter, EventStore } from '../../storage/events/index.js'
import type { IngestionService } from '../../ingestion/index.js'
import { answer, projectRoute, type ApiContext, type ProjectApiRequest } from '../api.js'
import type { Router } from '../router.js'
import { fromStore } from './events.js'
import { groupWriteHandlers } from './group-writes.js'
import { listIndex, optionalIndex, required, requiredIndex } from './group-params.js'
import { personObject } from './person-object.js'

const PROJECT = '/api/projects/:project_id'
const param = (name: string, description: string, type = 'string') => ({ name, description, schema: { type } })
const INDEX_PARAM = param('group_type_index', 'The group type (0–4).', 'integer')
const GROUP_QUERY = [INDEX_PARAM, param('group_key', 'The key of the group.')]

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
    query: GROUP_QUERY,
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
  {
    operationId: 'groups_create',
    method: 'post',
    path: `${PROJECT}/groups/`,
    summary: 'Create a group of an existing type (400 when the key exists). Written through ingestion, as a $groupidentify event; 201 once durable.',
    tag: 'groups',
    scope: 'group:write',
    requestBody: 'GroupCreate',
    responses: { 201: 'Group' },
  },
  {
    operationId: 'groups_update_property',
    method: 'post',
    path: `${PROJECT}/groups/update_property/`,
    summary: "Set one property of a group (a $groupidentify event with $group_set); answers the group as it becomes.",
    tag: 'groups',
    scope: 'group:write',
    query: GROUP_QUERY,
    requestBody: 'GroupPropertyUpdate',
    responses: { 200: 'Group' },
  },
  {
    operationId: 'groups_delete_property',
    method: 'post',
    path: `${PROJECT}/groups/delete_property/`,
    summary: 'Remove one property of a group (a $delete_group_property event with $group_unset); answers the group as it becomes.',
    tag: 'groups',
    scope: 'group:write',
    query: GROUP_QUERY,
    requestBody: 'GroupPropertyDelete',
    responses: { 200: 'Group' },
  },
] as const satisfies readonly OperationDoc[]

const NAME_COUNT = { type: 'object', properties: { name: { type: 'string' }, count: { type: 'integer' } } }

const GROUP = {
  type: 'object',
  properties: { group_type_index: { type: 'integer' }, group_key: { type: 'string' }, group_properties: freeFormObject, created_at: { type: 'string' } },
} as const

export const GROUP_COMPONENTS = {
  Group: GROUP,
  GroupCreate: {
    type: 'object',
    properties: { group_type_index: { type: 'integer' }, group_key: { type: 'string', maxLength: 400 }, group_properties: { type: ['object', 'null'], additionalProperties: true } },
    required: ['group_type_index', 'group_key'],
  },
  GroupPropertyUpdate: { type: 'object', properties: { key: { type: 'string' }, value: {} }, required: ['key', 'value'] },
  GroupPropertyDelete: { type: 'object', properties: { $unset: { type: 'string' } }, required: ['$unset'] },
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
  const people = index === null ? [] : (await persons.scans.groups.personsOf(teamId, distinctIds)).map(personObject)
  const groups = persons
    .groupTypes(teamId)
    .filter((type) => type.group_type_index !== index)
    .flatMap((type) => persons.groups.byKeys(teamId, type.group_type_index, groupKeys[type.group_type_index] ?? []).map(groupActor))
  return [...people, ...groups]
}

/** `ingestion` null (tests without capture): the groups API reads only. */
export function registerGroupRoutes(
  router: Router,
  api: ApiContext,
  persons: PersonReader,
  events: EventStore | undefined,
  ingestion: IngestionService | null,
  maxBodyBytes: number,
): void {
  const writes = ingestion ? groupWriteHandlers(persons, ingestion) : null
  const handlers = {
    groups_list: async (req: ProjectApiRequest) => {
      const index = listIndex(req.query)
      const page = parsePage(req.query)
      const teamId = req.project.id
      const filter = { groupKey: req.query.get('group_key') || null, search: req.query.get('search') || null }
      const [results, count] = await Promise.all([persons.scans.listing.listGroups(teamId, index, page.limit, page.offset, filter), persons.scans.listing.countGroups(teamId, index, filter)])
      return pageEnvelope(req.baseUrl, req.ctx.path, req.query, page, count, results)
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
    groups_property_definitions: (req: ProjectApiRequest) => persons.scans.groups.propertyDefinitions(req.project.id),
    groups_property_values: async (req: ProjectApiRequest) => {
      const index = requiredIndex(req.query)
      const results = await persons.scans.groups.propertyValues(req.project.id, index, required(req.query, 'key'), req.query.get('value') || null)
      return answer(200, { results, refreshing: false })
    },
    ...writes,
  }
  for (const op of GROUP_OPERATIONS) {
    const handler = handlers[op.operationId as keyof typeof handlers]
    // Related actors are found through shared events.
    if (!handler || (op.operationId === 'groups_related' && !events)) continue
    router.add(op.method, op.path, projectRoute(api, { scope: op.scope }, handler), { maxBodyBytes })
  }
}
