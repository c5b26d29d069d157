/**
 * Spike detection: a token bucket per (project, distinct_id). A key that sends faster than its bucket
 * refills has the excess routed to the overflow lane, which the consumer serves last, so one noisy user
 * cannot delay everyone else. Historical migrations never pass through here.
 */
export interface SpikeOptions {
  burst: number
  ratePerSec: number
  /** Keys tracked at most; full buckets are forgotten first when the map grows past it. */
  maxKeys?: number
}

interface Bucket {
  tokens: number
  at: number
}

export class SpikeDetector {
  readonly #burst: number
  readonly #rate: number
  readonly #maxKeys: number
  readonly #buckets = new Map<number, Bucket>()

  constructor(options: SpikeOptions) {
    this.#burst = options.burst
    this.#rate = options.ratePerSec / 1000
    this.#maxKeys = options.maxKeys ?? 200_000
  }

  /** Takes one token for the key; false means the event goes to the overflow lane. */
  allow(key: number, now: number): boolean {
    let bucket = this.#buckets.get(key)
    if (!bucket) {
      if (this.#buckets.size >= this.#maxKeys) this.#sweep(now)
      bucket = { tokens: this.#burst, at: now }
      this.#buckets.set(key, bucket)
    } else {
      bucket.tokens = Math.min(this.#burst, bucket.tokens + (now - bucket.at) * this.#rate)
      bucket.at = now
    }
    if (bucket.tokens < 1) return false
    bucket.tokens -= 1
    return true
  }

  get size(): number {
    return this.#buckets.size
  }

  #sweep(now: number): void {
    for (const [key, b] of this.#buckets) {
      if (b.tokens + (now - b.at) * this.#rate >= this.#burst) this.#buckets.delete(key)
    }
    // Everyone is busy: forget the oldest half rather than grow without bound.
    if (this.#buckets.size >= this.#maxKeys) {
      let drop = this.#buckets.size / 2
      for (const key of this.#buckets.keys()) {
        if (drop-- <= 0) break
        this.#buckets.delete(key)
      }
    }
  }
}
