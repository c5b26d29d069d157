/**
 * The ClickHouse INSERT the sink loop keeps open across batches while the consumer is behind (consumer.ts;
 * the request itself is storage/events/clickhouse-stream.ts, in the insert thread). It remembers where each
 * appended stretch of a lane ends, not the rows, so the sink checkpoint can move there once the INSERT
 * succeeds while the rows themselves are already let go.
 */
import type { EventRow } from '../../storage/events/types.js'
import type { Cursor } from '../spool/layout.js'
import type { Lane } from '../types.js'

export interface StreamTarget {
  spanMs: number
  /** False until the store is connected: batches go one per INSERT (with the usual retries) until then. */
  ready(): boolean
  /** Adds rows to the open INSERT (opening one); they are not stored before commit(). */
  append(rows: readonly EventRow[]): Promise<void>
  /** Ends the open INSERT, which holds the `rows` appended since the last commit; throws if any may be missing. */
  commit(rows: number): Promise<void>
}

/** Where a stored stretch of a lane ends: what the sink checkpoint moves to. */
export interface Stretch {
  lane: Lane
  end: Cursor
}

export class SpanningInsert {
  readonly #target: StreamTarget
  readonly #now: () => number
  #stretches: Stretch[] = []
  #rows = 0
  #openedAt: number | null = null

  constructor(target: StreamTarget, now: () => number) {
    this.#target = target
    this.#now = now
  }

  get ready(): boolean {
    return this.#target.ready()
  }

  get open(): boolean {
    return this.#openedAt !== null
  }

  /** Milliseconds left of the open INSERT's span (0 when none is open). */
  spanLeft(): number {
    return this.#openedAt === null ? 0 : this.#openedAt + this.#target.spanMs - this.#now()
  }

  /** Throws when the rows may be lost (nothing of this INSERT can be confirmed any more). */
  async append(rows: readonly EventRow[], stretches: readonly Stretch[]): Promise<void> {
    this.#openedAt ??= this.#now()
    await this.#target.append(rows)
    for (const { lane, end } of stretches) this.#stretches.push({ lane, end })
    this.#rows += rows.length
  }

  /** Ends the INSERT: what it stored, or a throw when any of it may be missing. */
  async commit(): Promise<{ rows: number; stretches: Stretch[] }> {
    const stored = { rows: this.#rows, stretches: this.#stretches }
    this.#stretches = []
    this.#rows = 0
    this.#openedAt = null
    await this.#target.commit(stored.rows)
    return stored
  }
}
