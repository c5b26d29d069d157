/**
 * Parsed events → spool frames in one buffer, with per-event offsets and a hash of (project, distinct_id)
 * for spike detection. Built wherever the payload was parsed (main thread or a pool worker), so the main
 * thread only slices views out of the buffer and never serialises events itself.
 */
import { encodeFrame, FrameKind, HEADER_BYTES, writeFrame } from './spool/format.js'
import type { ParsedPayload } from './parse.js'

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
    texts[i] = JSON.stringify(event)
    offsets[i] = total
    total += HEADER_BYTES + Buffer.byteLength(texts[i])
    keyHashes[i] = fnv1a(`${event.team_id}:${event.distinct_id}`)
  }
  offsets[n] = total
  const frames = Buffer.allocUnsafe(total)
  for (let i = 0; i < n; i++) writeFrame(frames, offsets[i], FrameKind.event, texts[i])
  const warningFrames = Buffer.concat(parsed.warnings.map((w) => encodeFrame(FrameKind.warning, JSON.stringify(w))))
  const dropReasons = parsed.warnings.filter((w) => w.type === 'event_dropped').map((w) => String(w.details.reason))
  return { teamId: parsed.teamId, historical: parsed.historical, frames, offsets, keyHashes, warningFrames, dropReasons }
}
