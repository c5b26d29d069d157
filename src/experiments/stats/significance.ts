/**
 * PostHog's v1 significance decision for experiment results: the thresholds and the order in which the
 * checks run (posthog/hogql_queries/experiments/funnels_statistics.py and trends_statistics.py). The
 * first failing check names the result; only when all pass is it `significant`.
 */
import { conversionPosterior, expectedLoss } from './bayes.js'
import { countTestPValue } from './frequentist.js'

/** Fewer users than this in any variant and the split itself is still noise. */
export const FF_DISTRIBUTION_THRESHOLD = 100
export const MIN_PROBABILITY_FOR_SIGNIFICANCE = 0.9
export const EXPECTED_LOSS_SIGNIFICANCE_LEVEL = 0.01
export const P_VALUE_SIGNIFICANCE_LEVEL = 0.05
export const CONTROL_VARIANT_KEY = 'control'

export type SignificanceCode =
  | 'significant'
  | 'not_enough_exposure'
  | 'low_win_probability'
  | 'high_loss'
  | 'high_p_value'

export interface FunnelVariant {
  key: string
  success_count: number
  failure_count: number
}

export interface TrendVariant {
  key: string
  /** Metric total for the variant, a non-negative integer (PostHog truncates sums with int()). */
  count: number
  /** Exposure relative to control's (control = 1); the rate of the win-probability posteriors. */
  exposure: number
  /** Users exposed to the variant; the rate of the credible intervals and the exposure threshold. */
  absolute_exposure: number
}

function conversionRate(variant: FunnelVariant): number {
  return variant.success_count / (variant.success_count + variant.failure_count)
}

/** Neither control nor the test variants together reach 90%: nobody is winning yet. */
function lowWinProbability(probabilities: readonly number[]): boolean {
  const testsTotal = probabilities.slice(1).reduce((sum, p) => sum + p, 0)
  return probabilities[0] < MIN_PROBABILITY_FOR_SIGNIFICANCE && testsTotal < MIN_PROBABILITY_FOR_SIGNIFICANCE
}

/** First element with the largest score; ties keep the earliest, like Python's max(). */
function firstMax<T>(items: readonly T[], score: (item: T) => number): T {
  return items.reduce((best, item) => (score(item) > score(best) ? item : best))
}

/**
 * Funnel (conversion) significance. `probabilities` are [control, ...tests] as reported. The expected
 * loss is of choosing the better of control and the best-converting test variant against the other;
 * it is 1 whenever an earlier check decides.
 */
export function funnelSignificance(
  control: FunnelVariant,
  tests: readonly FunnelVariant[],
  probabilities: readonly number[],
): { code: SignificanceCode; expectedLoss: number } {
  const size = (variant: FunnelVariant) => variant.success_count + variant.failure_count
  if (tests.some((variant) => size(variant) < FF_DISTRIBUTION_THRESHOLD) || size(control) < FF_DISTRIBUTION_THRESHOLD) {
    return { code: 'not_enough_exposure', expectedLoss: 1 }
  }
  if (lowWinProbability(probabilities)) return { code: 'low_win_probability', expectedLoss: 1 }

  const bestTest = firstMax(tests, conversionRate)
  const posterior = (variant: FunnelVariant) => conversionPosterior(variant.success_count, variant.failure_count)
  const loss =
    conversionRate(bestTest) > conversionRate(control)
      ? expectedLoss(posterior(bestTest), [posterior(control)])
      : expectedLoss(posterior(control), [posterior(bestTest)])
  if (loss >= EXPECTED_LOSS_SIGNIFICANCE_LEVEL) return { code: 'high_loss', expectedLoss: loss }
  return { code: 'significant', expectedLoss: loss }
}

/**
 * Trend (count) significance. The p-value compares control with the test variant of the largest count
 * (Miller's count test on relative exposures); it is 1 whenever an earlier check decides.
 */
export function trendSignificance(
  control: TrendVariant,
  tests: readonly TrendVariant[],
  probabilities: readonly number[],
): { code: SignificanceCode; pValue: number } {
  if (
    tests.some((variant) => variant.absolute_exposure < FF_DISTRIBUTION_THRESHOLD) ||
    control.absolute_exposure < FF_DISTRIBUTION_THRESHOLD
  ) {
    return { code: 'not_enough_exposure', pValue: 1 }
  }
  if (lowWinProbability(probabilities)) return { code: 'low_win_probability', pValue: 1 }

  const bestTest = firstMax(tests, (variant) => variant.count)
  const pValue = countTestPValue(control, bestTest)
  if (pValue >= P_VALUE_SIGNIFICANCE_LEVEL) return { code: 'high_p_value', pValue }
  return { code: 'significant', pValue }
}
