/**
 * Sample ratio mismatch: did the variants receive the share of users the flag's rollout split promises?
 * A mismatch means assignment or exposure tracking is broken, and then no metric result can be trusted
 * (Fabijan et al., "Diagnosing Sample Ratio Mismatch in Online Controlled Experiments", KDD 2019).
 */
import { chiSquareSf } from './distributions.js'

/** Flagged below this p-value, the conventional SRM threshold: false alarms stay near 1 in 1,000. */
export const SRM_P_VALUE_THRESHOLD = 0.001

/** One variant of the configured split, shaped like the flag's `multivariate.variants` entries. */
export interface VariantSplit {
  readonly key: string
  readonly rollout_percentage: number
}

export interface SampleRatioMismatch {
  p_value: number
  /** Users each variant should have had: total observed × its share of the split. */
  expected: Record<string, number>
  observed: Record<string, number>
  mismatch: boolean
}

/**
 * Pearson's chi-square goodness-of-fit of `observed` exposures against `split`, with k − 1 degrees of
 * freedom. Only variants with a positive rollout share take part (a 0% variant has no expectation to
 * test); a split variant with no data counts as 0 observed, and observed keys outside the split (such as
 * a holdout) are left out. Returns null when there is nothing to test: fewer than two variants in the
 * split or no exposures at all.
 */
export function sampleRatioMismatch(
  observed: Readonly<Record<string, number>>,
  split: readonly VariantSplit[],
): SampleRatioMismatch | null {
  const tested = split.filter((variant) => variant.rollout_percentage > 0)
  if (tested.length < 2) return null
  const totalShare = tested.reduce((sum, variant) => sum + variant.rollout_percentage, 0)
  const counts = tested.map((variant) => observed[variant.key] ?? 0)
  const total = counts.reduce((sum, count) => sum + count, 0)
  if (total <= 0) return null

  const expected: Record<string, number> = {}
  const observedOut: Record<string, number> = {}
  let statistic = 0
  tested.forEach((variant, i) => {
    const expectedCount = (total * variant.rollout_percentage) / totalShare
    expected[variant.key] = expectedCount
    observedOut[variant.key] = counts[i]
    statistic += (counts[i] - expectedCount) ** 2 / expectedCount
  })
  const pValue = chiSquareSf(statistic, tested.length - 1)
  return { p_value: pValue, expected, observed: observedOut, mismatch: pValue < SRM_P_VALUE_THRESHOLD }
}
