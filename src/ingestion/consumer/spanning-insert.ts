/**
 * The ClickHouse INSERT the sink loop keeps open across batches (consumer.ts): up to `spanMs` while the
 * consumer is behind, at least `minSpanMs` while it keeps up (commitIn). The request itself is
 * storage/events/clickhouse-stream.ts, in the insert thread. It remembers where each appended stretch of a lane
 * ends, not the rows, so the sink checkpoint can move there once the INSERT succeeds while the rows themselves
 * are already let go.
 */
import { packedLength, type PackedRows } from '../../storage/events/packed-rows.js'
import type { Cursor } from '../spool/layout.js'
import type { Lane } from '../types.js'

/**
 * Rows after which an INSERT ends before its span is over. ClickHouse holds an open INSERT's rows in memory
 * until it ends, so its peak grows with the rows of a span, not its length: 2.5 s of /batch/ at ≈55 k events/s
 * (≈140 k rows) took it from 752 to 1,914 MB on an earlier machine, and 5 s at ≈20–26 k here from ≈500 to
 * ≈960 MB, while 3 s here (≈60–80 k rows) cost ≈10 MB. A faster machine ends its spans sooner instead.
 */
export const MAX_SPAN_ROWS = 65_536
/**
 * Packed bytes after which an INSERT ends: ClickHouse's peak grows with the bytes it holds, and 65,536 rows of
 * browser events (≈2.6 KB each, packed) are ≈170 MB, so this cap leaves them to MAX_SPAN_ROWS and keeps spans
 * of larger events (exceptions with stack traces, say) to about the same memory. Shorter or longer spans of
 * those rows cost ClickHouse more CPU an event, merges included (docs/performance-rounds.md, "Round
 * `…b49dddbaa4`").
 */
export const MAX_SPAN_BYTES = 192 * 1024 * 1024

export interface StreamTarget {
  spanMs: number
  /**
   * While the consumer keeps up, an INSERT stays open at least this long before it commits, so that a steady
   * stream of batches makes a part per `minSpanMs`, not one per batch (0: it commits after every batch).
   */
  minSpanMs: number
  /** The INSERT ends once it holds this many rows (MAX_SPAN_ROWS but in tests)… */
  maxRows: number
  /** …or this many bytes of packed rows (MAX_SPAN_BYTES but in tests). */
  maxBytes: number
  /** False until the store is connected: batches go one per INSERT (with the usual retries) until then. */
  ready(): boolean
  /**
   * Adds rows to the open INSERT (opening one); they are not stored before commit(). Resolves with the same
   * rows, whose buffers may be others (handed to the insert thread and back): those are the ones to reuse.
   */
  append(rows: PackedRows): Promise<PackedRows>
  /** Ends the open INSERT, which holds the `rows` appended since the last commit; throws if any may be missing. */
  commit(rows: number): Promise<void>
}

/** Where a stored stretch of a lane ends: what the sink checkpoint moves to. */
export interface Stretch {
  lane: Lane
  end: Cursor
}

/** What one INSERT stored once its commit succeeded. */
export interface Committed {
  rows: number
  stretches: Stretch[]
}

export class SpanningInsert {
  readonly #target: StreamTarget
  readonly #now: () => number
  readonly #onFailed: () => void
  #stretches: Stretch[] = []
  #rows = 0
  #bytes = 0
  #openedAt: number | null = null
  /** The previous INSERT while it commits (never rejects: a failure is kept in `#failure`). */
  #committing: Promise<void> | null = null
  #failure: { error: unknown } | null = null

  /** `onFailed` runs when an INSERT committing in the background fails (settled() then throws). */
  constructor(target: StreamTarget, now: () => number, onFailed: () => void) {
    this.#target = target
    this.#now = now
    this.#onFailed = onFailed
  }

  get ready(): boolean {
    return this.#target.ready()
  }

  get open(): boolean {
    return this.#openedAt !== null
  }

  get failed(): boolean {
    return this.#failure !== null
  }

  /** An INSERT is committing or has failed: settled() has something to wait for or to throw. */
  get busy(): boolean {
    return this.#committing !== null || this.#failure !== null
  }

  /**
   * Milliseconds until the open INSERT is to commit (0 or less: now; 0 when none is open). It commits once it
   * holds as many rows or bytes as one may, or its span is over; the consumer `caughtUp`, once it has been open
   * StreamTarget.minSpanMs, or when no events will have arrived for a while (`quietLeft`, ms): then no batch is
   * coming that it could wait for, and light traffic (or the end of a backlog) is stored as soon as without it.
   */
  commitIn(caughtUp: boolean, quietLeft: number): number {
    if (this.#openedAt === null || this.#rows >= this.#target.maxRows || this.#bytes >= this.#target.maxBytes) return 0
    const openFor = this.#now() - this.#openedAt
    const spanLeft = this.#target.spanMs - openFor
    return caughtUp ? Math.min(spanLeft, this.#target.minSpanMs - openFor, quietLeft) : spanLeft
  }

  /**
   * Throws (see lost()) when the rows may be lost (nothing of this INSERT can be confirmed any more). Resolves
   * with the rows as StreamTarget.append gave them back.
   */
  async append(rows: PackedRows, stretches: readonly Stretch[]): Promise<PackedRows> {
    this.#openedAt ??= this.#now()
    // Measured before the append: it may hand the buffers to the insert thread, which leaves them empty here.
    this.#bytes += packedLength(rows)
    const back = await this.#target.append(rows).catch((error: unknown) => {
      throw lost(error)
    })
    for (const { lane, end } of stretches) this.#stretches.push({ lane, end })
    this.#rows += rows.count
    return back
  }

  /**
   * Ends the open INSERT and lets it commit while the next one already takes appends: ClickHouse writes its
   * part when an INSERT ends (≈0.2 s for a second of /batch/ load), and waiting for that filled the row queue
   * and stalled the person loop. One INSERT commits at a time (this waits for the previous one first), so
   * `onStored` runs in order. Throws when the previous INSERT failed. With none committing, the commit is sent
   * before this yields (see Consumer's sink loop on why yielding matters).
   */
  async commit(onStored: (committed: Committed) => void): Promise<void> {
    if (this.busy) await this.settled()
    const committed = { rows: this.#rows, stretches: this.#stretches }
    this.#stretches = []
    this.#rows = 0
    this.#bytes = 0
    this.#openedAt = null
    this.#committing = this.#target.commit(committed.rows).then(
      () => {
        this.#committing = null
        onStored(committed)
      },
      (error: unknown) => {
        this.#committing = null
        this.#failure = { error }
        this.#onFailed()
      },
    )
  }

  /** Resolves once no INSERT is committing; throws when one failed (any of its rows may be missing). */
  async settled(): Promise<void> {
    await this.#committing
    if (this.#failure) throw lost(this.#failure.error)
  }
}

/**
 * A spanning INSERT failed, so some of its rows may be missing, and they are no longer queued. The sink
 * checkpoint has not moved past them: the consumer thread stops, and its handle starts a new one, whose restart
 * path re-derives them from the spool and writes them one batch per INSERT, with the usual retries and
 * dead-lettering of rows the store refuses.
 */
function lost(error: unknown): Error {
  return new Error(`a spanning ClickHouse insert failed (${error instanceof Error ? error.message : String(error)}); restarting from the checkpoints`)
}
