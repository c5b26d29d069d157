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

/**
 * A read's frames as numbers, not objects: frame i is its kind and where its payload lies in one of the
 * buffers the reader read it into. A read lives through the person step (tens of milliseconds), so objects of its own
 * per frame (the frame, its payload view, its end cursor: ≈160 bytes) outlived two of the consumer's scavenges
 * and were promoted. Under /batch/ 100 on ClickHouse (8 s of load and its drain) the consumer promoted 70 MB with
 * them and 13 MB without, its scavenges took 548 → 328 ms and it ran 2 mark-compacts instead of 11.
 * `frames()` makes them for a few dozen frames at a time, which die young.
 */
export class FrameBatch {
  count = 0
  /** Payload bytes of all the frames. */
  bytes = 0
  /** Where the last frame ends (the start position while there is none). */
  end: Cursor
  readonly #buffers: ArrayBuffer[] = []
  readonly #kinds = new Uint8Array(FRAMES_PER_BATCH)
  readonly #bufferOf = new Uint16Array(FRAMES_PER_BATCH)
  readonly #starts = new Uint32Array(FRAMES_PER_BATCH)
  readonly #lengths = new Uint32Array(FRAMES_PER_BATCH)
  /** Where the last frame starts. */
  #lastStart: Cursor

  constructor(start: Cursor) {
    this.end = start
    this.#lastStart = start
  }

  /** Adds a frame (at most FRAMES_PER_BATCH); keeps its payload's bytes, not the view. */
  add(frame: SpoolFrame): void {
    this.#lastStart = this.end
    const { buffer, byteOffset, length } = frame.payload
    const last = this.#buffers.length - 1
    if (last < 0 || this.#buffers[last] !== buffer) this.#buffers.push(buffer as ArrayBuffer)
    const i = this.count++
    this.#kinds[i] = frame.kind
    this.#bufferOf[i] = this.#buffers.length - 1
    this.#starts[i] = byteOffset
    this.#lengths[i] = length
    this.bytes += length
    this.end = frame.end
  }

  /**
   * Takes the last frame out when it is a control frame (a read ends at one, LaneReader.read): its payload
   * and where it lies. The batch then ends where the control frame starts.
   */
  takeControl(): { payload: Buffer; start: Cursor; end: Cursor } | null {
    const i = this.count - 1
    if (i < 0 || this.#kinds[i] !== FrameKind.control) return null
    const [{ payload }] = this.frames(i, i + 1)
    const taken = { payload, start: this.#lastStart, end: this.end }
    this.count = i
    this.bytes -= this.#lengths[i]
    this.end = this.#lastStart
    return taken
  }

  /** Frames `from` to `to` (exclusive) as objects, for decodeFrames. */
  frames(from = 0, to = this.count): Array<{ kind: number; payload: Buffer }> {
    const out: Array<{ kind: number; payload: Buffer }> = []
    for (let i = from; i < Math.min(to, this.count); i++) {
      out.push({ kind: this.#kinds[i], payload: Buffer.from(this.#buffers[this.#bufferOf[i]], this.#starts[i], this.#lengths[i]) })
    }
    return out
  }
}

export function readBatch(reader: LaneReader, maxBytes: number, onCorrupt: (r: CorruptionReport) => void, until?: Cursor): FrameBatch {
  const batch = new FrameBatch(reader.position)
  while (batch.count < FRAMES_PER_BATCH && batch.bytes < maxBytes) {
    const room = batch.count === 0 ? FIRST_STEP : Math.ceil((maxBytes - batch.bytes) / (batch.bytes / batch.count))
    const wanted = Math.min(room, READ_STEP, FRAMES_PER_BATCH - batch.count)
    const step = reader.read(wanted, onCorrupt, until)
    for (const frame of step) batch.add(frame)
    if (step.length < wanted) break // nothing more durable (or `until` reached)
  }
  return batch
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
    // Control frames are the consumer's to apply (consumer.ts); a replay passes over them.
    if (frame.kind === FrameKind.control) continue
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
