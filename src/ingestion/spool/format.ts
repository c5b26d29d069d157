/**
 * Spool frames: `[u32 LE payload length][u32 LE crc32(payload)][u8 kind][payload]`. The checksum lets the
 * reader tell a torn tail (a crash mid-write) or a corrupted block from a real record, so it never hands
 * half an event to the consumer.
 */
import { crc32 } from 'node:zlib'

export const HEADER_BYTES = 9

export const FrameKind = { event: 1, warning: 2 } as const
export type FrameKindValue = (typeof FrameKind)[keyof typeof FrameKind]

/** Largest payload a frame may declare; anything bigger is treated as corruption. */
export const MAX_FRAME_PAYLOAD = 64 * 1024 * 1024

export function encodeFrame(kind: FrameKindValue, payload: string): Buffer {
  const length = Buffer.byteLength(payload)
  const frame = Buffer.allocUnsafe(HEADER_BYTES + length)
  frame.write(payload, HEADER_BYTES, 'utf8')
  frame.writeUInt32LE(length, 0)
  frame.writeUInt32LE(crc32(frame.subarray(HEADER_BYTES)), 4)
  frame[8] = kind
  return frame
}

export type FrameRead =
  | { status: 'ok'; kind: number; payload: Buffer; next: number }
  | { status: 'incomplete' }
  | { status: 'corrupt'; reason: string }

/** Reads the frame starting at `offset` of `buf`. */
export function readFrame(buf: Buffer, offset: number): FrameRead {
  if (buf.length - offset < HEADER_BYTES) return { status: 'incomplete' }
  const length = buf.readUInt32LE(offset)
  if (length > MAX_FRAME_PAYLOAD) return { status: 'corrupt', reason: `frame length ${length} is impossible` }
  const end = offset + HEADER_BYTES + length
  if (end > buf.length) return { status: 'incomplete' }
  const payload = buf.subarray(offset + HEADER_BYTES, end)
  if (crc32(payload) !== buf.readUInt32LE(offset + 4)) return { status: 'corrupt', reason: 'checksum mismatch' }
  const kind = buf[offset + 8]
  if (kind !== FrameKind.event && kind !== FrameKind.warning) return { status: 'corrupt', reason: `unknown frame kind ${kind}` }
  return { status: 'ok', kind, payload, next: end }
}
