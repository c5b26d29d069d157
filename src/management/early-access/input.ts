/**
 * The create and update bodies read as PostHog's serializers read them: fields in serializer order with DRF's
 * messages (the first broken field is the one answered), unknown and read-only fields ignored. What refers to
 * other rows (the flag, the assignee) is checked by the service.
 */
import { drfDict, drfInteger, drfText, pyTruthy } from '../../common/drf-fields.js'
import { ValidationError } from '../../common/errors.js'
import { isPlainObject, type JsonObject } from '../../common/json.js'
import { pyStr, pyTypeName } from '../../common/python-format.js'
import { STAGES, type Stage } from './record.js'

export interface FeatureFields {
  name?: string
  description?: string
  stage?: Stage
  documentation_url?: string
  /** Present when the body names it (any JSON; a falsy one empties it). */
  payload?: unknown
  /** Present when the body names it: null unassigns. */
  assignee?: unknown
}

export interface CreateFields extends FeatureFields {
  name: string
  stage: Stage
  /** The flag to link; null (or 0, falsy to PostHog) creates one. */
  feature_flag_id: number | null
}

export interface UpdateFields extends FeatureFields {
  /** With a move to general-availability: serve the flag to everyone instead of the enrolled. */
  rollout_to_all: boolean
}

function stage(value: unknown): Stage {
  if (value === null) throw new ValidationError('null', 'This field may not be null.', 'stage')
  const s = typeof value === 'string' ? value : pyStr(value)
  if (!(STAGES as readonly string[]).includes(s)) {
    throw new ValidationError('invalid_choice', `"${s}" is not a valid choice.`, 'stage')
  }
  return s as Stage
}

/** Django's URLValidator: its schemes, a host name with a top-level domain, localhost or an IP, a port, a path. */
const HOST = String.raw`[a-z\u00a1-\uffff0-9](?:[a-z\u00a1-\uffff0-9-]{0,61}[a-z\u00a1-\uffff0-9])?(?:\.(?!-)[a-z\u00a1-\uffff0-9-]{1,63}(?<!-))*\.(?!-)(?:[a-z\u00a1-\uffff-]{2,63}|xn--[a-z0-9]{1,59})(?<!-)\.?`
const IPV4 = String.raw`(?:0|25[0-5]|2[0-4][0-9]|1[0-9]?[0-9]?|[1-9][0-9]?)(?:\.(?:0|25[0-5]|2[0-4][0-9]|1[0-9]?[0-9]?|[1-9][0-9]?)){3}`
const URL_RE = new RegExp(String.raw`^(?:[a-z0-9.+-]*)://(?:[^\s:@/]+(?::[^\s:@/]*)?@)?(?:${IPV4}|\[[0-9a-f:.]+\]|${HOST}|localhost)(?::[0-9]{1,5})?(?:[/?#][^\s]*)?$`, 'iu')
const URL_SCHEMES = ['http', 'https', 'ftp', 'ftps']

export function isDjangoUrl(value: string): boolean {
  if (value.length > 2048 || /[\t\r\n]/.test(value)) return false
  const scheme = value.split('://')[0]!.toLowerCase()
  return URL_SCHEMES.includes(scheme) && URL_RE.test(value)
}

function documentationUrl(value: unknown): string {
  const url = drfText(value, 'documentation_url', { allowBlank: true, maxLength: 800 })
  if (url !== '' && !isDjangoUrl(url)) throw new ValidationError('invalid', 'Enter a valid URL.', 'documentation_url')
  return url
}

const required = (field: string) => new ValidationError('required', 'This field is required.', field)

/** The fields both serializers share, in their order; `name` and `stage` are required on create. */
function shared(body: JsonObject, out: FeatureFields, creating: boolean): void {
  if (body.name !== undefined) out.name = drfText(body.name, 'name', { maxLength: 200 })
  else if (creating) throw required('name')
  if (body.description !== undefined) out.description = drfText(body.description, 'description', { allowBlank: true })
  if (body.stage !== undefined) out.stage = stage(body.stage)
  else if (creating) throw required('stage')
  if (body.documentation_url !== undefined) out.documentation_url = documentationUrl(body.documentation_url)
}

export function readCreate(raw: unknown): CreateFields {
  const body = drfDict(raw)
  const out: FeatureFields = {}
  shared(body, out, true)
  // The create serializer's JSONField: any value but null, `{}` when absent.
  if (body.payload === null) throw new ValidationError('null', 'This field may not be null.', 'payload')
  out.payload = body.payload ?? {}
  const flagId = body.feature_flag_id === undefined ? null : drfInteger(body.feature_flag_id, 'feature_flag_id')
  if (body._create_in_folder !== undefined) drfText(body._create_in_folder, '_create_in_folder', { allowBlank: true })
  if ('assignee' in body) out.assignee = body.assignee
  return { ...out, name: out.name!, stage: out.stage!, feature_flag_id: flagId || null }
}

export function readUpdate(raw: unknown): UpdateFields {
  const body = drfDict(raw)
  const out: FeatureFields = {}
  shared(body, out, false)
  // PostHog reads these two from the raw body, unchecked: any JSON payload, and rollout_to_all by truthiness.
  if ('payload' in body) out.payload = pyTruthy(body.payload) ? body.payload : {}
  if ('assignee' in body) out.assignee = body.assignee
  return { ...out, rollout_to_all: pyTruthy(body.rollout_to_all) }
}

const SHAPE = 'Expected null or an object of shape {"type": "user" | "role", "id": ...}.'
const INVALID_ID = 'Assignee ID is invalid.'

export type AssigneeRef = { user: number | null; role: string | null }

/**
 * The assignee's shape as PostHog's `_validated_assignee_fields` checks it; whether the user or role belongs to
 * the organisation is the service's to check. A role id must be a UUID, a user id an integer.
 */
export function readAssignee(value: unknown, normaliseUuid: (s: string) => string | null): AssigneeRef {
  if (value === null) return { user: null, role: null }
  const fail = (detail: string) => new ValidationError('invalid', detail, 'assignee')
  if (!isPlainObject(value) || (value.type !== 'user' && value.type !== 'role') || value.id === null || value.id === undefined || value.id === '') throw fail(SHAPE)
  if (value.type === 'user') {
    const id = typeof value.id === 'string' && /^\s*[+-]?\d+\s*$/.test(value.id) ? Number(value.id) : value.id
    if (typeof id !== 'number' || !Number.isSafeInteger(id)) throw fail(INVALID_ID)
    return { user: id, role: null }
  }
  const role = typeof value.id === 'string' ? normaliseUuid(value.id) : null
  if (role === null) throw fail(INVALID_ID)
  return { user: null, role }
}
