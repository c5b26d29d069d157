/**
 * Event rows packed into one buffer for the insert thread (sink-thread.ts). The buffer is transferred,
 * not copied, and lives outside both threads' JS heaps: a structured clone of a batch (≈4,000 row objects)
 * was 7 % of the consumer thread, and the insert thread then held the whole batch as objects while it
 * inserted (its heap grew to ≈70 MB between collections). Unpacked one row at a time, each row's strings
 * are garbage right after its insert.
 *
 * Per row: team_id, timestamp, created_at as float64; then uuid, event, distinct_id, person_id, properties,
 * group_0…group_4, elements_chain, each as an int32 byte length (-1 = null) and its UTF-8 bytes.
 */
import type { EventRow } from './types.js'

const STRINGS_PER_ROW = 11

/** Packs into `spare` when it is large enough (a buffer the insert thread handed back), else into a new one. */
export function packRows(rows: readonly EventRow[], spare: ArrayBuffer | null = null): Buffer {
  let size = 0
  for (const r of rows) {
    const g = r.groups
    size += 24 + 4 * STRINGS_PER_ROW
    size += byteLength(r.uuid) + byteLength(r.event) + byteLength(r.distinct_id) + byteLength(r.person_id) + byteLength(r.properties)
    size += byteLength(g[0]) + byteLength(g[1]) + byteLength(g[2]) + byteLength(g[3]) + byteLength(g[4]) + byteLength(r.elements_chain)
  }
  // Its own ArrayBuffer (never a slice of Buffer's shared pool), so it can be transferred.
  const buf = spare && spare.byteLength >= size ? Buffer.from(spare, 0, size) : Buffer.allocUnsafeSlow(size)
  let at = 0
  const text = (s: string | null): void => {
    if (s === null) {
      at = buf.writeInt32LE(-1, at)
      return
    }
    const n = buf.write(s, at + 4)
    buf.writeInt32LE(n, at)
    at += 4 + n
  }
  for (const r of rows) {
    at = buf.writeDoubleLE(r.team_id, at)
    at = buf.writeDoubleLE(r.timestamp, at)
    at = buf.writeDoubleLE(r.created_at, at)
    text(r.uuid)
    text(r.event)
    text(r.distinct_id)
    text(r.person_id)
    text(r.properties)
    for (const group of r.groups) text(group)
    text(r.elements_chain)
  }
  return buf
}

function byteLength(s: string | null): number {
  return s === null ? 0 : Buffer.byteLength(s)
}

/** Reads packed rows field by field, in the order packRows wrote them. */
export class PackedReader {
  readonly #buf: Buffer
  #at = 0

  constructor(buf: Buffer) {
    this.#buf = buf
  }

  get done(): boolean {
    return this.#at >= this.#buf.length
  }

  number(): number {
    const value = this.#buf.readDoubleLE(this.#at)
    this.#at += 8
    return value
  }

  /** Where the next field starts: after skipText(), where the skipped bytes end. */
  get position(): number {
    return this.#at
  }

  /** Steps over the next string without decoding it; returns its byte length (a null string has none). */
  skipText(): number {
    const n = this.#buf.readInt32LE(this.#at)
    this.#at += 4
    if (n <= 0) return 0
    this.#at += n
    return n
  }

  text(): string | null {
    const n = this.#buf.readInt32LE(this.#at)
    this.#at += 4
    if (n <= 0) return n === 0 ? '' : null
    const value = this.#buf.toString('utf8', this.#at, this.#at + n)
    this.#at += n
    return value
  }
}
