/**
 * The main thread's side of the consumer: starts the thread, forwards "durable up to here" from the
 * spool writer, keeps the latest stats for /metrics and /_readiness, and restarts the thread if it dies
 * (it resumes from its checkpoints, so nothing is lost or processed twice).
 */
import { access } from 'node:fs/promises'
import { MessageChannel, Worker } from 'node:worker_threads'
import { loadGeoIpData } from '../../geoip/index.js'
import { workerLimits } from '../../pool/index.js'
import { logThreadStart, type Logger } from '../../observability/logger.js'
import { LANES, listSegments } from '../spool/layout.js'
import { holdsDataAt } from '../spool/reader.js'
import type { SpoolWriter } from '../spool/writer.js'
import type { Lane } from '../types.js'
import type { ConsumerStats, FromConsumer, ToConsumer } from './messages.js'
import { Lateness, leftover, StoredCursors } from './lateness.js'
import { PriorityWatch } from './priority-watch.js'
import { RestartBackoff } from './restart-backoff.js'
import type { ConsumerWork } from './starvation.js'
import type { ConsumerWorkerData } from './thread.js'

export type ConsumerSettings = Omit<ConsumerWorkerData, 'activeSegments' | 'durable' | 'geoipPort' | 'storedCursors'>

/** How long an abandoned consumer gets to return from its current store call: SQLite's busy timeout + 2 s. */
const ABANDON_GRACE_MS = 7000
const WORKER_URL = new URL('../../../workers/ingest-consumer.js', import.meta.url)
/**
 * V8 derives a heap's first full-GC thresholds from its maximum size, which for a worker defaults to a share
 * of the machine's memory (≈4 GB on 24 GB): the consumer then carried ≈100 MB of garbage between full GCs,
 * a quarter of the service's peak RSS under /batch/ load. With 1 GB (still ≈40× its live set in the
 * benchmarks) peak RSS of the same work was ≈110 MB lower at no measurable CPU cost. Exceeding it ends only
 * this thread, which restarts from its checkpoints.
 */
const CONSUMER_HEAP_MB = 1024
/**
 * 8 MB semi-spaces where the other threads have 4: the consumer allocates ≈6 KB an event and scavenged 65–90
 * times a second while draining, with ≈1 MB of every 4 MB promoted and a mark-compact every ≈70 ms. Draining
 * a backlog (bench/drain.mjs, with READ_BYTES 1 MB) it stored 47–49 k events/s against 38–43 k, for ≈10 MB
 * more peak RSS; 16 MB semi-spaces drained 53 k but took the process to ≈395 MB (docs/performance.md).
 */
const CONSUMER_YOUNG_MB = 24

export class ConsumerHandle {
  readonly #settings: ConsumerSettings
  readonly #spool: SpoolWriter
  readonly #logger: Logger
  #worker: Worker | null = null
  #stopping = false
  #stopped: Promise<void> | null = null
  #stats: ConsumerStats | null = null
  #watch: PriorityWatch | null = null
  #spawnedAt = 0
  readonly #backoff = new RestartBackoff()
  /** The consumer's sink checkpoints (one buffer for every thread it restarts as) and when each durable position went out. */
  readonly #stored = new StoredCursors()
  readonly #lateness = new Lateness()

  /**
   * Settles once the first thread has published its checkpoints (and what the last run left beyond them is counted
   * as waiting). The server listens only then, but sets the rest of itself up meanwhile: the thread loads its
   * modules on the other core.
   */
  readonly ready: Promise<void>

  private constructor(settings: ConsumerSettings, spool: SpoolWriter, logger: Logger) {
    this.#settings = settings
    this.#spool = spool
    this.#logger = logger
    const firstLive = spool.currentState().segments
    this.ready = this.#spawn().then(() => this.#noteLeftover(firstLive))
    // A failure before anyone awaits `ready` is that await's to report, not an unhandled rejection.
    this.ready.catch(() => undefined)
  }

  static start(settings: ConsumerSettings, spool: SpoolWriter, logger: Logger): ConsumerHandle {
    return new ConsumerHandle(settings, spool, logger)
  }

  get stats(): ConsumerStats | null {
    return this.#stats
  }

  /** Seconds the oldest acknowledged event the event store has not confirmed has waited; 0 when caught up. */
  lagSeconds(): number {
    return this.#lateness.ageMs(this.#stored, performance.now()) / 1000
  }

  get running(): boolean {
    return this.#worker !== null
  }

  durable(lane: Lane, segment: number, offset: number): void {
    this.#lateness.durable(lane, segment, offset, performance.now())
    this.#post({ type: 'durable', lane, segment, offset })
    this.#watch?.wake()
  }

  #post(message: ToConsumer): void {
    this.#worker?.postMessage(message)
  }

  async #spawn(): Promise<void> {
    // libuv's thread pool (the spool's writes) starts with its first task and its threads inherit the scheduling
    // of the thread that started it: start it here, before the consumer thread lowers its own (thread.ts).
    await access(this.#settings.spoolDir)
    const current = this.#spool.currentState()
    const geoip = new MessageChannel()
    const worker = new Worker(WORKER_URL, {
      resourceLimits: workerLimits(CONSUMER_HEAP_MB, CONSUMER_YOUNG_MB),
      workerData: {
        ...this.#settings,
        geoipPort: geoip.port2,
        activeSegments: current.segments,
        durable: current.sizes,
        storedCursors: this.#stored.buffer,
      } satisfies ConsumerWorkerData,
      transferList: [geoip.port2],
    })
    this.#worker = worker
    this.#spawnedAt = performance.now()
    // The thread shares this thread's copy of the GeoIP database (null: it tries, and reports, itself). Read while
    // the thread loads its modules: ≈45 MB, ≈130 ms here, which each start waited for before the thread was made.
    void loadGeoIpData(this.#settings.geoipPath)
      .catch(() => null)
      .then((data) => geoip.port1.postMessage(data))
    logThreadStart(this.#logger, 'consumer')(worker.threadId)
    this.#watch?.stop()
    const { policy, nice } = this.#settings
    const work = (): ConsumerWork => {
      const backlogBytes = this.#stats?.backlogBytes ?? 0
      return { backlogBytes, stored: this.#stats?.stored ?? 0, waiting: backlogBytes > 0 || this.lagSeconds() > 0 }
    }
    this.#watch = PriorityWatch.applies(policy, nice) ? new PriorityWatch(policy, nice, this.#logger, work) : null
    return new Promise((resolve, reject) => {
      let ready = false
      worker.on('message', (message: FromConsumer) => {
        switch (message.type) {
          case 'ready':
            ready = true
            resolve()
            break
          case 'stats':
            this.#stats = message.stats
            break
          case 'freed':
            this.#spool.release(message.bytes)
            break
          case 'log':
            this.#logger[message.level]({ component: 'consumer', ...message.fields }, message.msg)
            break
          case 'stopped':
            break
        }
      })
      worker.on('error', (error) => {
        this.#logger.error({ component: 'consumer', err: error }, 'ingest consumer crashed')
        if (!ready) reject(error)
      })
      worker.on('exit', (code) => {
        this.#worker = null
        if (!ready) reject(new Error(`ingest consumer exited with ${code} before it was ready`))
        if (this.#stopping) return
        // Until the new thread reports, nothing is being stored: readiness and skylark_sink_up must not go on
        // showing the dead thread's last "up", nor the priority watch its count (the new thread warms up anew).
        if (this.#stats) this.#stats = { ...this.#stats, stored: 0, sinkUp: false, lastError: 'the ingest consumer stopped; restarting' }
        const delayMs = this.#backoff.next(performance.now() - this.#spawnedAt)
        this.#logger.error({ component: 'consumer', code, restartInMs: delayMs }, `ingest consumer stopped unexpectedly; restarting in ${delayMs / 1000} s`)
        setTimeout(() => {
          if (!this.#stopping) this.#spawn().catch((error: unknown) => this.#logger.error({ err: error }, 'consumer restart failed'))
        }, delayMs)
      })
    })
  }

  /**
   * Counts the events an earlier run acknowledged and the store has not confirmed as waiting since their
   * oldest spool segment was last written: after a restart the lag reads how late they are, not 0.
   */
  #noteLeftover(firstLive: Record<Lane, number>): void {
    const now = performance.now()
    const { spoolDir } = this.#settings
    for (const lane of LANES) {
      const holdsData = (segment: number, offset: number) => holdsDataAt(spoolDir, lane, segment, offset)
      const left = leftover(listSegments(spoolDir, lane), firstLive[lane], this.#stored.get(lane), holdsData)
      if (left) this.#lateness.leftover(lane, left.end, now - Math.max(0, Date.now() - left.writtenAt))
    }
  }

  /**
   * Asks the consumer to store everything durable, waiting up to `timeoutMs`; after that it abandons
   * retries and the rows stay in the spool for the next start.
   */
  stop(timeoutMs: number): Promise<void> {
    this.#stopping = true
    this.#watch?.stop()
    this.#stopped ??= new Promise<void>((resolve) => {
      const worker = this.#worker
      if (!worker) return resolve()
      const timer = setTimeout(() => {
        this.#logger.warn('consumer did not drain before the shutdown timeout; the spool keeps the rest')
        worker.postMessage({ type: 'abandon' } satisfies ToConsumer)
        // Abandoning ends the thread once its current store call returns. Terminating it while it waits
        // inside better-sqlite3 (a busy lock waits up to 5 s) aborts the whole process, so the hard stop
        // comes only after that wait.
        setTimeout(() => void worker.terminate(), ABANDON_GRACE_MS).unref()
      }, timeoutMs)
      worker.once('exit', () => {
        clearTimeout(timer)
        resolve()
      })
      worker.postMessage({ type: 'stop' } satisfies ToConsumer)
    })
    return this.#stopped
  }
}
