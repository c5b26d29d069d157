/**
 * The groups API's writes, as PostHog's GroupsViewSet (posthog/api/group.py; scope `group:write`):
 * - POST groups/ `{group_type_index, group_key, group_properties}`: 201 with the group;
 * - POST groups/update_property/?group_type_index=&group_key= `{key, value}`: 200 with the group as it becomes;
 * - POST groups/delete_property/?group_type_index=&group_key= `{"$unset": key}`: 200 likewise.
 * PostHog writes the group to its databases and captures an event beside it (`$groupidentify` with `$group_set`,
 * `$delete_group_property` with `$group_unset`, personless, for the team's uuid). persons.db has one writer, the
 * ingest consumer thread, so here the event is the write (persons/stage.ts applies it): it goes through the
 * spool's main lane, ordered after the events acknowledged before it and durable when answered. What is checked
 * before (an existing key, the group, its property) is persons.db as the consumer has left it so far.
 */
import { AppError, ValidationError } from '../../common/errors.js'
import { iso } from '../../common/clock.js'
import { uuidv5 } from '../../common/ids.js'
import { copyObject, isPlainObject, setOwn, type JsonObject } from '../../common/json.js'
import type { IngestionService } from '../../ingestion/index.js'
import { pyTypeName } from '../../common/python-format.js'
import { drfInteger, drfText } from '../../common/drf-fields.js'
import type { GroupRecord, PersonReader } from '../../persons/index.js'
import { answer, type ProjectApiRequest } from '../api.js'
import { required, requiredIndex } from './group-params.js'

/** Namespace of the distinct id the groups API's events carry: PostHog sends its team's uuid, which skylark has none of. */
const PROJECT_DISTINCT_ID_NAMESPACE = 'b6a8c4f2-3d1e-4f5a-9c7b-2e8d0a1f6c35'

/** The distinct id of a project's own events (a uuid, as PostHog's team uuid): no person is ever made for it. */
export function projectDistinctId(projectId: number): string {
  return uuidv5(`project:${projectId}`, PROJECT_DISTINCT_ID_NAMESPACE)
}

/** The model's columns: group_key is a CharField(max_length=400), group_type_index an IntegerField. */
const MAX_GROUP_KEY = 400
const INT_MIN = -2147483648
const INT_MAX = 2147483647

const fieldError = (code: string, detail: string, attr: string) => new ValidationError(code, detail, attr)
const REQUIRED_FIELD = 'This field is required.'

/** A missing field is the serializer's `required`; a present one gets its field's own checks (drf-fields.ts). */
function bodyField(body: JsonObject, attr: string): unknown {
  if (body[attr] === undefined) throw fieldError('required', REQUIRED_FIELD, attr)
  return body[attr]
}

export interface GroupCreate {
  index: number
  key: string
  properties: JsonObject
}

/**
 * The body of POST groups/, read as PostHog's CreateGroupSerializer reads it (the first field in error is
 * answered). `group_properties` may be absent or null; like PostHog's create_group, any empty value is `{}`.
 * A non-empty value that is not an object is refused (PostHog stores it and then answers 500).
 */
export function readGroupCreate(body: unknown): GroupCreate {
  if (!isPlainObject(body)) throw new ValidationError('parse_error', 'The body must be a JSON object.')
  const index = drfInteger(bodyField(body, 'group_type_index'), 'group_type_index', { min: INT_MIN, max: INT_MAX }) as number
  const key = drfText(bodyField(body, 'group_key'), 'group_key', { maxLength: MAX_GROUP_KEY })
  const raw = body.group_properties
  const empty = raw === undefined || raw === null || raw === false || raw === 0 || raw === '' || (Array.isArray(raw) && raw.length === 0)
  if (!empty && !isPlainObject(raw)) throw fieldError('not_a_dict', `Expected a dictionary of items but got type "${pyTypeName(raw)}".`, 'group_properties')
  return { index, key, properties: isPlainObject(raw) ? raw : {} }
}

/**
 * update_property's `key`: PostHog refuses a missing or falsy one and uses any other as a dict key, which JSON
 * writes as text; an integer is taken as its digits, a list or object (PostHog: 500) is refused.
 */
function propertyKey(value: unknown): string {
  if (value === undefined || value === null || value === '' || value === 0 || value === false) throw fieldError('invalid', REQUIRED_FIELD, 'key')
  if (typeof value === 'string') return value
  if (typeof value === 'number' && Number.isSafeInteger(value)) return String(value)
  throw fieldError('invalid', 'Not a valid string.', 'key')
}

function bodyObject(req: ProjectApiRequest): JsonObject {
  if (!isPlainObject(req.body)) throw new ValidationError('parse_error', 'The body must be a JSON object.')
  return req.body
}

/** The group as PostHog's GroupSerializer answers it. */
function groupAnswer(group: GroupRecord, properties: JsonObject) {
  return { group_type_index: group.group_type_index, group_key: group.group_key, group_properties: properties, created_at: group.created_at }
}

export function groupWriteHandlers(persons: PersonReader, ingestion: IngestionService) {
  /** The name of a group type: the events name it so; 404 when the project has none at that index, as PostHog. */
  const typeName = (teamId: number, index: number): string => {
    const type = persons.groupTypes(teamId).find((t) => t.group_type_index === index)
    if (!type) throw new AppError('not_found')
    return type.group_type
  }
  /** The group the query names (PostHog's get_object): 400 without type or key, 404 when it does not exist. */
  const groupOf = (req: ProjectApiRequest): GroupRecord => {
    const index = requiredIndex(req.query)
    const group = persons.groups.find(req.project.id, index, required(req.query, 'group_key'))
    if (!group) throw new AppError('not_found')
    return group
  }
  const capture = (teamId: number, event: string, properties: JsonObject) =>
    ingestion.captureInternal(teamId, projectDistinctId(teamId), event, { ...properties, $process_person_profile: false })

  return {
    groups_create: async (req: ProjectApiRequest) => {
      const teamId = req.project.id
      const { index, key, properties } = readGroupCreate(req.body)
      if (persons.groups.find(teamId, index, key)) throw fieldError('invalid', 'A group with this key already exists', 'detail')
      const groupType = typeName(teamId, index)
      const at = await capture(teamId, '$groupidentify', { $group_type: groupType, $group_key: key, $group_set: properties })
      return answer(201, { group_type_index: index, group_key: key, group_properties: properties, created_at: iso(at) })
    },
    groups_update_property: async (req: ProjectApiRequest) => {
      const group = groupOf(req)
      const b = bodyObject(req)
      const key = propertyKey(b.key)
      if (b.value === undefined || b.value === null) throw fieldError('invalid', REQUIRED_FIELD, 'value')
      const teamId = req.project.id
      const groupType = typeName(teamId, group.group_type_index)
      await capture(teamId, '$groupidentify', { $group_type: groupType, $group_key: group.group_key, $group_set: { [key]: b.value } })
      const properties = copyObject(group.group_properties)
      setOwn(properties, key, b.value)
      return groupAnswer(group, properties)
    },
    groups_delete_property: async (req: ProjectApiRequest) => {
      const group = groupOf(req)
      const key = bodyObject(req).$unset
      if (typeof key !== 'string') throw fieldError('invalid', 'This field is required and must be a string (the property name to delete).', '$unset')
      if (!Object.hasOwn(group.group_properties, key)) throw fieldError('invalid', `Property '${key}' does not exist on this group.`, '$unset')
      const teamId = req.project.id
      const groupType = typeName(teamId, group.group_type_index)
      await capture(teamId, '$delete_group_property', { $group_type: groupType, $group_key: group.group_key, $group_unset: [key] })
      const properties = copyObject(group.group_properties)
      delete properties[key]
      return groupAnswer(group, properties)
    },
  }
}
