/**
 * The normal and Student's t distributions the new experiment engine reads (scipy's `norm` and `t` in
 * PostHog's products/experiments/stats): the normal through erfc(x) = Q(½, x²), the t through the
 * regularized incomplete beta function, and their quantiles by inverting those, so every value is as exact
 * as the special functions are.
 */
import { betaPpf } from './distributions.js'
import { regularizedBeta, regularizedGammaQ } from './special-functions.js'

/** P(Z > z) for a standard normal Z, accurate in the far tail too. */
export function normalSf(z: number): number {
  if (Number.isNaN(z)) return Number.NaN
  const q = 0.5 * regularizedGammaQ(0.5, (z * z) / 2)
  return z >= 0 ? q : 1 - q
}

/** P(Z ≤ z) for a standard normal Z. */
export function normalCdf(z: number): number {
  return normalSf(-z)
}

/** The standard normal density. */
function normalPdf(z: number): number {
  return Math.exp((-z * z) / 2) / Math.sqrt(2 * Math.PI)
}

// Acklam's rational approximation (relative error 1.15e-9), refined below by Halley steps on normalCdf.
const A = [-3.969683028665376e1, 2.209460984245205e2, -2.759285104469687e2, 1.38357751867269e2, -3.066479806614716e1, 2.506628277459239]
const B = [-5.447609879822406e1, 1.615858368580409e2, -1.556989798598866e2, 6.680131188771972e1, -1.328068155288572e1]
const C = [-7.784894002430293e-3, -3.223964580411365e-1, -2.400758277161838, -2.549732539343734, 4.374664141464968, 2.938163982698783]
const D = [7.784695709041462e-3, 3.224671290700398e-1, 2.445134137142996, 3.754408661907416]
const P_LOW = 0.02425

/** The z with P(Z ≤ z) = p (scipy's `norm.ppf`). */
export function normalPpf(p: number): number {
  if (!(p >= 0 && p <= 1)) throw new RangeError(`probability must be in [0, 1], got ${p}`)
  if (p === 0) return Number.NEGATIVE_INFINITY
  if (p === 1) return Number.POSITIVE_INFINITY
  let x: number
  if (p < P_LOW) {
    const q = Math.sqrt(-2 * Math.log(p))
    x = (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5]) / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1)
  } else if (p <= 1 - P_LOW) {
    const q = p - 0.5
    const r = q * q
    x = ((((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q) / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1)
  } else {
    const q = Math.sqrt(-2 * Math.log(1 - p))
    x = -(((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5]) / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1)
  }
  for (let i = 0; i < 2; i++) {
    // Against the tail that is small, so the difference keeps its digits.
    const e = p < 0.5 ? normalCdf(x) - p : 1 - p - normalSf(x)
    const u = e / normalPdf(x)
    x -= u / (1 + (x * u) / 2)
  }
  return x
}

/** P(T ≤ t) for Student's t with `df` degrees of freedom (fractional allowed). */
export function studentTCdf(t: number, df: number): number {
  if (Number.isNaN(t) || !(df > 0)) return Number.NaN
  if (!Number.isFinite(t)) return t > 0 ? 1 : 0
  // P(|T| > |t|) = I_{df/(df+t²)}(df/2, ½).
  const tail = 0.5 * regularizedBeta(df / (df + t * t), df / 2, 0.5)
  return t >= 0 ? 1 - tail : tail
}

/** The t with P(T ≤ t) = p (scipy's `t.ppf`). */
export function studentTPpf(p: number, df: number): number {
  if (!(p >= 0 && p <= 1)) throw new RangeError(`probability must be in [0, 1], got ${p}`)
  if (p === 0.5) return 0
  if (p === 0) return Number.NEGATIVE_INFINITY
  if (p === 1) return Number.POSITIVE_INFINITY
  const twoTail = 2 * Math.min(p, 1 - p)
  const x = betaPpf(twoTail, df / 2, 0.5)
  const t = Math.sqrt((df * (1 - x)) / x)
  return p > 0.5 ? t : -t
}
