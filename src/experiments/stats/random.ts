/**
 * A small seeded pseudo-random source. Experiment results must be reproducible: the same events and the
 * same seed (derived by the caller from the experiment id and metric) give the same numbers on every
 * call, every machine and every Node version, which `Math.random` cannot promise.
 *
 * Generator: xoshiro128** (Blackman & Vigna, "Scrambled linear pseudorandom number generators", 2018).
 * It has 128 bits of state, period 2^128 − 1, passes BigCrush, and needs only 32-bit integer
 * operations, which JavaScript does exactly through `Math.imul` and `>>> 0`.
 */

/** 2^-53: turns a 53-bit integer into a double in [0, 1) with every representable step equally likely. */
const TWO_POW_MINUS_53 = 1 / 9007199254740992

/**
 * FNV-1a (32 bit) over the UTF-8 bytes of `text`. Only used to turn a seed string into a number; any
 * well-spread hash would do, and FNV-1a is tiny and fully specified.
 */
function fnv1a32(text: string): number {
  let hash = 0x811c9dc5
  for (const byte of new TextEncoder().encode(text)) {
    hash = Math.imul(hash ^ byte, 0x01000193) >>> 0
  }
  return hash
}

/**
 * One step of a SplitMix-style generator (Steele, Lea & Flood 2014): a Weyl sequence (golden-ratio
 * increment) passed through MurmurHash3's fmix32 finalizer. The xoshiro authors recommend expanding a
 * seed this way, so that similar seeds still start far apart and the all-zero state cannot occur in
 * practice.
 */
function splitMix32(state: { value: number }): number {
  state.value = (state.value + 0x9e3779b9) >>> 0
  let z = state.value
  z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0
  z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0
  return (z ^ (z >>> 16)) >>> 0
}

function rotl(x: number, k: number): number {
  return ((x << k) | (x >>> (32 - k))) >>> 0
}

export class Random {
  #s0: number
  #s1: number
  #s2: number
  #s3: number
  /** Second normal deviate of the last polar-method pair, used by the next `normal()` call. */
  #spareNormal: number | null = null

  /** Seeds from any string (e.g. `${experimentId}:${metricIndex}`); equal strings give equal streams. */
  static fromSeed(seed: string): Random {
    const state = { value: fnv1a32(seed) }
    return new Random([splitMix32(state), splitMix32(state), splitMix32(state), splitMix32(state)])
  }

  /** Starts from an explicit 128-bit state (four 32-bit words); mostly for reference-vector tests. */
  constructor(state: readonly [number, number, number, number]) {
    this.#s0 = state[0] >>> 0
    this.#s1 = state[1] >>> 0
    this.#s2 = state[2] >>> 0
    this.#s3 = state[3] >>> 0
    if ((this.#s0 | this.#s1 | this.#s2 | this.#s3) === 0) this.#s0 = 1 // all-zero is a fixed point
  }

  /** The next 32-bit unsigned integer (xoshiro128** output function and state transition). */
  uint32(): number {
    const result = Math.imul(rotl(Math.imul(this.#s1, 5) >>> 0, 7), 9) >>> 0
    const t = (this.#s1 << 9) >>> 0
    this.#s2 = (this.#s2 ^ this.#s0) >>> 0
    this.#s3 = (this.#s3 ^ this.#s1) >>> 0
    this.#s1 = (this.#s1 ^ this.#s2) >>> 0
    this.#s0 = (this.#s0 ^ this.#s3) >>> 0
    this.#s2 = (this.#s2 ^ t) >>> 0
    this.#s3 = rotl(this.#s3, 11)
    return result
  }

  /** Uniform double in [0, 1) with 53 random bits (27 high bits of one word, 26 of the next). */
  uniform(): number {
    const high = this.uint32() >>> 5
    const low = this.uint32() >>> 6
    return (high * 67108864 + low) * TWO_POW_MINUS_53
  }

  /** Uniform double in (0, 1]: safe to take the logarithm of. */
  uniformPositive(): number {
    return 1 - this.uniform()
  }

  /**
   * Standard normal deviate by Marsaglia's polar method (Marsaglia & Bray 1964): exact, no trigonometry,
   * and each accepted pair yields two deviates, so the second is kept for the next call.
   */
  normal(): number {
    if (this.#spareNormal !== null) {
      const spare = this.#spareNormal
      this.#spareNormal = null
      return spare
    }
    for (;;) {
      const u = 2 * this.uniform() - 1
      const v = 2 * this.uniform() - 1
      const s = u * u + v * v
      if (s > 0 && s < 1) {
        const factor = Math.sqrt((-2 * Math.log(s)) / s)
        this.#spareNormal = v * factor
        return u * factor
      }
    }
  }
}
