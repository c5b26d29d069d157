/**
 * Spool frames: `[u32 LE payload length][u32 LE crc32(payload)][u8 kind][payload]`. The checksum lets the
 * reader tell a torn tail (a crash mid-write) or a corrupted block from a real record, so it never hands
 * half an event to the consumer. A header of nine zero bytes is no frame: it is space the writer zero-filled
 * ahead of its frames (spool/writer.ts), left at the end of a segment by a crash.
 */
import { crc32 } from 'node:zlib'

export const HEADER_BYTES = 9

/**
 * `event`: a CapturedEvent as JSON. `warning`: an IngestionWarning as JSON. `capture`: a request that yielded
 * one event, as its decoded body behind a line of JSON recording what parsing it depended on (frames.ts,
 * encodeCapture); the consumer parses it again. `eventParts`: a CapturedEvent as a line of its properties
 * but `$set`/`$set_once`, then the event with those two as its only properties (frames.ts, eventPartsText);
 * what captures of several events write since `event` frames, which the consumer still reads. `control`: an
 * instruction to the consumer as JSON (ingestion/control.ts: a person deletion or split), applied in spool order.
 */
export const FrameKind = { event: 1, warning: 2, capture: 3, eventParts: 4, control: 5 } as const
export type FrameKindValue = (typeof FrameKind)[keyof typeof FrameKind]

/** Largest payload a frame may declare; anything bigger is treated as corruption. */
export const MAX_FRAME_PAYLOAD = 64 * 1024 * 1024

export function encodeFrame(kind: FrameKindValue, payload: string): Buffer {
  const frame = Buffer.allocUnsafe(HEADER_BYTES + Buffer.byteLength(payload))
  writeFrame(frame, 0, kind, payload)
  return frame
}

/** Writes the frame of `payload` at `at` (`buf` has room: HEADER_BYTES + its UTF-8 length); returns where it ends. */
export function writeFrame(buf: Buffer, at: number, kind: FrameKindValue, payload: string): number {
  const start = at + HEADER_BYTES
  const end = start + buf.write(payload, start, 'utf8')
  buf.writeUInt32LE(end - start, at)
  buf.writeUInt32LE(crc32(buf.subarray(start, end)), at + 4)
  buf[at + 8] = kind
  return end
}

export type FrameRead =
  | { status: 'ok'; kind: number; payload: Buffer; next: number }
  | { status: 'incomplete' }
  | { status: 'unused' }
  | { status: 'corrupt'; reason: string }

/** Reads the frame starting at `offset` of `buf`. */
export function readFrame(buf: Buffer, offset: number): FrameRead {
  if (buf.length - offset < HEADER_BYTES) return { status: 'incomplete' }
  const length = buf.readUInt32LE(offset)
  if (length === 0 && buf.readUInt32LE(offset + 4) === 0 && buf[offset + 8] === 0) return { status: 'unused' }
  if (length > MAX_FRAME_PAYLOAD) return { status: 'corrupt', reason: `frame length ${length} is impossible` }
  const end = offset + HEADER_BYTES + length
  if (end > buf.length) return { status: 'incomplete' }
  const payload = buf.subarray(offset + HEADER_BYTES, end)
  if (crc32(payload) !== buf.readUInt32LE(offset + 4)) return { status: 'corrupt', reason: 'checksum mismatch' }
  const kind = buf[offset + 8]
  if (kind < FrameKind.event || kind > FrameKind.control) return { status: 'corrupt', reason: `unknown frame kind ${kind}` }
  return { status: 'ok', kind, payload, next: end }
}
