/**
 * The capture core: JSON text → accepted events and the silent drops, following PostHog capture's field
 * resolution (posthog-semantics §3.3) and timestamps (§2.6). Pure: the clock, the uuid source and the
 * token → project lookup are inputs, so it runs the same on the main thread and in pool workers.
 *
 * Whole-request errors throw AppError (400 invalid_payload, 401 invalid_api_key, 400 invalid_project);
 * per-event problems that the contract answers with 200 become drop warnings, never exceptions.
 */
import { setFlagsFromString } from 'node:v8'
import { AppError } from '../common/errors.js'
import { cutDistinctId, normaliseUuid } from '../common/ids.js'
import { copyObject, isPlainObject, MAX_NESTING, mergeObjects, nestingExceeds, type JsonObject } from '../common/json.js'
import { becomesIdentify, engageToIdentify, type EngageRule } from './engage.js'
import { resolveSentAt, resolveTimestamp } from './timestamps.js'
import type { CapturedEvent, IngestionWarning } from './types.js'

export const MAX_EVENT_NAME = 200
export interface ParseContext {
  now: number
  /** Client address: first X-Forwarded-For entry, else the socket address. */
  ip: string | null
  /** The `_` query parameter (client send time), if any. */
  queryUnderscore: string | null
  /** Token from the query string (`?token=` / `?api_key=`), if any. */
  queryToken: string | null
  /** Which events without a name are engage updates (`$identify`): all on `/engage/`, none elsewhere. */
  engage?: EngageRule
  uuid: () => string
  /** Resolves a project API key (or a personal key with a project id) to a project; throws the 401/400. */
  resolveProject: (token: string | null, projectIdHint: unknown) => { id: number; anonymizeIps: boolean }
}

export type DropReason = 'missing_event_name' | 'missing_distinct_id' | 'empty_distinct_id' | 'performance_event'

export interface ParsedPayload {
  teamId: number
  historical: boolean
  events: CapturedEvent[]
  /** Silent drops (`event_dropped`, with details.reason) and timestamp warnings, for ingestion_warnings. */
  warnings: IngestionWarning[]
}

function invalidPayload(detail: string): AppError {
  return new AppError('invalid_payload', { detail: `Invalid payload: ${detail}` })
}

/** A JSON.parse reviver; `context.source` is the value's text (see parseJsonWithExactIds). */
type Reviver = (this: unknown, key: string, value: unknown, context?: { source?: string }) => unknown

/** JSON.parse, plus Python-style NaN/Infinity (posthog-python can send them) read as null. */
export function parseJson(text: string, reviver?: Reviver): unknown {
  try {
    return JSON.parse(text, reviver)
  } catch (error) {
    const patched = replaceNonFiniteTokens(text)
    if (patched !== text) {
      try {
        return JSON.parse(patched, reviver)
      } catch {
        // fall through to the original message
      }
    }
    throw new AppError('invalid_payload', { detail: `Malformed request data: ${(error as Error).message}` })
  }
}

/** An integer JSON number a double cannot hold exactly: JSON.parse has already rounded it. */
function isInexactInteger(value: unknown): boolean {
  return typeof value === 'number' && Number.isInteger(value) && !Number.isSafeInteger(value)
}

let sourceTextEnabled = false
const ID_KEYS = ['distinct_id', '$distinct_id', '$anon_distinct_id', 'anon_distinct_id']

/** Whether one of `object`'s distinct ids (the keys parseJsonWithExactIds reads again) was rounded. */
export function hasRoundedId(object: unknown): boolean {
  return isPlainObject(object) && ID_KEYS.some((key) => isInexactInteger(object[key]))
}

/**
 * `text` parsed again with every distinct id that is an integer past 2^53 read as its literal text, as PostHog's
 * Rust services keep it (`1234567890123456789`, not `…800`: another person, another hash). A second parse,
 * made only when the first found such an id: the reviver costs every key a call. JSON.parse hands a reviver
 * the source text under V8's `--harmony-json-parse-with-source` (on by default from Node 22).
 */
export function parseJsonWithExactIds(text: string): unknown {
  if (!sourceTextEnabled) {
    setFlagsFromString('--harmony-json-parse-with-source')
    sourceTextEnabled = true
  }
  return parseJson(text, (key, value, context) => (ID_KEYS.includes(key) && isInexactInteger(value) && context?.source !== undefined ? context.source : value))
}

function replaceNonFiniteTokens(text: string): string {
  if (!/NaN|Infinity/.test(text)) return text
  let out = ''
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text[i]
    if (inString) {
      out += c
      if (c === '\\') out += text[++i] ?? ''
      else if (c === '"') inString = false
      continue
    }
    if (c === '"') inString = true
    if (text.startsWith('NaN', i)) {
      out += 'null'
      i += 2
    } else if (text.startsWith('-Infinity', i)) {
      out += 'null'
      i += 8
    } else if (text.startsWith('Infinity', i)) {
      out += 'null'
      i += 7
    } else out += c
  }
  return out
}

function typeName(value: unknown): string {
  if (value === null) return 'NoneType'
  if (Array.isArray(value)) return 'list'
  return { string: 'str', number: 'int', boolean: 'bool' }[typeof value as string] ?? typeof value
}

/**
 * distinct ids arrive as strings, numbers or anything JSON; they are stored as text (PostHog rules), cut as
 * Rust capture cuts them.
 */
function distinctIdText(value: unknown): string | null {
  if (value === undefined || value === null) return null
  return cutDistinctId((typeof value === 'string' ? value : JSON.stringify(value)).replace(/\u0000/g, '\uFFFD'))
}

function tokenOf(event: JsonObject): string | null {
  for (const value of [event.api_key, event.token, event.$token]) if (typeof value === 'string') return value
  const props = event.properties
  if (isPlainObject(props) && typeof props.token === 'string') return props.token
  return null
}

/** Splits the accepted shapes (single event, array of events, batch object) into the event list. */
function eventsOf(payload: unknown): { items: unknown[]; batchToken: string | null; historical: boolean; sentAt: unknown; projectId: unknown } {
  if (Array.isArray(payload)) return { items: payload, batchToken: null, historical: false, sentAt: undefined, projectId: undefined }
  if (!isPlainObject(payload)) throw invalidPayload('the body must be a JSON object or array.')
  if ('batch' in payload) {
    if (!Array.isArray(payload.batch)) throw invalidPayload('"batch" must be a list of events.')
    const token = typeof payload.api_key === 'string' ? payload.api_key : typeof payload.token === 'string' ? payload.token : null
    // An Option<bool> in Rust capture: null is the same as absent.
    if (payload.historical_migration != null && typeof payload.historical_migration !== 'boolean') {
      throw invalidPayload('"historical_migration" must be a boolean.')
    }
    return {
      items: payload.batch,
      batchToken: token,
      historical: payload.historical_migration === true,
      sentAt: payload.sent_at,
      projectId: payload.project_id,
    }
  }
  return { items: [payload], batchToken: null, historical: false, sentAt: payload.sent_at, projectId: payload.project_id }
}

export function parsePayload(text: string, ctx: ParseContext): ParsedPayload {
  let body = parseJson(text)
  if (nestingExceeds(body, MAX_NESTING)) throw invalidPayload(`objects and arrays may nest at most ${MAX_NESTING} levels deep.`)
  let shape = eventsOf(body)
  // an event's distinct id, at its top or in its properties
  if (shape.items.some((item) => hasRoundedId(item) || (isPlainObject(item) && hasRoundedId(item.properties)))) {
    body = parseJsonWithExactIds(text)
    shape = eventsOf(body)
  }
  // Rust capture's EmptyBatch: a request that holds no event is refused before its key is read.
  if (shape.items.length === 0) throw invalidPayload('the request holds no events.')
  for (const item of shape.items) {
    if (item === null) throw invalidPayload('some events are null')
    if (!isPlainObject(item)) throw invalidPayload('every event must be a JSON object.')
  }
  const items = shape.items as JsonObject[]
  // Only on /engage/, as Rust capture: elsewhere an event without a name is a silent drop (the contract's rule).
  // The items are this request's own (fresh from JSON.parse), so they are replaced in place.
  if (ctx.engage) {
    const inBatch = isPlainObject(body) && 'batch' in body
    for (let i = 0; i < items.length; i++) if (becomesIdentify(items[i], ctx.engage, inBatch)) items[i] = engageToIdentify(items[i])
  }

  // One token per request: the batch's, or the events' own, which must then agree (Rust capture's rule).
  let token = shape.batchToken
  for (const item of items) {
    const own = tokenOf(item)
    if (own === null) continue
    if (token === null) token = own
    else if (own !== token && shape.batchToken === null) {
      throw new AppError('invalid_api_key', { detail: 'Batch submitted with inconsistent api_key values.' })
    }
  }
  token ??= ctx.queryToken
  const project = ctx.resolveProject(token, shape.projectId)
  const sentAt = resolveSentAt(shape.sentAt, ctx.queryUnderscore)

  const events: CapturedEvent[] = []
  const warnings: IngestionWarning[] = []
  const warn = (type: string, details: Record<string, unknown>) =>
    warnings.push({ team_id: project.id, type, source: 'capture', details, timestamp: ctx.now })

  for (const item of items) {
    const captured = normaliseEvent(item, project, sentAt, ctx, warn)
    if (captured) events.push(captured)
  }
  return { teamId: project.id, historical: shape.historical, events, warnings }
}

/**
 * `$ip` from the request unless the client sent one, none when the project anonymises IPs; a cookieless event
 * keeps it either way: the consumer hashes it into the event's ids and removes it (persons/cookieless-ingest.ts).
 */
export function fillIp(properties: JsonObject, ip: string | null, anonymizeIps: boolean): void {
  if (anonymizeIps && !properties.$cookieless_mode) delete properties.$ip
  else if (ip && properties.$ip === undefined) properties.$ip = ip
}

function normaliseEvent(
  item: JsonObject,
  project: { id: number; anonymizeIps: boolean },
  sentAt: number | null,
  ctx: ParseContext,
  warn: (type: string, details: Record<string, unknown>) => void,
): CapturedEvent | null {
  const drop = (reason: DropReason, item: JsonObject) =>
    warn('event_dropped', {
      reason,
      event: typeof item.event === 'string' ? item.event.slice(0, MAX_EVENT_NAME) : null,
      uuid: typeof item.uuid === 'string' ? item.uuid.slice(0, 64) : null,
    })
  const rawProps = item.properties
  if (rawProps !== undefined && rawProps !== null && !isPlainObject(rawProps)) {
    throw invalidPayload(`Properties must be a JSON object, received ${typeName(rawProps)}!`)
  }
  if (item.event !== undefined && item.event !== null && typeof item.event !== 'string') {
    throw invalidPayload(`Event field "event" must be a string, received ${typeName(item.event)}!`)
  }
  let uuid: string | null = null
  // Rust capture reads an empty uuid as none and gives the event a new one.
  if (item.uuid !== undefined && item.uuid !== null && item.uuid !== '') {
    uuid = typeof item.uuid === 'string' ? normaliseUuid(item.uuid) : null
    if (uuid === null) throw invalidPayload('Event field "uuid" is not a valid UUID!')
  }
  // The object is this request's own (fresh from JSON.parse), so it is completed in place, not copied.
  const properties: JsonObject = rawProps ?? {}
  const name = item.event as string | undefined | null
  if (name === undefined || name === null || name === '') {
    drop('missing_event_name', item)
    return null
  }
  if (name === '$performance_event') {
    drop('performance_event', item)
    return null
  }
  const distinctId = distinctIdText(item.distinct_id ?? item.$distinct_id ?? properties.distinct_id ?? properties.$distinct_id)
  if (distinctId === null) {
    drop('missing_distinct_id', item)
    return null
  }
  if (distinctId.trim() === '') {
    drop('empty_distinct_id', item)
    return null
  }

  // PostHog's normalizeEvent: top-level $set/$set_once join the ones inside properties.
  for (const key of ['$set', '$set_once'] as const) {
    const top = item[key]
    if (isPlainObject(top)) {
      const inner = properties[key]
      properties[key] = isPlainObject(inner) ? mergeObjects(inner, top) : copyObject(top)
    }
  }
  fillIp(properties, ctx.ip, project.anonymizeIps)

  const time = resolveTimestamp({
    timestamp: item.timestamp,
    sentAt,
    offset: item.offset,
    ignoreSentAt: properties.$ignore_sent_at === true,
    now: ctx.now,
  })
  for (const w of time.warnings) warn(w.type, { ...w.details, event: name.slice(0, MAX_EVENT_NAME), distinct_id: distinctId })
  return {
    uuid: uuid ?? ctx.uuid(),
    event: name.length > MAX_EVENT_NAME ? name.slice(0, MAX_EVENT_NAME) : name,
    distinct_id: distinctId,
    properties,
    timestamp: time.ms,
    team_id: project.id,
    now: ctx.now,
  }
}
