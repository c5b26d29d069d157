/**
 * The body of /decide and /flags, read as PostHog's flag service reads it (flag_request.rs): field
 * aliases, numbers accepted where ids are expected, unknown types ignored rather than refused.
 */
import { AppError } from '../common/errors.js'
import { isPlainObject, type JsonObject } from '../common/json.js'

export interface DecideRequest {
  token: string | null
  /** null when absent; numbers arrive as their JSON text. */
  distinctId: string | null
  groups: Record<string, string>
  personProperties: JsonObject
  groupProperties: Record<string, JsonObject>
  anonDistinctId: string | null
  flagKeys: string[] | undefined
  disableFlags: boolean
  geoipDisable: boolean
  deviceId: string | undefined
  projectIdHint: unknown
}

const MAX_DISTINCT_ID = 200

/** The first of a field's names that the body gives a value (fixed parameters: a rest array was made per call). */
function first(body: JsonObject, a: string, b: string, c?: string): unknown {
  const value = body[a] ?? body[b]
  if (value !== undefined && value !== null) return value
  return c === undefined ? undefined : (body[c] ?? undefined)
}

function idText(value: unknown): string | null {
  if (typeof value === 'string') return value.slice(0, MAX_DISTINCT_ID)
  if (typeof value === 'number' && Number.isFinite(value)) return JSON.stringify(value)
  return null
}

export function readDecideRequest(body: unknown): DecideRequest {
  if (!isPlainObject(body)) {
    throw new AppError('invalid_payload', { detail: 'Malformed request data: the body must be a JSON object.' })
  }
  const token = first(body, 'token', '$token', 'api_key')
  const personProperties = first(body, 'person_properties', '$properties')
  const groupsRaw = first(body, 'groups', '$groups')
  const groupPropsRaw = first(body, 'group_properties', '$group_properties')
  const groups: Record<string, string> = {}
  if (isPlainObject(groupsRaw)) {
    for (const [type, key] of Object.entries(groupsRaw)) {
      const text = typeof key === 'string' ? key : typeof key === 'number' && Number.isFinite(key) ? String(key) : null
      if (text !== null) groups[type] = text
    }
  }
  const groupProperties: Record<string, JsonObject> = {}
  if (isPlainObject(groupPropsRaw)) {
    for (const [type, props] of Object.entries(groupPropsRaw)) if (isPlainObject(props)) groupProperties[type] = props
  }
  const overrides = isPlainObject(personProperties) ? personProperties : {}
  const anon = idText(first(body, '$anon_distinct_id', 'anon_distinct_id')) ?? idText(overrides.$anon_distinct_id)
  const flagKeys = first(body, 'flag_keys_to_evaluate', 'flag_keys')
  return {
    token: typeof token === 'string' && token !== '' ? token : null,
    distinctId: idText(first(body, 'distinct_id', '$distinct_id')),
    groups,
    personProperties: overrides,
    groupProperties,
    anonDistinctId: anon,
    flagKeys: Array.isArray(flagKeys) ? flagKeys.filter((k): k is string => typeof k === 'string') : undefined,
    disableFlags: body.disable_flags === true,
    geoipDisable: body.geoip_disable === true,
    deviceId: typeof body.$device_id === 'string' ? body.$device_id : undefined,
    projectIdHint: body.project_id,
  }
}
