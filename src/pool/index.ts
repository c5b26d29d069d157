/**
 * The piscina worker pool, behind typed methods. Work goes here only when it pays for the ~66 µs hop
 * measured on this machine: large /batch/ bodies and large flag sets. A full queue is answered 503 with
 * Retry-After rather than queueing without bound.
 */
import { setFlagsFromString } from 'node:v8'
import type { ResourceLimits } from 'node:worker_threads'
import type { Piscina } from 'piscina'
import { AppError } from '../common/errors.js'
import { requireOnUse } from '../common/on-use.js'

/**
 * V8 sizes a worker's old generation from the machine's memory (≈4 GB here) and lets garbage pile up
 * towards it; a cap far above any task's live heap (a maximum-size /batch/ body parses to well under
 * 200 MB) makes it collect sooner. Same reasoning and figure as the ingest consumer's limit.
 */
const WORKER_HEAP_MB = 1024
/**
 * The young generation too: by default it grows to ≈3 × 16 MB per thread under /batch/ load. 12 MB (4 MB
 * semi-spaces, as the main thread gets from `--max-semi-space-size=4`) took 40–60 MB off peak RSS with the
 * same throughput. Used by the consumer's SQLite/ClickHouse insert thread.
 */
export const WORKER_YOUNG_MB = 12
/**
 * Pool workers parse bodies of over 256 KB, whose ≈3–5 MB of objects outlived 4 MB semi-spaces. With 8 MB
 * ones /batch/ 1,000 on ClickHouse accepted 101–108 instead of 84–85 requests/s and stored 57.5–58.8 k
 * instead of 55.7–56.1 k events/s (alternated runs), for ≈5 MB more peak RSS.
 */
const POOL_YOUNG_MB = 24

let flagCleared = false

/**
 * A worker's heap limits, as given. V8 applies `--max-semi-space-size` (the server's flag for its main
 * thread) over every worker's `maxYoungGenerationSizeMb`, and reads it only when a thread's heap is created:
 * cleared once the main thread runs, it keeps sizing the main thread while each worker gets its own size.
 */
export function workerLimits(maxOldGenerationSizeMb: number, maxYoungGenerationSizeMb: number): ResourceLimits {
  if (!flagCleared) {
    setFlagsFromString('--max-semi-space-size=0')
    flagCleared = true
  }
  return { maxOldGenerationSizeMb, maxYoungGenerationSizeMb }
}

export interface PoolOptions {
  size: number
  maxQueue: number
  /** Given to every worker: where the data folder is, so workers can open SQLite read-only. */
  workerData: { dataDir: string }
  /** Told each worker's thread id as it starts (for logs). */
  onThreadStart?: (threadId: number) => void
}

/**
 * Started by its first task, not with the server: most servers never get a body over 256 KB nor a project over
 * FLAGS_INLINE_MAX flags, and a started pool thread cost ≈1.5 s of CPU and 31 MB of idle RSS (203 → 172 MB
 * with POOL_SIZE=0). The first such request waits for the thread to load its modules, once.
 */
export class WorkerPool {
  readonly #options: PoolOptions
  #pool: Piscina | null = null
  #closed = false

  constructor(options: PoolOptions) {
    this.#options = options
  }

  get queued(): number {
    return this.#pool?.queueSize ?? 0
  }

  #start(): Piscina {
    const { size, maxQueue, workerData, onThreadStart } = this.#options
    const { Piscina: Pool } = requireOnUse('piscina') as typeof import('piscina')
    const pool = new Pool({
      filename: new URL('../../workers/index.js', import.meta.url).href,
      minThreads: size,
      maxThreads: size,
      maxQueue,
      idleTimeout: 60_000,
      workerData,
      resourceLimits: workerLimits(WORKER_HEAP_MB, POOL_YOUNG_MB),
    })
    if (onThreadStart) pool.on('workerCreate', (worker: { id: number }) => onThreadStart(worker.id))
    return pool
  }

  /** Runs a named task of workers/index.ts. */
  async run<T>(name: string, task: unknown, transferList: ArrayBuffer[] = []): Promise<T> {
    try {
      // A request still in flight when shutdown closed the pool must not start it again.
      if (this.#closed) throw new Error('the worker pool is closed')
      this.#pool ??= this.#start()
      return (await this.#pool.run(task, { name, transferList })) as T
    } catch (error) {
      throw this.#mapError(error)
    }
  }

  #mapError(error: unknown): Error {
    if (error instanceof Error && /queue is at limit/i.test(error.message)) {
      return new AppError('service_unavailable', { detail: 'The service is overloaded; try again shortly.', retryAfter: 1 })
    }
    return error instanceof Error ? error : new Error(String(error))
  }

  async close(): Promise<void> {
    this.#closed = true
    await this.#pool?.destroy()
  }
}
