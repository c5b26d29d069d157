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
import type { JsonText } from '../../common/json-text.js'
import type { EventRow } from './types.js'

const STRINGS_PER_ROW = 11

/** A row to pack: the consumer's rows carry their properties in pieces, written without joining them first. */
export type RowToPack = Omit<EventRow, 'properties'> & { properties: string | JsonText }

/** Packed rows in one or more buffers, back to back in this order, and how many rows they hold. */
export interface PackedRows {
  parts: readonly Buffer[]
  count: number
}

/** The rows packed in one part. */
export function packedRows(rows: readonly RowToPack[]): PackedRows {
  return { parts: rows.length === 0 ? [] : [packRows(rows)], count: rows.length }
}

/** Bytes the rows' parts hold together. */
export function packedLength(rows: PackedRows): number {
  let bytes = 0
  for (const part of rows.parts) bytes += part.length
  return bytes
}

/**
 * `size` bytes in `spare` when it is large enough (a buffer the insert thread handed back), else in a new
 * buffer; either way with an ArrayBuffer of its own (never a slice of Buffer's shared pool), so it can be
 * transferred.
 */
export function transferable(size: number, spare: ArrayBuffer | null): Buffer {
  return spare && spare.byteLength >= size ? Buffer.from(spare, 0, size) : Buffer.allocUnsafeSlow(size)
}

/** Packs into `spare` when it is large enough, else into a new buffer (see transferable). */
export function packRows(rows: readonly RowToPack[], spare: ArrayBuffer | null = null): Buffer {
  const buf = transferable(packedSize(rows), spare)
  writeRows(buf, 0, rows)
  return buf
}

/**
 * Packs rows as they are made, a few at a time, into one growing buffer: the consumer's rows then die
 * young. Held as row objects from one read to its insert, a read's strings outlived the scavenges of the
 * consumer's heap and were promoted (bench/micro/consumer.mjs: half of the young generation survived each
 * scavenge, ≈3 KB an event promoted, and a mark-compact every ≈70 ms).
 */
export class RowPacker {
  #buf: Buffer
  #at = 0
  #count = 0

  /**
   * Packs into `spare` (a buffer whose rows the store has) while it has room: a new buffer for every read
   * was ≈4 MB of external memory each time, and V8 answers that much with a mark-compact.
   */
  constructor(capacity: number, spare: ArrayBuffer | null = null) {
    this.#buf = spare && spare.byteLength >= capacity ? Buffer.from(spare) : Buffer.allocUnsafeSlow(Math.max(capacity, 4096))
  }

  /**
   * Row by row against a bound of its size (3 bytes per UTF-16 unit), measured exactly only near the end of
   * the buffer: measuring every string before writing it was ≈4 % of the consumer thread.
   */
  add(rows: readonly RowToPack[]): void {
    for (const row of rows) {
      if (this.#at + rowSize(row, utf8Bound) > this.#buf.length) this.#makeRoom(rowSize(row, byteLength))
      this.#at = writeRow(this.#buf, this.#at, row)
    }
    this.#count += rows.length
  }

  #makeRoom(size: number): void {
    if (this.#at + size <= this.#buf.length) return
    const bigger = Buffer.allocUnsafeSlow(Math.max(this.#buf.length * 2, this.#at + size))
    this.#buf.copy(bigger, 0, 0, this.#at)
    this.#buf = bigger
  }

  finish(): PackedRows {
    return { parts: this.#count === 0 ? [] : [this.#buf.subarray(0, this.#at)], count: this.#count }
  }
}

function packedSize(rows: readonly RowToPack[]): number {
  let size = 0
  for (const r of rows) size += rowSize(r, byteLength)
  return size
}

/** A row's packed size with each string's bytes given by `bytes`. */
function rowSize(r: RowToPack, bytes: (s: string | JsonText | null) => number): number {
  const g = r.groups
  return (
    24 + 4 * STRINGS_PER_ROW +
    bytes(r.uuid) + bytes(r.event) + bytes(r.distinct_id) + bytes(r.person_id) + bytes(r.properties) +
    bytes(g[0]) + bytes(g[1]) + bytes(g[2]) + bytes(g[3]) + bytes(g[4]) + bytes(r.elements_chain)
  )
}

/** At least a string's UTF-8 bytes: no UTF-16 unit takes more than 3 (a pair takes 4). */
function utf8Bound(s: string | JsonText | null): number {
  return s === null ? 0 : typeof s === 'string' ? 3 * s.length : s.bound
}

/** Writes the rows from `at` (the buffer has room: packedSize); returns where they end. */
function writeRows(buf: Buffer, at: number, rows: readonly RowToPack[]): number {
  for (const r of rows) at = writeRow(buf, at, r)
  return at
}

function writeRow(buf: Buffer, at: number, r: RowToPack): number {
  at = buf.writeDoubleLE(r.team_id, at)
  at = buf.writeDoubleLE(r.timestamp, at)
  at = buf.writeDoubleLE(r.created_at, at)
  at = writeText(buf, at, r.uuid)
  at = writeText(buf, at, r.event)
  at = writeText(buf, at, r.distinct_id)
  at = writeText(buf, at, r.person_id)
  at = writeText(buf, at, r.properties)
  for (const group of r.groups) at = writeText(buf, at, group)
  return writeText(buf, at, r.elements_chain)
}

function writeText(buf: Buffer, at: number, s: string | JsonText | null): number {
  if (s === null) return buf.writeInt32LE(-1, at)
  // Most rows' groups and elements chain: no call into the encoder for them.
  if (s === '') return buf.writeInt32LE(0, at)
  const n = typeof s === 'string' ? buf.write(s, at + 4) : s.write(buf, at + 4) - (at + 4)
  buf.writeInt32LE(n, at)
  return at + 4 + n
}

function byteLength(s: string | JsonText | null): number {
  return s === null ? 0 : typeof s === 'string' ? Buffer.byteLength(s) : s.byteLength()
}

/** The rows back as objects (a store that refused a batch is retried with halves of it; tests). */
export function unpackRows(packed: PackedRows): EventRow[] {
  const rows: EventRow[] = []
  for (const part of packed.parts) {
    const r = new PackedReader(part)
    while (!r.done) {
      const [team_id, timestamp, created_at] = [r.number(), r.number(), r.number()]
      const [uuid, event, distinct_id, person_id, properties] = [r.text()!, r.text()!, r.text()!, r.text()!, r.text()!]
      const groups = [r.text()!, r.text()!, r.text()!, r.text()!, r.text()!] as EventRow['groups']
      rows.push({ uuid, team_id, event, distinct_id, person_id, properties, timestamp, created_at, groups, elements_chain: r.text()! })
    }
  }
  return rows
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
    const n = Math.max(0, this.#length())
    this.#at += n
    return n
  }

  text(): string | null {
    const n = this.#length()
    if (n <= 0) return n === 0 ? '' : null
    const value = this.#buf.toString('utf8', this.#at, this.#at + n)
    this.#at += n
    return value
  }

  /** The next string's UTF-8 bytes, a view of the packed buffer (an empty view for a null string). */
  bytes(): Buffer {
    const n = Math.max(0, this.#length())
    const view = this.#buf.subarray(this.#at, this.#at + n)
    this.#at += n
    return view
  }

  /** Reads the next string's length prefix (-1: null) and moves past it. */
  #length(): number {
    const n = this.#buf.readInt32LE(this.#at)
    this.#at += 4
    return n
  }
}
