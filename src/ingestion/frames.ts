/**
 * Parsed events → spool frames in one buffer, with per-event offsets and a hash of (project, distinct_id)
 * for spike detection. Built wherever the payload was parsed (main thread or a pool worker), so the main
 * thread only slices views out of the buffer and never serialises events itself.
 *
 * A request that yields one event (every /capture/ of an SDK) is spooled as the body it came in, not as the
 * event (encodeCapture): serialising the normalised event again was the largest part of the main thread's
 * work per /capture/ after the socket's. The body goes behind one line of JSON recording everything parsing
 * depended on, so the consumer's parse of it (decodeCapture) gives the same event and warnings.
 */
import { crc32 } from 'node:zlib'
import { isPlainObject, setOwn, type JsonObject } from '../common/json.js'
import { encodeFrame, FrameKind, HEADER_BYTES, writeFrame } from './spool/format.js'
import { engageRule } from './engage.js'
import { parsePayload, type ParsedPayload } from './parse.js'
import { COOKIELESS_SENTINEL } from '../schemas/captured-event.js'
import type { CapturedEvent } from './types.js'

export interface EncodedPayload {
  teamId: number
  historical: boolean
  /** Event frames back to back; event i is frames[offsets[i] .. offsets[i+1]). */
  frames: Uint8Array
  offsets: Uint32Array
  /** FNV-1a of `team:distinct_id` per event. */
  keyHashes: Uint32Array
  /** Warning frames (silent drops, timestamp problems), spooled with the events. */
  warningFrames: Uint8Array
  /** `details.reason` of each drop, for metrics. */
  dropReasons: string[]
}

export function fnv1a(text: string): number {
  let hash = 0x811c9dc5
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i)
    hash = Math.imul(hash, 0x01000193)
  }
  return hash >>> 0
}

/**
 * Spike detection's key: the event's project and distinct id; a cookieless event's IP and user agent as well, since
 * all of them share one sentinel id until the consumer hashes those into ids of their own.
 */
function spikeKey(event: CapturedEvent): number {
  const { properties: p } = event
  const device = event.distinct_id === COOKIELESS_SENTINEL ? `:${String(p.$ip)}:${String(p.$raw_user_agent)}` : ''
  return fnv1a(`${event.team_id}:${event.distinct_id}${device}`)
}

export function encodePayload(parsed: ParsedPayload): EncodedPayload {
  const n = parsed.events.length
  // Every frame written into one buffer: a Buffer per frame and their concatenation cost more than the
  // texts' UTF-8 lengths measured first.
  const texts: string[] = new Array(n)
  const offsets = new Uint32Array(n + 1)
  const keyHashes = new Uint32Array(n)
  let total = 0
  for (let i = 0; i < n; i++) {
    const event = parsed.events[i]
    texts[i] = eventPartsText(event)
    offsets[i] = total
    total += HEADER_BYTES + Buffer.byteLength(texts[i])
    keyHashes[i] = spikeKey(event)
  }
  offsets[n] = total
  const frames = Buffer.allocUnsafe(total)
  for (let i = 0; i < n; i++) writeFrame(frames, offsets[i], FrameKind.eventParts, texts[i])
  const warningFrames = Buffer.concat(parsed.warnings.map((w) => encodeFrame(FrameKind.warning, JSON.stringify(w))))
  return { teamId: parsed.teamId, historical: parsed.historical, frames, offsets, keyHashes, warningFrames, dropReasons: dropReasons(parsed) }
}

/**
 * An `eventParts` payload: the JSON of the event's properties but `$set`/`$set_once`, a newline (never part
 * of JSON.stringify's output), then the JSON of the event with those two as its only properties. The first
 * line is the text of the properties the consumer stores (they go with `$set`/`$set_once` rebuilt at their
 * end), so it copies it instead of serialising them again when person processing changed none of them: 6–8 %
 * less of the consumer's time a /batch/ event, for ≈0.3–0.4 µs more here (docs/performance.md).
 */
export function eventPartsText(event: CapturedEvent): string {
  const { properties } = event
  let rest = properties
  const sets: JsonObject = {}
  if (Object.hasOwn(properties, '$set') || Object.hasOwn(properties, '$set_once')) {
    rest = {}
    for (const key of Object.keys(properties)) setOwn(key === '$set' || key === '$set_once' ? sets : rest, key, properties[key])
  }
  const head: CapturedEvent = { uuid: event.uuid, event: event.event, distinct_id: event.distinct_id, properties: sets, timestamp: event.timestamp, team_id: event.team_id, now: event.now }
  return `${JSON.stringify(rest)}\n${JSON.stringify(head)}`
}

/**
 * The event of an `eventParts` payload, its properties whole again (`$set`/`$set_once` last), and the text of
 * those properties but `$set`/`$set_once` (a view of `payload`).
 */
export function decodeEventParts(payload: Buffer): { event: CapturedEvent; propertiesText: Buffer } {
  // One decode of the whole payload, parsed as two slices of it: ≈2 % of the consumer's time an event.
  const text = payload.toString('utf8')
  const at = text.indexOf('\n')
  if (at < 0) throw new Error('the event record has no line of properties')
  // The spool holds valid UTF-8 (written from strings): as many characters as bytes means all are ASCII, and
  // the newline's index is its byte offset too.
  const newline = text.length === payload.length ? at : payload.indexOf(0x0a)
  const propertiesText = payload.subarray(0, newline)
  const properties: unknown = JSON.parse(text.slice(0, at))
  const event = JSON.parse(text.slice(at + 1)) as CapturedEvent
  if (!isPlainObject(properties) || !isPlainObject(event) || !isPlainObject(event.properties)) throw new Error('the event record is not two JSON objects')
  const sets = event.properties
  for (const key of Object.keys(sets)) setOwn(properties, key, sets[key])
  event.properties = properties
  return { event, propertiesText }
}

function dropReasons(parsed: ParsedPayload): string[] {
  return parsed.warnings.filter((w) => w.type === 'event_dropped').map((w) => String(w.details.reason))
}

/** The inputs of parsePayload besides the body, as capture resolved them; with the body they determine its result. */
export interface CaptureInputs {
  teamId: number
  anonymizeIps: boolean
  now: number
  ip: string | null
  queryUnderscore: string | null
  /** The UUIDv7 capture gave the event, or null when it came with its own. */
  uuid: string | null
  /** Sent to `/engage/` (events without a name are engage updates there). */
  engage: boolean
}

const NO_FRAMES = new Uint8Array(0)

/**
 * One frame of kind `capture`: `inputs` as a line of JSON, then `body` (the decoded body's UTF-8 bytes).
 * `parsed` is what parsing them gave, with exactly one event; its warnings travel inside the frame.
 */
export function encodeCapture(parsed: ParsedPayload, inputs: CaptureInputs, body: Buffer): EncodedPayload {
  const line = JSON.stringify([inputs.teamId, inputs.anonymizeIps, inputs.now, inputs.ip, inputs.queryUnderscore, inputs.uuid, inputs.engage])
  const lineBytes = Buffer.byteLength(line)
  const payloadBytes = lineBytes + 1 + body.length
  const frame = Buffer.allocUnsafe(HEADER_BYTES + payloadBytes)
  frame.write(line, HEADER_BYTES, 'utf8')
  frame[HEADER_BYTES + lineBytes] = 0x0a
  body.copy(frame, HEADER_BYTES + lineBytes + 1)
  frame.writeUInt32LE(payloadBytes, 0)
  frame.writeUInt32LE(crc32(frame.subarray(HEADER_BYTES)), 4)
  frame[8] = FrameKind.capture
  const event = parsed.events[0]
  return {
    teamId: parsed.teamId,
    historical: parsed.historical,
    frames: frame,
    offsets: Uint32Array.of(0, frame.length),
    keyHashes: Uint32Array.of(spikeKey(event)),
    warningFrames: NO_FRAMES,
    dropReasons: parsed.warnings.length === 0 ? [] : dropReasons(parsed),
  }
}

/** The event and warnings of a `capture` frame's payload: the same parse, with the recorded inputs. */
export function decodeCapture(payload: Buffer): ParsedPayload {
  const newline = payload.indexOf(0x0a)
  if (newline < 0) throw new Error('the capture record has no line of inputs')
  const [teamId, anonymizeIps, now, ip, queryUnderscore, uuid, engage] = JSON.parse(payload.toString('utf8', 0, newline)) as [
    number,
    boolean,
    number,
    string | null,
    string | null,
    string | null,
    boolean | undefined,
  ]
  const project = { id: teamId, anonymizeIps }
  return parsePayload(payload.toString('utf8', newline + 1), {
    now,
    ip,
    queryUnderscore,
    queryToken: null,
    engage: engageRule(engage),
    uuid: () => {
      if (uuid === null) throw new Error('the capture record has no uuid for an event without one')
      return uuid
    },
    resolveProject: () => project,
  })
}
