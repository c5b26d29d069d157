/**
 * Gamma and Beta deviates on top of the seeded `Random`, for the Monte Carlo parts of the results
 * (win probabilities with more than two variants).
 */
import type { Random } from './random.js'

/**
 * One draw from Gamma(shape, scale) by Marsaglia & Tsang, "A simple method for generating gamma
 * variables" (ACM TOMS 26(3), 2000): a squeeze-accelerated rejection from a transformed normal that
 * accepts > 95% of proposals for every shape ≥ 1, so its cost does not grow with the counts.
 * Shapes below 1 use their boost: Gamma(a) = Gamma(a + 1) · U^(1/a) (same paper, §6).
 */
export function sampleGamma(random: Random, shape: number, scale = 1): number {
  if (!(shape > 0) || !(scale > 0)) throw new RangeError(`gamma needs shape, scale > 0 (got ${shape}, ${scale})`)
  if (shape < 1) {
    return sampleGamma(random, shape + 1, scale) * random.uniformPositive() ** (1 / shape)
  }
  const d = shape - 1 / 3
  const c = 1 / Math.sqrt(9 * d)
  for (;;) {
    let x: number
    let v: number
    do {
      x = random.normal()
      v = 1 + c * x
    } while (v <= 0)
    v = v * v * v
    const u = random.uniformPositive()
    const x2 = x * x
    // Cheap squeeze first; the logarithmic test only for the few proposals near the boundary.
    if (u < 1 - 0.0331 * x2 * x2) return d * v * scale
    if (Math.log(u) < 0.5 * x2 + d * (1 - v + Math.log(v))) return d * v * scale
  }
}

/** One draw from Beta(a, b) as X / (X + Y) with X ~ Gamma(a), Y ~ Gamma(b) independent. */
export function sampleBeta(random: Random, a: number, b: number): number {
  const x = sampleGamma(random, a)
  const y = sampleGamma(random, b)
  return x / (x + y)
}
