/**
 * Where experiment statistics run. Two variants have exact closed forms (well under a millisecond), so
 * they run inline; three or more need ~0.15–0.5 s of seeded Monte Carlo, which must not block the main
 * thread, so they go to the worker pool when there is one. Results are kept in a small LRU keyed by the
 * whole task (seed and counts): the same data asked for again is answered without recomputing, and two
 * identical requests in flight share one computation.
 */
import { unwrapOutcome, computeStats, type StatsOutcome, type StatsResult, type StatsTask } from './stats-task.js'

export type StatsOffload = (task: StatsTask) => Promise<StatsOutcome>

/** Variants from which a task is sent to the pool (the Monte Carlo cases). */
export const OFFLOAD_FROM_VARIANTS = 3

export class StatsRunner {
  readonly #offload: StatsOffload | null
  readonly #capacity: number
  readonly #cache = new Map<string, Promise<StatsResult>>()

  constructor(offload: StatsOffload | null = null, capacity = 256) {
    this.#offload = offload
    this.#capacity = capacity
  }

  run(task: StatsTask): Promise<StatsResult> {
    const key = JSON.stringify(task)
    const cached = this.#cache.get(key)
    if (cached) {
      this.#cache.delete(key)
      this.#cache.set(key, cached)
      return cached
    }
    const offload = this.#offload
    const pending =
      offload && task.variants.length >= OFFLOAD_FROM_VARIANTS
        ? offload(task).then(unwrapOutcome)
        : new Promise<StatsResult>((resolve) => resolve(computeStats(task)))
    this.#cache.set(key, pending)
    if (this.#cache.size > this.#capacity) this.#cache.delete(this.#cache.keys().next().value as string)
    pending.catch(() => this.#cache.delete(key))
    return pending
  }
}
