/**
 * Packed rows (packed-rows.ts) → ClickHouse RowBinary: every string is its length as LEB128 and its bytes
 * copied out of the packed buffer, numbers and times fixed-width little-endian, UUIDs 16 bytes.
 *
 * TabSeparated, before, scanned every field for the bytes it escapes and wrote every time as text: 3.5–4.8 µs
 * a row on the insert thread against 1.7–2.0 µs here (alternated, same rows). ClickHouse 18.16 reads
 * RowBinary as the newest servers do, and spent about the same CPU on either format.
 */
import type { ServerFeatures } from './clickhouse-schema.js'
import { PackedReader } from './packed-rows.js'
import { SinkError } from './types.js'

/**
 * A chunk ends after CHUNK_ROWS rows or once it holds CHUNK_BYTES, so that it stays below glibc's 128 KB mmap
 * threshold (MALLOC_MMAP_THRESHOLD_, bin/skylark.js) unless its last row is over 32 KB. A chunk over the
 * threshold is a mapping of its own: every page of it faults when first written, and it is unmapped when
 * collected. 64 browser events (≈2.5 KB each as stored) made ≈158 KB chunks, and page faults were 29 % of the
 * insert thread's CPU under /batch/ on ClickHouse (perf); below the threshold a chunk reuses the thread's malloc
 * arena (docs/performance-rounds.md, "Round `…675e202c4f`").
 */
const CHUNK_ROWS = 64
const CHUNK_BYTES = 96 * 1024
/** DateTime is seconds from 1970 in a UInt32: times are clamped to 1970…2106-02-07 06:28:14 (the text formats' bound). */
const MAX_DATETIME_MS = 4294967295000
/** Per row in packed order: uuid, event, distinct_id, person_id, properties, $group_0…4, elements_chain. */
const STRINGS = 11
/** uuid and person_id, of those strings, are UUID columns. */
const isUuid = (s: number) => s === 0 || s === 3
const UUID_TEXT = 36
/**
 * Per row after the strings: team_id Int64 8, then DateTime64(6) timestamp and created_at 8 each, or DateTime
 * timestamp 4, timestamp_ms Int64 8 and DateTime created_at 4; _timestamp DateTime 4. 28 bytes either way.
 */
const FIXED_BYTES = 28
/** Strings up to this long are copied byte by byte: Buffer#copy makes a view of the source for each call. */
const SHORT = 48

/** The INSERT's column list, in the order rowBinary writes them. */
export function insertColumns(features: ServerFeatures): string {
  const columns = ['uuid', 'event', 'distinct_id', 'person_id', 'properties', '`$group_0`', '`$group_1`', '`$group_2`', '`$group_3`', '`$group_4`']
  columns.push('elements_chain', 'team_id', 'timestamp', ...(features.dateTime64 ? [] : ['timestamp_ms']), 'created_at', '_timestamp')
  return columns.join(', ')
}

/** Hex digit → its value; -1 for any other byte. */
const HEX = new Int8Array(256).fill(-1)
for (let i = 0; i < 16; i++) HEX['0123456789abcdef'.charCodeAt(i)] = HEX['0123456789ABCDEF'.charCodeAt(i)] = i
/** Where each of a UUID text's 16 bytes goes: ClickHouse stores it as two UInt64, each little-endian. */
const UUID_ORDER = [7, 6, 5, 4, 3, 2, 1, 0, 15, 14, 13, 12, 11, 10, 9, 8]

/** The offsets of a UUID text's 16 pairs of hex digits (between them the dashes at 8, 13, 18 and 23). */
const UUID_PAIRS = [0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34]

/** Writes the UUID text `buf[start, start + length)` at `at` as ClickHouse's 16 bytes. */
function writeUuid(out: Buffer, at: number, buf: Buffer, start: number, length: number): void {
  let ok = length === UUID_TEXT && buf[start + 8] === 0x2d && buf[start + 13] === 0x2d && buf[start + 18] === 0x2d && buf[start + 23] === 0x2d
  for (let b = 0; ok && b < 16; b++) {
    const high = HEX[buf[start + UUID_PAIRS[b]]]
    const low = HEX[buf[start + UUID_PAIRS[b] + 1]]
    ok = high >= 0 && low >= 0
    out[at + UUID_ORDER[b]] = (high << 4) | low
  }
  // Capture and the persons stage only ever write canonical UUIDs: anything else is data no retry will fix.
  if (!ok) throw new SinkError(`not a UUID: ${JSON.stringify(buf.toString('utf8', start, start + length))}`, true)
}

function varintLength(n: number): number {
  let bytes = 1
  while (n >= 0x80) {
    n = Math.floor(n / 0x80)
    bytes++
  }
  return bytes
}

function writeVarint(out: Buffer, at: number, n: number): number {
  while (n >= 0x80) {
    out[at++] = (n & 0x7f) | 0x80
    n = Math.floor(n / 0x80)
  }
  out[at++] = n
  return at
}

/** Writes an integer of at most 53 bits as a little-endian two's-complement Int64. */
function writeInt64(out: Buffer, at: number, n: number): number {
  if (!Number.isSafeInteger(n)) throw new SinkError(`not an integer this sink can store exactly: ${n}`, true)
  const high = Math.floor(n / 0x100000000)
  out.writeUInt32LE(n - high * 0x100000000, at)
  return out.writeInt32LE(high, at + 4)
}

function clampedMs(ms: number): number {
  if (Number.isNaN(ms)) throw new SinkError('a time that is not a number', true)
  return Math.min(Math.max(Math.trunc(ms), 0), MAX_DATETIME_MS - 1000)
}

/** A time as the column takes it: DateTime64(6), microseconds in an Int64; DateTime, seconds in a UInt32. */
function writeTime(out: Buffer, at: number, ms: number, dateTime64: boolean): number {
  const clamped = clampedMs(ms)
  return dateTime64 ? writeInt64(out, at, clamped * 1000) : out.writeUInt32LE(Math.floor(clamped / 1000), at)
}

/** RowBinary of packed rows, a buffer per chunk (CHUNK_ROWS rows or CHUNK_BYTES), made as the insert's stream pulls. */
export function* rowBinary(packed: Buffer, features: ServerFeatures): Generator<Buffer> {
  const reader = new PackedReader(packed)
  const dateTime64 = features.dateTime64
  const now = Math.floor(Date.now() / 1000)
  // Per row of a chunk: the strings' [start, end) in `packed`; and its three numbers.
  const spans = new Int32Array(CHUNK_ROWS * STRINGS * 2)
  const numbers = new Float64Array(CHUNK_ROWS * 3)
  while (!reader.done) {
    let rows = 0
    let size = 0
    for (; rows < CHUNK_ROWS && size < CHUNK_BYTES && !reader.done; rows++) {
      for (let n = 0; n < 3; n++) numbers[rows * 3 + n] = reader.number()
      for (let s = 0; s < STRINGS; s++) {
        const length = reader.skipText()
        const k = (rows * STRINGS + s) * 2
        spans[k] = reader.position - length
        spans[k + 1] = reader.position
        size += isUuid(s) ? 16 : varintLength(length) + length
      }
      size += FIXED_BYTES
    }
    const out = Buffer.allocUnsafe(size)
    let at = 0
    for (let r = 0; r < rows; r++) {
      for (let s = 0; s < STRINGS; s++) {
        const k = (r * STRINGS + s) * 2
        const start = spans[k]
        const end = spans[k + 1]
        if (isUuid(s)) {
          writeUuid(out, at, packed, start, end - start)
          at += 16
          continue
        }
        at = writeVarint(out, at, end - start)
        if (end - start > SHORT) at += packed.copy(out, at, start, end)
        else for (let i = start; i < end; i++) out[at++] = packed[i]
      }
      const timestamp = numbers[r * 3 + 1]
      at = writeInt64(out, at, numbers[r * 3])
      at = writeTime(out, at, timestamp, dateTime64)
      if (!dateTime64) at = writeInt64(out, at, Math.round(timestamp))
      at = writeTime(out, at, numbers[r * 3 + 2], dateTime64)
      at = out.writeUInt32LE(now, at)
    }
    yield out
  }
}
