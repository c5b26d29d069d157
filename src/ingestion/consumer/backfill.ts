/**
 * Runs the definitions back-fill (src/persons/definition-backfill.ts) in the consumer thread, persons.db's
 * writer, with ingestion first: pages of the event store are fetched in the background (ClickHouse: over
 * HTTP, the thread stays free meanwhile) and applied a slice at a time by the person loop, back to back
 * only while the spool has nothing to read, and otherwise at most one slice every BUSY_SLICE_INTERVAL_MS.
 * It starts once the events the previous run processed but had not stored are stored (the replay after a
 * restart): they were never recorded, and the bound taken at the start must cover them.
 */
import type { Clock } from '../../common/clock.js'
import type { DefinitionBackfill, StoredDefinitionSource } from '../../persons/index.js'
import type { EventScan } from '../../storage/events/scan.js'

/** Events fetched from the store at a time: at most ≈3 KB each in memory. */
export const BACKFILL_PAGE_EVENTS = 1000
/** Events applied in one persons.db transaction (≈1–2 ms of the thread's time; docs/architecture.md). */
export const BACKFILL_SLICE_EVENTS = 100
/** While events arrive, a slice at most this often (a few percent of the thread). */
export const BUSY_SLICE_INTERVAL_MS = 100
const RETRY_MAX_MS = 30_000

export interface BackfillRunnerOptions {
  backfill: DefinitionBackfill
  /** The store to read; null while it is not connected (ClickHouse migrating, or down). */
  scan: () => EventScan | null
  clock: Clock
  log: (level: 'info' | 'warn', msg: string, fields?: Record<string, unknown>) => void
  /** A slice is ready (the person loop may be asleep). */
  wake: () => void
}

interface Page {
  events: StoredDefinitionSource[]
  cursor: string
  offset: number
}

export class BackfillRunner {
  readonly #o: BackfillRunnerOptions
  #done: boolean
  #started = false
  #page: Page | null = null
  #fetching = false
  #closed = false
  #retryMs = 500
  #retry: NodeJS.Timeout | null = null
  #lastSliceAt = Number.NEGATIVE_INFINITY
  #applied = 0
  #announced = false

  constructor(options: BackfillRunnerOptions) {
    this.#o = options
    this.#done = options.backfill.state().done
  }

  get done(): boolean {
    return this.#done
  }

  /** Begins fetching (the caller knows the replay is stored); later calls do nothing. */
  start(): void {
    if (this.#started || this.#done) return
    this.#started = true
    void this.#fetch()
  }

  /** Applies one slice if one is ready and, unless `idle`, the last was long enough ago; true if it did. */
  slice(idle: boolean): boolean {
    const page = this.#page
    if (page === null) return false
    const now = this.#o.clock.now()
    if (!idle && now - this.#lastSliceAt < BUSY_SLICE_INTERVAL_MS) return false
    this.#lastSliceAt = now
    const end = Math.min(page.offset + BACKFILL_SLICE_EVENTS, page.events.length)
    const last = end === page.events.length
    try {
      this.#o.backfill.apply(page.events.slice(page.offset, end), last ? page.cursor : null)
    } catch (error) {
      // persons.db refused (full disk, say): the page is fetched again from the cursor, later.
      this.#page = null
      this.#failed(error)
      return true
    }
    this.#applied += end - page.offset
    page.offset = end
    if (last) {
      this.#page = null
      void this.#fetch()
    }
    return true
  }

  async close(): Promise<void> {
    this.#closed = true
    if (this.#retry) clearTimeout(this.#retry)
  }

  async #fetch(): Promise<void> {
    if (this.#fetching || this.#closed || this.#done) return
    this.#fetching = true
    try {
      const scan = this.#o.scan()
      if (scan === null) {
        // ClickHouse is still being connected to and migrated: not a failure worth a warning.
        return this.#fetchIn(1000)
      }
      let { bound, cursor } = this.#o.backfill.state()
      if (bound === null) {
        bound = await scan.bound()
        this.#o.backfill.begin(bound, this.#o.clock.now())
        // A new data folder: an empty store, nothing to say.
        if (bound === null) return void (this.#done = true)
      }
      if (!this.#announced) {
        this.#announced = true
        this.#o.log('info', 'back-filling event and property definitions from the event store', { resumed: cursor !== null })
      }
      const page = await scan.page(cursor, bound, BACKFILL_PAGE_EVENTS)
      if (this.#closed) return
      if (page.cursor === null) {
        this.#o.backfill.finish(this.#o.clock.now())
        return this.#finished()
      }
      // In the order the consumer processed them, which decides each property's type (ClickHouse pages are in key order).
      const events = page.events.sort((a, b) => a.created - b.created)
      this.#page = { events, cursor: page.cursor, offset: 0 }
      this.#retryMs = 500
      this.#o.wake()
    } catch (error) {
      this.#failed(error)
    } finally {
      this.#fetching = false
    }
  }

  #finished(): void {
    this.#done = true
    this.#o.log('info', 'event and property definitions back-filled', { events: this.#applied })
  }

  #failed(error: unknown): void {
    if (this.#closed) return
    if (this.#retryMs === 500) this.#o.log('warn', 'definitions back-fill paused; retrying', { error: String(error) })
    this.#fetchIn(this.#retryMs)
    this.#retryMs = Math.min(this.#retryMs * 2, RETRY_MAX_MS)
  }

  #fetchIn(ms: number): void {
    this.#retry = setTimeout(() => {
      this.#retry = null
      void this.#fetch()
    }, ms)
  }
}
