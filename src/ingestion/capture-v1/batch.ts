/**
 * A capture v1 body (`{created_at, historical_migration?, batch: [{event, uuid, distinct_id, timestamp,
 * session_id?, window_id?, options?, properties?}]}`) → the same `CapturedEvent`s a /batch/ body gives, and
 * the answer v1 SDKs read: one result per event uuid (rust/capture/src/v1/analytics/: types.rs, process.rs,
 * response.rs). Pure, like parse.ts: the clock, the client address, the project and the request's headers are
 * inputs, so it runs the same on the main thread and in pool workers.
 *
 * What refuses the whole batch (400): a body serde could not read into v1's types (a field missing or of
 * another type), an empty batch, `created_at` that is not RFC 3339, an empty, invalid or repeated uuid. What
 * drops one event, answered `{"result": "drop", "details": <why>}` and recorded as an `event_dropped`
 * warning: `$performance_event`, an empty name or one over 200 bytes, an empty distinct id or one over 200
 * bytes, a timestamp that is not RFC 3339, properties that are not an object, unreadable options. A distinct
 * id from v1's list of placeholders (`anonymous`, `null`, `0`…) is kept without person processing and
 * answered `{"result": "warning", "details": "person_processing_disabled"}`.
 */
import { AppError } from '../../common/errors.js'
import { normaliseUuid } from '../../common/ids.js'
import { isPlainObject, MAX_NESTING, nestingExceeds, type JsonObject } from '../../common/json.js'
import { encodePayload, type EncodedPayload } from '../frames.js'
import { fillIp, parseJson, type ParsedPayload } from '../parse.js'
import { parseRfc3339, resolveTimestamp } from '../timestamps.js'
import type { CapturedEvent, IngestionWarning } from '../types.js'
import type { V1Envelope } from './request.js'

/** Rust capture v1's CAPTURE_V1_MAX_EVENT_NAME_LENGTH and CAPTURE_V1_DISTINCT_ID_MAX_SIZE, in UTF-8 bytes. */
const MAX_NAME_BYTES = 200
const MAX_DISTINCT_ID_BYTES = 200

/** Rust capture v1's ILLEGAL_DISTINCT_IDS: compared trimmed and case-insensitively. */
const ILLEGAL_DISTINCT_IDS = new Set([
  '0',
  '00000000-0000-0000-0000-000000000000',
  '[object object]',
  'anonymous',
  'anonymous-user',
  'backend',
  'distinct_id',
  'distinctid',
  'email',
  'false',
  'guest',
  'id',
  'nan',
  'none',
  'not_authenticated',
  'null',
  'system',
  'true',
  'undefined',
  'user',
])

export interface V1ParseContext {
  now: number
  /** Client address: first X-Forwarded-For entry, else the socket address. */
  ip: string | null
  project: { id: number; anonymizeIps: boolean }
  lib: V1Envelope['lib']
  /** The request's PostHog-Request-Timestamp (ms). */
  sentAt: number
}

export interface V1Parsed {
  parsed: ParsedPayload
  /** The 200 answer's text: `{"results": {<uuid>: {"result", "details"?}}}`, in the batch's order. */
  response: string
}

function invalid(detail: string): AppError {
  return new AppError('invalid_payload', { detail: `Invalid payload: ${detail}` })
}

function typeName(value: unknown): string {
  if (value === null) return 'null'
  return Array.isArray(value) ? 'array' : typeof value
}

/** What serde's derive refuses on one event: the whole body fails to deserialise. */
function checkShape(item: unknown, index: number): asserts item is JsonObject {
  if (!isPlainObject(item)) throw invalid(`batch[${index}] must be an object, not ${typeName(item)}.`)
  for (const field of ['event', 'uuid', 'distinct_id', 'timestamp']) {
    if (typeof item[field] !== 'string') {
      throw invalid(`batch[${index}].${field} ${item[field] === undefined ? 'is missing' : `must be a string, not ${typeName(item[field])}`}.`)
    }
  }
  for (const field of ['session_id', 'window_id']) {
    const value = item[field]
    if (value !== undefined && value !== null && typeof value !== 'string') throw invalid(`batch[${index}].${field} must be a string, not ${typeName(value)}.`)
  }
}

function coerceBool(value: unknown): boolean | undefined {
  if (typeof value === 'boolean') return value
  if (typeof value === 'number') return value !== 0
  if (typeof value === 'string') {
    const text = value.trim().toLowerCase()
    if (text === 'true' || text === '1') return true
    if (text === 'false' || text === '0') return false
  }
  return undefined
}

function coerceString(value: unknown): string | undefined {
  if (typeof value === 'string') return value
  return Number.isSafeInteger(value) ? String(value) : undefined
}

/** `options` → the event properties they stand for (types.rs build_property_injections); null if unreadable. */
const OPTIONS: ReadonlyArray<[option: string, property: string, coerce: (value: unknown) => unknown]> = [
  ['cookieless_mode', '$cookieless_mode', coerceBool],
  ['disable_skew_correction', '$ignore_sent_at', coerceBool],
  ['product_tour_id', '$product_tour_id', coerceString],
  ['process_person_profile', '$process_person_profile', coerceBool],
]

function readOptions(options: unknown): Array<[string, unknown]> | null {
  if (options === undefined || options === null) return []
  if (!isPlainObject(options)) return null
  const out: Array<[string, unknown]> = []
  for (const [option, property, coerce] of OPTIONS) {
    const raw = options[option]
    if (raw === undefined || raw === null) continue
    const value = coerce(raw)
    if (value === undefined) return null
    out.push([property, value])
  }
  return out
}

/** Whether `text` is over `max` UTF-8 bytes; encoded only when its length can't tell (a UTF-16 unit is 1–3 bytes). */
function overBytes(text: string, max: number): boolean {
  if (text.length > max) return true
  if (text.length * 3 <= max) return false
  return Buffer.byteLength(text) > max
}

/** Why one event is dropped (process.rs validate_event, then the options), or null when it is kept. */
function dropReason(item: JsonObject, distinctId: string, time: number | null): string | null {
  const name = item.event as string
  if (name === '$performance_event') return 'dropped_performance_event'
  if (name === '') return 'missing_event_name'
  if (overBytes(name, MAX_NAME_BYTES)) return 'event_name_too_long'
  if (distinctId === '') return 'missing_distinct_id'
  if (overBytes(distinctId, MAX_DISTINCT_ID_BYTES)) return 'distinct_id_too_large'
  if (time === null) return 'invalid_event_timestamp'
  if (item.properties !== undefined && !isPlainObject(item.properties)) return 'malformed_event_properties'
  return null
}

export function parseV1Batch(text: string, ctx: V1ParseContext): V1Parsed {
  const body = parseJson(text)
  if (nestingExceeds(body, MAX_NESTING)) throw invalid(`objects and arrays may nest at most ${MAX_NESTING} levels deep.`)
  if (!isPlainObject(body)) throw invalid('the body must be a JSON object.')
  if (typeof body.created_at !== 'string') throw invalid(`created_at ${body.created_at === undefined ? 'is missing' : 'must be a string'}.`)
  // serde's `bool` with a default: absent is false, null is no bool
  if (body.historical_migration !== undefined && typeof body.historical_migration !== 'boolean') throw invalid('historical_migration must be a boolean.')
  if (body.capture_internal !== undefined && body.capture_internal !== null && typeof body.capture_internal !== 'boolean') {
    throw invalid('capture_internal must be a boolean.')
  }
  if (!Array.isArray(body.batch)) throw invalid(`batch ${body.batch === undefined ? 'is missing' : 'must be a list of events'}.`)
  const items: unknown[] = body.batch
  items.forEach(checkShape)
  if (items.length === 0) throw invalid('the batch holds no events.')
  if (parseRfc3339(body.created_at) === null) throw invalid('created_at is not an RFC 3339 time.')

  const teamId = ctx.project.id
  const events: CapturedEvent[] = []
  const warnings: IngestionWarning[] = []
  const results: string[] = []
  const seen = new Set<string>()
  for (const item of items as JsonObject[]) {
    const uuidText = (item.uuid as string).trim()
    if (uuidText === '') throw invalid('an event has an empty uuid.')
    const uuid = normaliseUuid(uuidText)
    if (uuid === null) throw invalid(`the event uuid ${JSON.stringify(uuidText.slice(0, 64))} is not a UUID.`)
    if (seen.has(uuid)) throw invalid(`the event uuid ${uuid} appears more than once in the batch.`)
    seen.add(uuid)

    const distinctId = (item.distinct_id as string).trim()
    const time = parseRfc3339(item.timestamp as string)
    const options = readOptions(item.options)
    const reason = dropReason(item, distinctId, time) ?? (options === null ? 'invalid_options' : null)
    if (reason !== null) {
      results.push(`"${uuid}":{"result":"drop","details":"${reason}"}`)
      const event = (item.event as string).slice(0, MAX_NAME_BYTES)
      warnings.push({ team_id: teamId, type: 'event_dropped', source: 'capture', details: { reason, event, uuid }, timestamp: ctx.now })
      continue
    }
    const illegal = ILLEGAL_DISTINCT_IDS.has(distinctId.toLowerCase())
    results.push(illegal ? `"${uuid}":{"result":"warning","details":"person_processing_disabled"}` : `"${uuid}":{"result":"ok"}`)
    events.push(capturedEvent(item, uuid, distinctId, time as number, options as Array<[string, unknown]>, illegal, ctx, warnings))
  }
  const parsed: ParsedPayload = { teamId, historical: body.historical_migration === true, events, warnings }
  return { parsed, response: `{"results":{${results.join(',')}}}` }
}

/**
 * The event as ingestion takes it: the client's properties with what v1 sends beside them written in (they win
 * over the client's own keys of those names, as in Rust capture's splice), `$ip` as on every capture route, and
 * the time corrected by the request's clock unless the event opted out.
 */
function capturedEvent(
  item: JsonObject,
  uuid: string,
  distinctId: string,
  time: number,
  options: Array<[string, unknown]>,
  illegal: boolean,
  ctx: V1ParseContext,
  warnings: IngestionWarning[],
): CapturedEvent {
  // The object is this request's own (fresh from JSON.parse), so it is completed in place, not copied.
  const properties = (item.properties as JsonObject | undefined) ?? {}
  if (typeof item.session_id === 'string') properties.$session_id = item.session_id
  if (typeof item.window_id === 'string') properties.$window_id = item.window_id
  for (const [property, value] of options) properties[property] = value
  if (ctx.lib) {
    properties.$lib = ctx.lib.name
    properties.$lib_version = ctx.lib.version
  }
  // Rust capture's force_disable_person_processing, which ingestion honours as this property's false.
  if (illegal) properties.$process_person_profile = false
  fillIp(properties, ctx.ip, ctx.project.anonymizeIps)

  const name = item.event as string
  const ts = resolveTimestamp({ timestamp: time, sentAt: ctx.sentAt, ignoreSentAt: properties.$ignore_sent_at === true, now: ctx.now })
  for (const w of ts.warnings) {
    warnings.push({ team_id: ctx.project.id, type: w.type, source: 'capture', details: { ...w.details, event: name, distinct_id: distinctId }, timestamp: ctx.now })
  }
  return {
    uuid,
    event: name,
    distinct_id: distinctId.replace(/\u0000/g, '\uFFFD'),
    properties,
    timestamp: ts.ms,
    team_id: ctx.project.id,
    now: ctx.now,
  }
}

/** parseV1Batch, framed for the spool as /batch/ events are (one `eventParts` frame an event). */
export function encodeV1Batch(text: string, ctx: V1ParseContext): { encoded: EncodedPayload; response: string } {
  const { parsed, response } = parseV1Batch(text, ctx)
  return { encoded: encodePayload(parsed), response }
}
