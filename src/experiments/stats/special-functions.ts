/**
 * Special functions behind the distributions: log-gamma, and the regularized incomplete gamma and beta
 * functions (Numerical Recipes, 3rd ed., §6.1, §6.2 and §6.4). Experiment counts reach millions, so the
 * power-law prefactors are computed in a form that does not cancel at large arguments (see
 * `logGammaPrefactor` and `logBetaPrefactor`).
 */

const LOG_SQRT_2PI = 0.5 * Math.log(2 * Math.PI)
/** Relative accuracy asked of the continued fractions and series; close to machine epsilon. */
const EPSILON = 1e-15
/** Stand-in for zero in modified Lentz's method, so a vanishing denominator never divides by zero. */
const TINY = 1e-300
/** Below this argument the Stirling remainder is computed from log-gamma instead of its series. */
const STIRLING_MIN = 10

/**
 * Stirling remainder: ln Γ(x) − [(x − ½) ln x − x + ½ ln 2π], for x ≥ 10 by its asymptotic series
 * (Bernoulli numbers B2…B14, Abramowitz & Stegun 6.1.40). Seven terms leave an error below 1e-16 at
 * x = 10 and less beyond.
 */
function stirlingSeries(x: number): number {
  const inv = 1 / x
  const inv2 = inv * inv
  return (
    inv *
    (1 / 12 +
      inv2 *
        (-1 / 360 + inv2 * (1 / 1260 + inv2 * (-1 / 1680 + inv2 * (1 / 1188 + inv2 * (-691 / 360360 + inv2 / 156))))))
  )
}

/**
 * ln Γ(x) for x > 0. For x ≥ 10 Stirling's series; below, shift up with Γ(x) = Γ(x + n) / (x … (x + n − 1))
 * so the series is always evaluated where it is accurate. No table of fitted coefficients is needed.
 */
export function logGamma(x: number): number {
  if (Number.isNaN(x) || x < 0) return Number.NaN
  if (x === 0) return Number.POSITIVE_INFINITY
  if (x === Number.POSITIVE_INFINITY) return x
  let shift = 0
  let product = 1
  while (x + shift < STIRLING_MIN) {
    product *= x + shift
    shift += 1
  }
  const z = x + shift
  return (z - 0.5) * Math.log(z) - z + LOG_SQRT_2PI + stirlingSeries(z) - Math.log(product)
}

/** ln B(a, b) = ln Γ(a) + ln Γ(b) − ln Γ(a + b). */
export function logBeta(a: number, b: number): number {
  return logGamma(a) + logGamma(b) - logGamma(a + b)
}

/** ln C(n, k) for real 0 ≤ k ≤ n, through log-gamma so it never overflows. */
export function logChoose(n: number, k: number): number {
  return logGamma(n + 1) - logGamma(k + 1) - logGamma(n - k + 1)
}

function stirlingRemainder(x: number): number {
  return x >= STIRLING_MIN ? stirlingSeries(x) : logGamma(x) - ((x - 0.5) * Math.log(x) - x + LOG_SQRT_2PI)
}

/**
 * r − 1 − ln r, the deviance of a ratio from 1, without cancellation near r = 1 (there it is ≈ (r − 1)²/2,
 * and subtracting two nearly equal numbers would lose half the digits that matter once multiplied by a
 * count in the millions).
 */
function ratioDeviance(r: number): number {
  const t = r - 1
  if (Math.abs(t) > 0.1) return t - Math.log1p(t)
  // t − ln(1 + t) = t²/2 − t³/3 + t⁴/4 − …, alternating and fast for |t| ≤ 0.1.
  let power = t * t
  let sum = 0
  for (let k = 2; k < 60; k++) {
    const term = power / k
    sum += k % 2 === 0 ? term : -term
    if (Math.abs(term) < EPSILON * Math.abs(sum)) break
    power *= t
  }
  return sum
}

/**
 * ln[xᵃ e⁻ˣ / Γ(a)], the prefactor shared by the gamma series and continued fraction. Written through
 * Stirling as −a·D(x/a) + ½ ln a − ½ ln 2π − remainder(a) (the saddle-point form of C. Loader, "Fast and
 * accurate computation of binomial probabilities", 2000), because the naive a ln x − x − ln Γ(a) subtracts
 * numbers near 10⁹ when a is 10⁸ and keeps only ~7 digits.
 */
export function logGammaPrefactor(a: number, x: number): number {
  if (a < STIRLING_MIN) return a * Math.log(x) - x - logGamma(a)
  return -a * ratioDeviance(x / a) + 0.5 * Math.log(a) - LOG_SQRT_2PI - stirlingRemainder(a)
}

/**
 * ln[xᵃ (1 − x)ᵇ / B(a, b)], the prefactor of the incomplete beta function, in the same saddle-point
 * form: with p = a/(a+b),
 *   −a·D(x/p) − b·D((1−x)/(1−p)) + ½ ln(ab/(a+b)) − ½ ln 2π − R(a) − R(b) + R(a+b),
 * where R is the Stirling remainder.
 */
export function logBetaPrefactor(a: number, b: number, x: number): number {
  if (a < STIRLING_MIN || b < STIRLING_MIN) {
    return a * Math.log(x) + b * Math.log1p(-x) - logBeta(a, b)
  }
  const n = a + b
  return (
    -a * ratioDeviance((x * n) / a) -
    b * ratioDeviance(((1 - x) * n) / b) +
    0.5 * Math.log((a * b) / n) -
    LOG_SQRT_2PI -
    stirlingRemainder(a) -
    stirlingRemainder(b) +
    stirlingRemainder(n)
  )
}

/**
 * Iteration cap for series and continued fractions. Both need O(√max(a, b)) steps near the bulk of the
 * distribution (NR §6.2, §6.4), so the cap grows with the parameters; hitting it means a bug, not data.
 */
function iterationCap(size: number): number {
  return 1000 + Math.ceil(50 * Math.sqrt(size))
}

function notConverged(name: string, a: number, b: number, x: number): Error {
  return new Error(`${name} did not converge for a=${a}, b=${b}, x=${x}`)
}

/** P(a, x) by its power series (NR §6.2, valid and fast for x < a + 1). */
function gammaSeries(a: number, x: number): number {
  let term = 1 / a
  let sum = term
  const cap = iterationCap(a)
  for (let n = 1; n <= cap; n++) {
    term *= x / (a + n)
    sum += term
    if (Math.abs(term) < Math.abs(sum) * EPSILON) return sum * Math.exp(logGammaPrefactor(a, x))
  }
  throw notConverged('gamma series', a, 0, x)
}

/** Q(a, x) by its continued fraction, evaluated with modified Lentz's method (NR §5.2, §6.2; x ≥ a + 1). */
function gammaContinuedFraction(a: number, x: number): number {
  let b = x + 1 - a
  let c = 1 / TINY
  let d = 1 / b
  let h = d
  const cap = iterationCap(a)
  for (let i = 1; i <= cap; i++) {
    const an = -i * (i - a)
    b += 2
    d = an * d + b
    if (Math.abs(d) < TINY) d = TINY
    c = b + an / c
    if (Math.abs(c) < TINY) c = TINY
    d = 1 / d
    const delta = d * c
    h *= delta
    if (Math.abs(delta - 1) < EPSILON) return Math.exp(logGammaPrefactor(a, x)) * h
  }
  throw notConverged('gamma continued fraction', a, 0, x)
}

/** Regularized lower incomplete gamma P(a, x) = γ(a, x) / Γ(a), for a > 0, x ≥ 0. */
export function regularizedGammaP(a: number, x: number): number {
  if (x <= 0) return 0
  if (x === Number.POSITIVE_INFINITY) return 1
  return x < a + 1 ? gammaSeries(a, x) : 1 - gammaContinuedFraction(a, x)
}

/** Regularized upper incomplete gamma Q(a, x) = 1 − P(a, x), computed directly in the upper tail. */
export function regularizedGammaQ(a: number, x: number): number {
  if (x <= 0) return 1
  if (x === Number.POSITIVE_INFINITY) return 0
  return x < a + 1 ? 1 - gammaSeries(a, x) : gammaContinuedFraction(a, x)
}

/** The continued fraction of I_x(a, b) (NR §6.4, eq. 6.4.5), by modified Lentz's method. */
function betaContinuedFraction(a: number, b: number, x: number): number {
  const qab = a + b
  const qap = a + 1
  const qam = a - 1
  let c = 1
  let d = 1 - (qab * x) / qap
  if (Math.abs(d) < TINY) d = TINY
  d = 1 / d
  let h = d
  const cap = iterationCap(Math.max(a, b))
  for (let m = 1; m <= cap; m++) {
    const m2 = 2 * m
    // Even step of the fraction.
    let aa = (m * (b - m) * x) / ((qam + m2) * (a + m2))
    d = 1 + aa * d
    if (Math.abs(d) < TINY) d = TINY
    c = 1 + aa / c
    if (Math.abs(c) < TINY) c = TINY
    d = 1 / d
    h *= d * c
    // Odd step.
    aa = (-(a + m) * (qab + m) * x) / ((a + m2) * (qap + m2))
    d = 1 + aa * d
    if (Math.abs(d) < TINY) d = TINY
    c = 1 + aa / c
    if (Math.abs(c) < TINY) c = TINY
    d = 1 / d
    const delta = d * c
    h *= delta
    if (Math.abs(delta - 1) < EPSILON) return h
  }
  throw notConverged('beta continued fraction', a, b, x)
}

/**
 * Regularized incomplete beta I_x(a, b) for a, b > 0 and 0 ≤ x ≤ 1. The continued fraction converges
 * quickly for x < (a + 1)/(a + b + 2); above that the symmetry I_x(a, b) = 1 − I_{1−x}(b, a) is used
 * (NR §6.4), so a small result is always computed directly rather than as a difference.
 */
export function regularizedBeta(x: number, a: number, b: number): number {
  if (x <= 0) return 0
  if (x >= 1) return 1
  if (x < (a + 1) / (a + b + 2)) {
    return (Math.exp(logBetaPrefactor(a, b, x)) * betaContinuedFraction(a, b, x)) / a
  }
  return 1 - (Math.exp(logBetaPrefactor(b, a, 1 - x)) * betaContinuedFraction(b, a, 1 - x)) / b
}
