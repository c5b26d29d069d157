/**
 * A person-loop read: up to FRAMES_PER_BATCH frames holding about `maxBytes`, so one batch of large events
 * (recordings, big property sets) can't take hundreds of MB of the consumer's heap. The reader counts
 * frames, not bytes: it is asked for FIRST_STEP frames, then for as many as the average frame size so far
 * leaves room for (≤ READ_STEP); more than `maxBytes` only when frames differ much in size. `decodeFrames`
 * turns a read into events and ingestion warnings.
 */
import { decodeCapture, decodeEventParts } from '../frames.js'
import { FrameKind } from '../spool/format.js'
import type { Cursor } from '../spool/layout.js'
import type { CorruptionReport, LaneReader, SpoolFrame } from '../spool/reader.js'
import type { CapturedEvent, IngestionWarning } from '../types.js'

export const FRAMES_PER_BATCH = 2000
/**
 * A read's events are all alive while persons process them, and with 4 MB of frames they outlived the
 * consumer's scavenges and were promoted. 1 MB (≈1,000 browser events) drained a backlog at 47–49 k events/s
 * against 45 k with 4 MB, and ≈20 MB less peak RSS (with the consumer's 24 MB young generation, handle.ts).
 */
export const READ_BYTES = 1024 * 1024
const FIRST_STEP = 16
const READ_STEP = 256

export function readBatch(reader: LaneReader, maxBytes: number, onCorrupt: (r: CorruptionReport) => void, until?: Cursor): SpoolFrame[] {
  const frames: SpoolFrame[] = []
  let bytes = 0
  while (frames.length < FRAMES_PER_BATCH && bytes < maxBytes) {
    const room = frames.length === 0 ? FIRST_STEP : Math.ceil((maxBytes - bytes) / (bytes / frames.length))
    const wanted = Math.min(room, READ_STEP, FRAMES_PER_BATCH - frames.length)
    const step = reader.read(wanted, onCorrupt, until)
    for (const frame of step) {
      frames.push(frame)
      bytes += frame.payload.length
    }
    if (step.length < wanted) break // nothing more durable (or `until` reached)
  }
  return frames
}

/**
 * Parses each frame (a `capture` frame is parsed as capture parsed its body, giving its one event and its
 * warnings); one that does not parse goes to `onUnreadable` (the consumer dead-letters it) and the rest go on.
 * `propertiesTexts[i]` is the text of `events[i]`'s properties but `$set`/`$set_once` where its frame had it
 * (`eventParts`), else null.
 */
export function decodeFrames(
  frames: ReadonlyArray<{ kind: number; payload: Buffer }>,
  onUnreadable: (payload: Buffer, error: unknown) => void,
): { events: CapturedEvent[]; propertiesTexts: Array<Buffer | null>; warnings: IngestionWarning[] } {
  const events: CapturedEvent[] = []
  const propertiesTexts: Array<Buffer | null> = []
  const warnings: IngestionWarning[] = []
  const add = (event: CapturedEvent, propertiesText: Buffer | null = null) => {
    events.push(event)
    propertiesTexts.push(propertiesText)
  }
  for (const frame of frames) {
    try {
      if (frame.kind === FrameKind.eventParts) {
        const { event, propertiesText } = decodeEventParts(frame.payload)
        add(event, propertiesText)
        continue
      }
      if (frame.kind === FrameKind.capture) {
        const parsed = decodeCapture(frame.payload)
        for (const e of parsed.events) add(e)
        for (const w of parsed.warnings) warnings.push(w)
        continue
      }
      const value = JSON.parse(frame.payload.toString('utf8'))
      if (frame.kind === FrameKind.event) add(value as CapturedEvent)
      else warnings.push(value as IngestionWarning)
    } catch (error) {
      onUnreadable(frame.payload, error)
    }
  }
  return { events, propertiesTexts, warnings }
}
