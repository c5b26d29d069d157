/**
 * Always-valid inference for the new engine's frequentist method when `sequential_testing_enabled` is set
 * (PostHog's products/experiments/stats/frequentist/utils.py, after Waudby-Smith et al. 2023,
 * arXiv 2103.06476v7): a confidence sequence and an e-value p-value that stay valid however often the results
 * are looked at, at the price of a wider interval, narrowest near `tuning` entities in total.
 *
 * Every function takes the variance of the estimator (SE², e.g. Var_T/n_T + Var_C/n_C) and the combined sample
 * size, as the rest of the frequentist test does; none uses a t distribution or degrees of freedom.
 */

/** The mixing parameter ρ from the tuning parameter N (eq. 161, two-sided); alpha in (0, 1), N > 0. */
export function sequentialRho(alpha: number, tuning: number): number {
  const l = -2 * Math.log(alpha)
  return Math.sqrt((l + Math.log(l + 1)) / tuning)
}

/**
 * Half the width of the two-sided confidence sequence (eq. 9). The paper's s² is a per-observation variance,
 * so the estimator's SE² is scaled by n first, keeping the interval consistent with the p-value below.
 */
export function sequentialHalfwidth(estimatorVariance: number, n: number, alpha: number, rho: number): number {
  const s2 = estimatorVariance * n
  const k = n * rho * rho + 1
  return Math.sqrt(s2) * Math.sqrt((2 * k * Math.log(Math.sqrt(k) / alpha)) / (n * rho) ** 2)
}

/**
 * The two-sided always-valid p-value, min(1 / e-value, 1) (eq. 155), in log space so that overwhelming evidence
 * gives a tiny p-value rather than an overflowed e-value; 1 until the evidence outweighs the mixture's cost.
 */
export function sequentialPValue(estimate: number, estimatorVariance: number, n: number, rho: number): number {
  const tSquared = (estimate * estimate * n) / estimatorVariance
  const k = n * rho * rho + 1
  const logEvalue = (rho * rho * tSquared) / (2 * k) - 0.5 * Math.log(k)
  return logEvalue <= 0 ? 1 : Math.min(Math.exp(-logEvalue), 1)
}
