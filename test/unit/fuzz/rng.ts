/**
 * A small seeded generator for the fuzz tests. Every case gets its own stream from `(seed, case index)`, so
 * one failing case reproduces alone: `FUZZ_SEED=<seed> FUZZ_CASE=<index>`.
 */

export class Rng {
  #a: number
  #b: number
  #c: number
  #d: number

  constructor(seed: number, stream = 0) {
    // splitmix32 spreads (seed, stream) over sfc32's four words.
    let s = (seed ^ Math.imul(stream + 1, 0x9e3779b9)) >>> 0
    const next = () => {
      s = (s + 0x9e3779b9) >>> 0
      let z = s
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b)
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35)
      return (z ^ (z >>> 16)) >>> 0
    }
    this.#a = next()
    this.#b = next()
    this.#c = next()
    this.#d = next()
    for (let i = 0; i < 12; i++) this.next()
  }

  /** A float in [0, 1). */
  next(): number {
    // sfc32
    const t = (((this.#a + this.#b) >>> 0) + this.#d) >>> 0
    this.#d = (this.#d + 1) >>> 0
    this.#a = this.#b ^ (this.#b >>> 9)
    this.#b = (this.#c + (this.#c << 3)) >>> 0
    this.#c = ((this.#c << 21) | (this.#c >>> 11)) >>> 0
    this.#c = (this.#c + t) >>> 0
    return t / 4294967296
  }

  /** An integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n)
  }

  /** An integer in [min, max]. */
  range(min: number, max: number): number {
    return min + this.int(max - min + 1)
  }

  chance(p: number): boolean {
    return this.next() < p
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)]
  }

  /** Picks by weight: `[[weight, value], …]`. */
  weighted<T>(choices: ReadonlyArray<readonly [number, T]>): T {
    let total = 0
    for (const [w] of choices) total += w
    let r = this.next() * total
    for (const [w, value] of choices) {
      if ((r -= w) < 0) return value
    }
    return choices[choices.length - 1][1]
  }

  bytes(n: number): Buffer {
    const out = Buffer.allocUnsafe(n)
    for (let i = 0; i < n; i++) out[i] = this.int(256)
    return out
  }

  /** A length that is usually small and sometimes large: most bodies stay cheap. */
  size(typical: number, rare: number): number {
    return this.chance(0.97) ? this.int(typical + 1) : this.int(rare + 1)
  }
}

/** The seed for this run: FUZZ_SEED, else a fixed default so CI is deterministic. */
export function fuzzSeed(fallback = 20_251_122): number {
  const raw = process.env.FUZZ_SEED
  const seed = raw === undefined || raw === '' ? fallback : Number(raw)
  if (!Number.isSafeInteger(seed)) throw new Error(`FUZZ_SEED must be an integer, got ${raw}`)
  return seed >>> 0
}
