/**
 * The sink loop's spanning INSERT on ClickHouse (consumer.ts): when it commits, and what its outcome means to
 * the consumer thread.
 *
 * Spans exist because ClickHouse writes a part per INSERT and merges small parts again and again: with one
 * INSERT per batch its merges took more CPU than the inserts themselves. So the sink loop appends batches to one
 * INSERT (spanning-insert.ts) and commits it when its span is over, or sooner once the consumer has caught up:
 * then holding it open would only delay when acknowledged events become visible (docs/architecture.md,
 * "Spanning inserts"). The sink checkpoint moves only once a commit succeeds; a failed one ends the thread,
 * whose restart writes those events again from the spool.
 */
import type { Clock } from '../../common/clock.js'
import type { Lane } from '../types.js'
import type { LaneState } from './held-controls.js'
import { BATCH_BYTES } from './row-queue.js'
import { SpanningInsert, type Committed, type StreamTarget } from './spanning-insert.js'

/** The consumer's settings a span reads (ConsumerOptions). */
export interface SpanSettings {
  /** Most bytes of row text in one insert (default BATCH_BYTES): less unread spool than this is "caught up". */
  batchBytes?: number
  /** No durable report from the writer for this long: no events are arriving. */
  flushIntervalMs: number
  clock: Clock
  log: (level: 'warn', msg: string, fields: Record<string, unknown>) => void
}

/** What a span asks of the consumer and tells it. */
export interface SpanHooks {
  /** The consumer is draining to stop: a failed commit then leaves its events to the next start. */
  stopping: () => boolean
  /** An INSERT committing in the background failed (the sink loop is to wake and see it). */
  onFailed: () => void
  /** A commit succeeded: its rows are stored and the sink checkpoints may move past its stretches. */
  onStored: (committed: Committed) => void
}

/** Durable spool not yet read, over all lanes. */
export function backlogBytes(lanes: ReadonlyMap<Lane, LaneState>): number {
  let backlog = 0
  for (const state of lanes.values()) backlog += state.reader.backlogBytes()
  return backlog
}

export class SinkSpan {
  readonly insert: SpanningInsert
  readonly #lanes: ReadonlyMap<Lane, LaneState>
  readonly #o: SpanSettings
  readonly #hooks: SpanHooks
  /** When the writer last reported new durable data (clock ms; at first, the start): when events last arrived. */
  #lastDurableAt: number

  constructor(target: StreamTarget, lanes: ReadonlyMap<Lane, LaneState>, settings: SpanSettings, hooks: SpanHooks) {
    this.#lanes = lanes
    this.#o = settings
    this.#hooks = hooks
    this.insert = new SpanningInsert(target, () => settings.clock.now(), hooks.onFailed)
    this.#lastDurableAt = settings.clock.now()
  }

  /** The writer made more of the spool durable: events are still arriving. */
  arrived(): void {
    this.#lastDurableAt = this.#o.clock.now()
  }

  /** SpanningInsert.commitIn, "quiet" once no events have arrived for a flush interval. */
  commitIn(): number {
    return this.insert.commitIn(this.#caughtUp(), this.#lastDurableAt + this.#o.flushIntervalMs - this.#o.clock.now())
  }

  /** Starts committing the open INSERT (see SpanningInsert.commit); false as for settled(). */
  commit(): Promise<boolean> {
    return this.settled(this.insert.commit(this.#hooks.onStored))
  }

  /**
   * Waits for a committing INSERT: false when it failed while shutting down (its events stay in the spool);
   * otherwise its failure ends this thread (SpanningInsert's lost()), to be restarted from the checkpoints.
   */
  async settled(settling = this.insert.settled()): Promise<boolean> {
    try {
      await settling
      return true
    } catch (error) {
      if (!this.#hooks.stopping()) throw error
      this.#o.log('warn', 'the last spanning insert failed at shutdown; its events are written at the next start', { error: String(error) })
      return false
    }
  }

  /**
   * Less than one insert's worth of durable spool is unread: the consumer keeps up, and holding the INSERT
   * open would only delay visibility (with traffic arriving all the time, the backlog is never quite zero).
   */
  #caughtUp(): boolean {
    return backlogBytes(this.#lanes) < (this.#o.batchBytes ?? BATCH_BYTES)
  }
}
