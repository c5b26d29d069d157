/**
 * Writes rows to the event store until it succeeds: retryable failures (store down, disk full) back off
 * exponentially up to a cap and try the same rows again; permanent failures (the store rejects the data)
 * are narrowed down by halving the batch, so only the rows that can never be stored go to the dead-letter
 * store and everything else is written.
 */
import { packedRows, unpackRows, type PackedRows } from '../../storage/events/packed-rows.js'
import { SinkError, type EventSink } from '../../storage/events/types.js'
import type { DeadLetterInput } from '../../storage/dead-letters.js'

/** An event store that also takes rows packed by the consumer (ThreadedSink). */
export interface PackedSink extends EventSink {
  writePacked(rows: PackedRows): Promise<void>
}

export interface SinkWriterOptions {
  sink: () => PackedSink | null
  retryMaxMs: number
  deadLetter: (entries: DeadLetterInput[]) => void
  onFailure: (error: Error) => void
  onSuccess: () => void
  /** True once shutdown gave up waiting: stop retrying and leave the rows to the next start. */
  abandoned: () => boolean
  sleep?: (ms: number) => Promise<void>
}

export class SinkWriter {
  readonly #o: SinkWriterOptions
  readonly #sleep: (ms: number) => Promise<void>

  constructor(options: SinkWriterOptions) {
    this.#o = options
    this.#sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)))
  }

  /** Resolves true when every row is stored or dead-lettered, false when abandoned at shutdown. */
  write(rows: PackedRows, lane: string): Promise<boolean> {
    return this.#retrying(() => this.#writeIsolating(rows, lane))
  }

  /** Deletes the project's events of these distinct ids, retrying as writes do; false when abandoned at shutdown. */
  deleteEvents(teamId: number, distinctIds: readonly string[]): Promise<boolean> {
    return this.#retrying(async () => {
      const sink = this.#o.sink()
      if (!sink) throw new SinkError('the event store is not ready yet', false)
      await sink.deleteEvents(teamId, distinctIds)
    })
  }

  async #retrying(attempt: () => Promise<void>): Promise<boolean> {
    let delay = 50
    for (;;) {
      try {
        await attempt()
        this.#o.onSuccess()
        return true
      } catch (error) {
        this.#o.onFailure(error as Error)
        if (this.#o.abandoned()) return false
        await this.#sleep(delay)
        // Checked again: shutdown may have given up while this thread was blocked in the failed call.
        if (this.#o.abandoned()) return false
        delay = Math.min(delay * 2, this.#o.retryMaxMs)
      }
    }
  }

  async #writeIsolating(rows: PackedRows, lane: string): Promise<void> {
    const sink = this.#o.sink()
    if (!sink) throw new SinkError('the event store is not ready yet', false)
    try {
      await sink.writePacked(rows)
    } catch (error) {
      if (!(error instanceof SinkError) || !error.permanent) throw error
      const all = unpackRows(rows)
      if (all.length === 1) {
        this.#o.deadLetter([{ lane, stage: 'sink', error: error.message, payload: JSON.stringify(all[0]) }])
        return
      }
      const middle = Math.ceil(all.length / 2)
      for (const half of [all.slice(0, middle), all.slice(middle)]) await this.#writeIsolating(packedRows(half), lane)
    }
  }
}
