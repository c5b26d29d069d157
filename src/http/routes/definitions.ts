/**
 * What a project has captured, as PostHog's taxonomy API answers it (posthog/api/event_definition.py,
 * posthog/taxonomy/property_definition_api.py): the event names, and the event, person and group property
 * keys with their inferred types, recorded by the consumer as events are stored (src/persons/definitions.ts).
 * PostHog's MCP server and scripts list them before building queries. Read only: descriptions, tags,
 * verification and hiding are PostHog Enterprise features, so `tags` is always empty and nothing is hidden.
 */
import { AppError, ValidationError } from '../../common/errors.js'
import { normaliseUuid } from '../../common/ids.js'
import { pageEnvelope, parsePage } from '../../common/pagination.js'
import {
  MAX_GROUP_TYPES_PER_TEAM,
  type EventDefinitionFilter,
  type EventDefinitionRecord,
  type EventOrderField,
  type PersonReader,
  type PropertyDefinitionFilter,
  type PropertyDefinitionRecord,
} from '../../persons/index.js'
import { PAGE_QUERY, type OperationDoc } from '../../schemas/openapi.js'
import { nullable, paginated } from '../../schemas/shared.js'
import { projectRoute, type ApiContext, type ProjectApiRequest } from '../api.js'
import type { Router } from '../router.js'

const PROJECT = '/api/projects/:project_id'
const param = (name: string, description: string, type = 'string') => ({ name, description, schema: { type } })

export const DEFINITION_OPERATIONS = [
  {
    operationId: 'event_definitions_list',
    method: 'get',
    path: `${PROJECT}/event_definitions/`,
    summary: "The project's event names, by the day last seen (newest first), then by name.",
    tag: 'event_definitions',
    scope: 'event_definition:read',
    query: [
      ...PAGE_QUERY,
      param('search', 'Names containing every space-separated term, in any case.'),
      param('event_type', '`event` (all, the default), `event_custom` (names without `$`) or `event_posthog` (names with `$`).'),
      param('names', 'Exactly these names, repeated or comma-separated.'),
      param('excluded_properties', 'A JSON list of names to leave out.'),
      param('exclude_stale', '`true`: leave out names not seen in 30 days.', 'boolean'),
      param('ordering', 'Fields to sort by (`name`, `last_seen_at`, `last_seen_at::date`, `created_at`, `created_at::date`), `-` for descending; repeated or comma-separated.'),
    ],
    responses: { 200: 'EventDefinitionList' },
  },
  {
    operationId: 'event_definitions_retrieve',
    method: 'get',
    path: `${PROJECT}/event_definitions/:id/`,
    stringParams: ['id'],
    summary: 'One event definition, by its uuid.',
    tag: 'event_definitions',
    scope: 'event_definition:read',
    responses: { 200: 'EventDefinition' },
  },
  {
    operationId: 'property_definitions_list',
    method: 'get',
    path: `${PROJECT}/property_definitions/`,
    summary: "The project's property keys of one kind with their inferred types, by name.",
    tag: 'property_definitions',
    scope: 'property_definition:read',
    query: [
      ...PAGE_QUERY,
      param('type', '`event` (the default), `person`, `group` or `session`.'),
      param('group_type_index', 'The group type (0–4); required with, and only with, `type=group`.', 'integer'),
      param('search', 'Keys containing every space-separated term, in any case.'),
      param('properties', 'Exactly these keys, comma-separated.'),
      param('is_numerical', '`true`: only numeric keys.', 'boolean'),
      param('is_feature_flag', '`true`: only `$feature/…` keys; `false`: none of them.', 'boolean'),
      param('event_names', 'A JSON list of event names: `is_seen_on_filtered_events` says whether each key was seen on one.'),
      param('filter_by_event_names', '`true`: only keys seen on those events (on any event without `event_names`).', 'boolean'),
      param('excluded_properties', 'A JSON list of keys to leave out.'),
      param('exclude_core_properties', "`true`: leave out `$` keys and PostHog's own event properties.", 'boolean'),
      param('exclude_hidden', 'Accepted; skylark hides nothing.', 'boolean'),
    ],
    responses: { 200: 'PropertyDefinitionList' },
  },
  {
    operationId: 'property_definitions_retrieve',
    method: 'get',
    path: `${PROJECT}/property_definitions/:id/`,
    stringParams: ['id'],
    summary: 'One property definition, by its uuid.',
    tag: 'property_definitions',
    scope: 'property_definition:read',
    responses: { 200: 'PropertyDefinition' },
  },
] as const satisfies readonly OperationDoc[]

const EVENT_DEFINITION = {
  type: 'object',
  properties: {
    id: { type: 'string', format: 'uuid' },
    name: { type: 'string' },
    created_at: { type: 'string' },
    last_seen_at: { type: 'string' },
    tags: { type: 'array', items: { type: 'string' } },
    enforcement_mode: { type: 'string' },
    primary_property: nullable({ type: 'string' }),
    is_action: { type: 'boolean' },
    post_to_slack: { type: 'boolean' },
    volume_30_day: nullable({ type: 'integer' }),
    query_usage_30_day: nullable({ type: 'integer' }),
  },
}
const PROPERTY_DEFINITION = {
  type: 'object',
  properties: {
    id: { type: 'string', format: 'uuid' },
    name: { type: 'string' },
    is_numerical: { type: 'boolean' },
    property_type: { type: ['string', 'null'], enum: ['String', 'Numeric', 'Boolean', 'DateTime', null] },
    tags: { type: 'array', items: { type: 'string' } },
    is_seen_on_filtered_events: nullable({ type: 'boolean' }),
  },
}

export const DEFINITION_COMPONENTS = {
  EventDefinition: EVENT_DEFINITION,
  EventDefinitionList: paginated(EVENT_DEFINITION),
  PropertyDefinition: PROPERTY_DEFINITION,
  PropertyDefinitionList: paginated(PROPERTY_DEFINITION),
}

/** PostHog's STALE_EVENT_DAYS. */
const STALE_DAYS = 30
const DAY_MS = 86_400_000

/**
 * An event definition as PostHog's serializer gives one that ingestion made: no tags, schema enforcement off,
 * no primary property, not an action; the two 30-day counts PostHog stopped computing stay null.
 */
function eventDefinitionObject(d: EventDefinitionRecord) {
  return {
    id: d.id,
    name: d.name,
    created_at: d.created_at,
    last_seen_at: d.last_seen_at,
    tags: [],
    enforcement_mode: 'allow',
    primary_property: null,
    is_action: false,
    post_to_slack: false,
    volume_30_day: null,
    query_usage_30_day: null,
  }
}

function propertyDefinitionObject(d: PropertyDefinitionRecord) {
  return { id: d.id, name: d.name, is_numerical: d.is_numerical, property_type: d.property_type, tags: [], is_seen_on_filtered_events: d.is_seen_on_filtered_events }
}

// ---------------------------------------------------------------------------------------------------------
// Query parameters, read as Django REST framework's fields read them.

const TRUE = new Set(['t', 'T', 'y', 'Y', 'yes', 'Yes', 'YES', 'true', 'True', 'TRUE', 'on', 'On', 'ON', '1'])
const FALSE = new Set(['f', 'F', 'n', 'N', 'no', 'No', 'NO', 'false', 'False', 'FALSE', 'off', 'Off', 'OFF', '0'])
const NULL = new Set(['', 'null', 'Null', 'NULL'])

/** A BooleanField: null when absent (or, for one that allows it, null-like). */
function booleanParam(query: URLSearchParams, name: string): boolean | null {
  const raw = query.get(name)
  if (raw === null || NULL.has(raw)) return null
  if (TRUE.has(raw)) return true
  if (FALSE.has(raw)) return false
  throw new ValidationError('invalid', 'Must be a valid boolean.', name)
}

/** TermSearchFilterBackend's terms: the search split on spaces, NULs removed. */
function searchTerms(query: URLSearchParams): string[] {
  return (query.get('search') ?? '').replace(/\u0000/g, '').split(' ').filter((term) => term !== '')
}

/** A JSON-encoded list of names; PostHog's json.loads answers 500 to anything else, skylark 400. */
function jsonNames(query: URLSearchParams, name: string): string[] | null {
  const raw = query.get(name)
  if (!raw) return null
  let parsed: unknown
  try {
    parsed = JSON.parse(raw)
  } catch {
    parsed = undefined
  }
  if (!Array.isArray(parsed) || !parsed.every((v) => typeof v === 'string' || typeof v === 'number')) {
    throw new ValidationError('invalid', 'Must be a JSON-encoded list of names.', name)
  }
  return parsed.map(String)
}

const EVENT_KINDS = new Map([
  ['event', 'all'],
  // PostHog answers these two with plain event definitions too.
  ['all', 'all'],
  ['action_event', 'all'],
  ['event_custom', 'custom'],
  ['event_posthog', 'posthog'],
] as const)
const ORDER_FIELDS: ReadonlySet<string> = new Set(['name', 'last_seen_at', 'last_seen_at::date', 'created_at', 'created_at::date'])

function eventFilter(query: URLSearchParams, now: number): EventDefinitionFilter {
  const rawKind = query.get('event_type') ?? 'event'
  const kind = EVENT_KINDS.get(rawKind as never)
  if (kind === undefined) throw new ValidationError('invalid', 'Not a valid event type. Use one of: event, event_custom, event_posthog.', 'event_type')
  const names = [...new Set(query.getAll('names').flatMap((value) => value.split(',')).filter((name) => name !== ''))]
  // Unknown fields are dropped, as PostHog drops them.
  const order = query
    .getAll('ordering')
    .flatMap((value) => value.split(','))
    .filter((value) => ORDER_FIELDS.has(value.replace(/-/g, '')))
    .map((value) => ({ field: value.replace(/-/g, '') as EventOrderField, descending: value.includes('-') }))
  return {
    search: searchTerms(query),
    kind,
    names: names.length > 0 ? names : null,
    excluded: jsonNames(query, 'excluded_properties') ?? [],
    seenAfter: (query.get('exclude_stale') ?? '').toLowerCase() === 'true' ? new Date(now - STALE_DAYS * DAY_MS).toISOString() : null,
    order,
  }
}

const PROPERTY_KINDS = new Map([
  ['event', 1],
  ['person', 2],
  ['group', 3],
  ['session', 4],
])

/** An IntegerField: digits, a sign, surrounding spaces and a `.0` tail are accepted. */
function integerParam(query: URLSearchParams, name: string): number | null {
  const raw = query.get(name)
  if (raw === null) return null
  const match = /^\s*([-+]?\d{1,9})(\.0*)?\s*$/.exec(raw)
  if (!match) throw new ValidationError('invalid', 'A valid integer is required.', name)
  return Number(match[1])
}

function propertyFilter(query: URLSearchParams): PropertyDefinitionFilter {
  const rawType = query.get('type') || 'event'
  const kind = PROPERTY_KINDS.get(rawType)
  if (kind === undefined) throw new ValidationError('invalid_choice', `"${rawType}" is not a valid choice.`, 'type')
  const groupTypeIndex = integerParam(query, 'group_type_index')
  const numerical = booleanParam(query, 'is_numerical')
  const featureFlag = booleanParam(query, 'is_feature_flag')
  const onlySeen = booleanParam(query, 'filter_by_event_names')
  const excludeCore = booleanParam(query, 'exclude_core_properties')
  booleanParam(query, 'exclude_hidden')
  // The serializer's own checks, after every field's, with no field named (PostHog's order and wording).
  if (kind === 3 && groupTypeIndex === null) throw new ValidationError('invalid', '`group_type_index` must be set for `group` type')
  if (kind !== 3 && groupTypeIndex !== null) throw new ValidationError('invalid', '`group_type_index` can only set for `group` type')
  if (groupTypeIndex !== null && (groupTypeIndex < 0 || groupTypeIndex >= MAX_GROUP_TYPES_PER_TEAM)) {
    throw new ValidationError('invalid', 'Invalid value for `group_type_index`')
  }
  if (kind !== 1 && query.get('event_names')) throw new ValidationError('invalid', '`event_names` can only be set for `event` type')
  const properties = query.get('properties')
  return {
    kind,
    groupTypeIndex: groupTypeIndex ?? -1,
    names: properties ? properties.split(',') : null,
    numerical: numerical === true,
    featureFlag,
    search: searchTerms(query),
    excluded: jsonNames(query, 'excluded_properties') ?? [],
    excludeCore: excludeCore === true,
    eventNames: jsonNames(query, 'event_names'),
    onlySeen: onlySeen === true,
  }
}

/** A definition's uuid from the path; anything else names none (404), as PostHog answers it. */
function definitionId(req: ProjectApiRequest): string {
  const id = normaliseUuid(req.params.id)
  if (id === null) throw new AppError('not_found')
  return id
}

export function registerDefinitionRoutes(router: Router, api: ApiContext, persons: PersonReader, maxBodyBytes: number): void {
  const definitions = persons.definitions
  const handlers = {
    event_definitions_list: async (req: ProjectApiRequest) => {
      const page = parsePage(req.query)
      const { count, results } = await persons.scans.definitions.events(req.project.id, eventFilter(req.query, Date.now()), page)
      return pageEnvelope(req.baseUrl, req.ctx.path, req.query, page, count, results.map(eventDefinitionObject))
    },
    event_definitions_retrieve: (req: ProjectApiRequest) => {
      const found = definitions.event(req.project.id, definitionId(req))
      if (!found) throw new AppError('not_found')
      return eventDefinitionObject(found)
    },
    property_definitions_list: async (req: ProjectApiRequest) => {
      const filter = propertyFilter(req.query)
      const page = parsePage(req.query)
      const { count, results } = await persons.scans.definitions.properties(req.project.id, filter, page)
      return pageEnvelope(req.baseUrl, req.ctx.path, req.query, page, count, results.map(propertyDefinitionObject))
    },
    property_definitions_retrieve: (req: ProjectApiRequest) => {
      const found = definitions.property(req.project.id, definitionId(req))
      if (!found) throw new AppError('not_found')
      return propertyDefinitionObject(found)
    },
  }
  for (const op of DEFINITION_OPERATIONS) {
    router.add(op.method, op.path, projectRoute(api, { scope: op.scope }, handlers[op.operationId]), { maxBodyBytes })
  }
}
