/**
 * Densities, distribution functions and quantiles (ppf, scipy's name for the inverse CDF) of the Beta,
 * Gamma, chi-square and binomial distributions, built on special-functions.ts.
 */
import {
  logBetaPrefactor,
  logChoose,
  logGammaPrefactor,
  regularizedBeta,
  regularizedGammaP,
  regularizedGammaQ,
} from './special-functions.js'

export function betaPdf(x: number, a: number, b: number): number {
  if (x < 0 || x > 1) return 0
  if (x === 0 || x === 1) {
    const exponent = x === 0 ? a : b
    if (exponent !== 1) return exponent < 1 ? Number.POSITIVE_INFINITY : 0
    return x === 0 ? b : a // Beta(1, b) at 0 is b; Beta(a, 1) at 1 is a
  }
  return Math.exp(logBetaPrefactor(a, b, x)) / (x * (1 - x))
}

export function betaCdf(x: number, a: number, b: number): number {
  return regularizedBeta(x, a, b)
}

/** Gamma density with shape `a` and scale `scale` (scipy's `gamma(a, scale=scale)`). */
export function gammaPdf(x: number, a: number, scale = 1): number {
  if (x < 0) return 0
  const z = x / scale
  if (z === 0) return a === 1 ? 1 / scale : a < 1 ? Number.POSITIVE_INFINITY : 0
  return Math.exp(logGammaPrefactor(a, z)) / x
}

export function gammaCdf(x: number, a: number, scale = 1): number {
  return regularizedGammaP(a, x / scale)
}

/** P(X > x) for X ~ χ²(k): Q(k/2, x/2), computed in the upper tail so tiny p-values keep their digits. */
export function chiSquareSf(x: number, degreesOfFreedom: number): number {
  return regularizedGammaQ(degreesOfFreedom / 2, x / 2)
}

/** P(X = k) for X ~ Binomial(n, p), through log-gamma so that large n neither overflows nor underflows. */
export function binomialPmf(k: number, n: number, p: number): number {
  if (k < 0 || k > n) return 0
  if (p === 0) return k === 0 ? 1 : 0
  if (p === 1) return k === n ? 1 : 0
  return Math.exp(logChoose(n, k) + k * Math.log(p) + (n - k) * Math.log1p(-p))
}

/**
 * P(X ≤ k) for X ~ Binomial(n, p), by the identity P(X ≤ k) = I_{1−p}(n − k, k + 1) (A&S 26.5.24): one
 * incomplete-beta evaluation, O(√n), instead of summing k + 1 log-gamma terms.
 */
export function binomialCdf(k: number, n: number, p: number): number {
  if (k < 0) return 0
  if (k >= n) return 1
  return regularizedBeta(1 - p, n - k, k + 1)
}

/** P(X ≥ k) for X ~ Binomial(n, p) = I_p(k, n − k + 1); note the tail includes k itself. */
export function binomialTailAtLeast(k: number, n: number, p: number): number {
  if (k <= 0) return 1
  if (k > n) return 0
  return regularizedBeta(p, k, n - k + 1)
}

/** Most steps a quantile search takes; safeguarded Newton needs far fewer, bisection ~60 on doubles. */
const MAX_ROOT_STEPS = 300

/**
 * Solves cdf(x) = p on [lo, hi] (cdf(lo) ≤ p ≤ cdf(hi)) by Newton's method safeguarded with bisection
 * (NR §9.4, `rtsafe`): Newton converges quadratically near the root, and any step that leaves the
 * bracket or stalls is replaced by a bisection, so convergence is guaranteed.
 */
function invertCdf(
  cdf: (x: number) => number,
  pdf: (x: number) => number,
  p: number,
  bracket: { lo: number; hi: number; start: number },
): number {
  let { lo, hi } = bracket
  let x = bracket.start
  let previousStep = hi - lo
  for (let i = 0; i < MAX_ROOT_STEPS; i++) {
    const f = cdf(x) - p
    if (f === 0) return x
    if (f < 0) lo = x
    else hi = x
    const slope = pdf(x)
    const newton = slope > 0 && Number.isFinite(slope) ? x - f / slope : Number.NaN
    let next: number
    // Newton only while it stays strictly inside the bracket and at least halves the step (NR §9.4).
    if (newton > lo && newton < hi && Math.abs(newton - x) < 0.5 * Math.abs(previousStep)) {
      next = newton
    } else {
      next = 0.5 * (lo + hi)
    }
    previousStep = next - x
    // Done when the step is at the last digit, or the bracket has shrunk to neighbouring doubles.
    if (Math.abs(previousStep) <= 2e-15 * Math.abs(next) || next === lo || next === hi) return next
    x = next
  }
  return x
}

function checkProbability(p: number): void {
  if (!(p >= 0 && p <= 1)) throw new RangeError(`probability must be in [0, 1], got ${p}`)
}

/** Quantile of Beta(a, b): the x with I_x(a, b) = p. */
export function betaPpf(p: number, a: number, b: number): number {
  checkProbability(p)
  if (p === 0) return 0
  if (p === 1) return 1
  const mean = a / (a + b)
  const sd = Math.sqrt((a * b) / ((a + b) ** 2 * (a + b + 1)))
  // Ten standard deviations around the mean bracket the quantiles results ask for; else the support.
  let lo = Math.max(0, mean - 10 * sd)
  let hi = Math.min(1, mean + 10 * sd)
  if (betaCdf(lo, a, b) > p) lo = 0
  if (betaCdf(hi, a, b) < p) hi = 1
  return invertCdf(
    (x) => betaCdf(x, a, b),
    (x) => betaPdf(x, a, b),
    p,
    { lo, hi, start: Math.min(Math.max(mean, lo), hi) },
  )
}

/** Quantile of Gamma(shape a, scale): the x with P(a, x/scale) = p. */
export function gammaPpf(p: number, a: number, scale = 1): number {
  checkProbability(p)
  if (p === 0) return 0
  if (p === 1) return Number.POSITIVE_INFINITY
  const sd = Math.sqrt(a)
  let lo = Math.max(0, a - 10 * sd)
  let hi = a + 10 * sd + 10
  if (regularizedGammaP(a, lo) > p) lo = 0
  while (regularizedGammaP(a, hi) < p) hi *= 2
  const standard = invertCdf(
    (x) => regularizedGammaP(a, x),
    (x) => gammaPdf(x, a),
    p,
    { lo, hi, start: Math.min(Math.max(a, lo), hi) },
  )
  return standard * scale
}
