/**
 * The body of /decide and /flags, read as PostHog's flag service reads it (flag_request.rs): field
 * aliases, numbers accepted where ids are expected, unknown types ignored rather than refused.
 */
import { AppError } from '../common/errors.js'
import { cutDistinctId } from '../common/ids.js'
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
  /** `device_id` (or `$device_id`), else `person_properties.$device_id` (SDKs that send it only as a property). */
  deviceId: string | undefined
  projectIdHint: unknown
  /** `evaluation_runtime` as the SDK sent it, if it did (see requestRuntime). */
  evaluationRuntime: string | null
  /**
   * `evaluation_contexts` (current SDKs' name; PostHog's service reads `evaluation_environments` as its alias):
   * when some are given, flags with evaluation tags none of them names are left out.
   */
  evaluationEnvironments: string[]
  /** The browser's zone and `cookieless_hash_extra`, as sent: a cookieless id is hashed with them (flags/cookieless.ts). */
  timezone: unknown
  cookielessHashExtra: unknown
}

/** The first of a field's names that the body gives a value (fixed parameters: a rest array was made per call). */
function first(body: JsonObject, a: string, b: string, c?: string): unknown {
  const value = body[a] ?? body[b]
  if (value !== undefined && value !== null) return value
  return c === undefined ? undefined : (body[c] ?? undefined)
}

function idText(value: unknown): string | null {
  if (typeof value === 'string') return cutDistinctId(value)
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
    deviceId: nonEmptyText(first(body, 'device_id', '$device_id')) ?? nonEmptyText(overrides.$device_id),
    projectIdHint: body.project_id,
    evaluationRuntime: typeof body.evaluation_runtime === 'string' ? body.evaluation_runtime : null,
    evaluationEnvironments: stringList(first(body, 'evaluation_contexts', 'evaluation_environments')),
    timezone: body.timezone,
    cookielessHashExtra: body.cookieless_hash_extra,
  }
}

const nonEmptyText = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined)

const stringList = (value: unknown): string[] => (Array.isArray(value) ? value.filter((e): e is string => typeof e === 'string') : [])

/** Where a flag may be evaluated, and where a request comes from: PostHog's `EvaluationRuntime`. */
export type EvaluationRuntime = 'all' | 'client' | 'server'

/** `client` or `server` in any case; anything else (absent, unknown) is `all`, as PostHog reads it. */
export function runtimeOf(text: string | null | undefined): EvaluationRuntime {
  const lower = text?.toLowerCase()
  return lower === 'client' || lower === 'server' ? lower : 'all'
}

/** The request headers PostHog's flag service judges a caller's runtime by. */
export interface RuntimeHeaders {
  'user-agent'?: string
  origin?: string
  referer?: string
  'sec-fetch-mode'?: string
  'sec-fetch-site'?: string
}

const BROWSER_AGENT = /Mozilla\/|Chrome\/|Safari\/|Firefox\/|Edge\//
const SERVER_AGENT = /^posthog-(python|ruby|php|java|go|node|dotnet|elixir)\/|python-requests\/|curl\//
const MOBILE_AGENT = /^posthog-(android|ios|react-native|flutter)\//

/**
 * The caller's runtime, as PostHog's flag service detects it: the body's `evaluation_runtime`, else a browser,
 * server-SDK or mobile-SDK User-Agent, else browser-only headers (Origin, Referer, Sec-Fetch-*) mean a client;
 * null when nothing tells. Only flags for `all` (or the caller's runtime) are evaluated for it.
 */
export function requestRuntime(explicit: string | null, headers: RuntimeHeaders): EvaluationRuntime | null {
  if (explicit !== null) return runtimeOf(explicit)
  const agent = headers['user-agent']
  if (agent !== undefined) {
    if (BROWSER_AGENT.test(agent)) return 'client'
    if (SERVER_AGENT.test(agent)) return 'server'
    if (MOBILE_AGENT.test(agent)) return 'client'
  }
  if (headers.origin !== undefined || headers.referer !== undefined || headers['sec-fetch-mode'] !== undefined || headers['sec-fetch-site'] !== undefined) {
    return 'client'
  }
  return null
}
