/**
 * The rows between the person loop and the sink loop, packed (one buffer per read), bounded by rows and by
 * bytes so a slow store pauses reading instead of growing this thread's memory. Rows leave in insert-sized
 * batches; they still count against the bounds until the store has them (`settle`), so back-pressure holds
 * while an insert runs.
 */
import { packedLength, type PackedRows } from '../../storage/events/packed-rows.js'
import type { EventDeletion } from '../control.js'
import type { Cursor } from '../spool/layout.js'
import type { Lane } from '../types.js'

/**
 * Byte caps beside the row caps: rows carry ≈0.5–20 KB of properties each, and a queue of 4 × 10,000 rows
 * was most of this thread's heap (peak RSS). 4 MB is ≈1,700 GeoIP-resolved rows per insert: against 8 MB,
 * /batch/ stored as many events per second in alternated runs (25.8 k / 27.5 k vs 26.7 k / 27.2 k for 100
 * events a request) with ≈30 MB less peak RSS (377–383 vs 405–421 MB for 1,000 events a request). Three
 * batches keep the person loop busy while an insert runs.
 */
export const BATCH_BYTES = 4 * 1024 * 1024
const QUEUED_BATCHES = 3

export interface QueueItem {
  lane: Lane
  rows: PackedRows
  bytes: number
  end: Cursor
  queuedAt: number
  /** Re-derived after a restart: written one batch at a time, never into a spanning insert. */
  replay: boolean
  /** Events to delete once these rows, and every row queued before them, are stored. */
  deletion: EventDeletion | null
}

export interface Batch {
  items: QueueItem[]
  rows: PackedRows
  replay: boolean
  /** The last item's deletion: a batch ends at an item with one, so no later row is stored before it runs. */
  deletion: EventDeletion | null
}

export class RowQueue {
  readonly #items: QueueItem[] = []
  readonly #batchRows: number
  readonly #batchBytes: number
  #rows = 0
  #bytes = 0

  constructor(batchRows: number, batchBytes: number) {
    this.#batchRows = batchRows
    this.#batchBytes = batchBytes
  }

  /** Rows queued or being inserted. */
  get rows(): number {
    return this.#rows
  }

  get empty(): boolean {
    return this.#items.length === 0
  }

  /** When the oldest waiting rows were queued (the queue must not be empty). */
  get oldestAt(): number {
    return this.#items[0].queuedAt
  }

  /** The person loop waits while this holds. */
  get atCapacity(): boolean {
    return this.#rows >= Math.max(this.#batchRows * 4, 20_000) || this.#bytes >= this.#batchBytes * QUEUED_BATCHES
  }

  /** A whole insert's worth, or a deletion, is waiting: write now rather than at the flush interval. */
  get batchReady(): boolean {
    return this.#rows >= this.#batchRows || this.#bytes >= this.#batchBytes || this.#items.some((i) => i.deletion !== null)
  }

  push(lane: Lane, rows: PackedRows, end: Cursor, now: number, replay = false, deletion: EventDeletion | null = null): void {
    const bytes = packedLength(rows)
    this.#items.push({ lane, rows, bytes, end, queuedAt: now, replay, deletion })
    this.#rows += rows.count
    this.#bytes += bytes
  }

  /** Takes the oldest items up to one insert's rows and bytes (at least one item). */
  take(): Batch {
    const items: QueueItem[] = []
    let rows = 0
    let bytes = 0
    while (this.#items.length > 0) {
      const next = this.#items[0]
      if (items.length > 0 && (rows + next.rows.count > this.#batchRows || bytes + next.bytes > this.#batchBytes)) break
      items.push(this.#items.shift()!)
      rows += next.rows.count
      bytes += next.bytes
      if (next.deletion) break
    }
    const packed = { parts: items.flatMap((i) => i.rows.parts), count: rows }
    return { items, rows: packed, replay: items.some((i) => i.replay), deletion: items.at(-1)!.deletion }
  }

  /** The store has a taken batch: its rows stop counting against the bounds. */
  settle(batch: Batch): void {
    for (const item of batch.items) {
      this.#rows -= item.rows.count
      this.#bytes -= item.bytes
    }
  }
}
