/**
 * The frequentist p-value PostHog's v1 trend results report: E. Miller's exact "count test" for two
 * Poisson rates ("Statistical formulas for programmers", §"Comparing two counts").
 */
import { binomialCdf, binomialTailAtLeast } from './distributions.js'

/**
 * Two-sided p-value for "the test rate equals the control rate". Conditional on the total n, the test
 * count is Binomial(n, r) with r = testExposure / (controlExposure + testExposure) under the null; the
 * p-value is min(1, 2·min(P(X ≤ k), P(X ≥ k))) with k the test count. Both tails include k, as in
 * PostHog. PostHog adds up to n log-gamma terms; one incomplete beta per tail gives the same sums
 * (A&S 26.5.24) in O(√n). Counts are integers (PostHog truncates them with int()).
 */
export function countTestPValue(
  control: { count: number; exposure: number },
  test: { count: number; exposure: number },
): number {
  const n = control.count + test.count
  const k = test.count
  const r = test.exposure / (control.exposure + test.exposure)
  const low = binomialCdf(k, n, r)
  const high = binomialTailAtLeast(k, n, r)
  return Math.min(1, 2 * Math.min(low, high))
}
