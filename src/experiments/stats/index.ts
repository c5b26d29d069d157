/**
 * Experiment statistics: pure functions from aggregated per-variant numbers to PostHog's v1 result
 * shapes (win probabilities, expected loss or count-test p-value, credible intervals, significance
 * code) plus a sample-ratio-mismatch check. No I/O, no clock, no global randomness: the only source of
 * randomness is a `Random` seeded from the caller's seed string, so equal inputs give equal outputs.
 *
 * Imports only `common` (for the ValidationError PostHog's 400s map to). The caller runs the event
 * queries and passes plain counts in; see `funnelResult` and `trendResult`.
 */
export { funnelResult, trendResult, type FunnelResult, type ResultOptions, type TrendResult } from './results.js'
export {
  CONTROL_VARIANT_KEY,
  EXPECTED_LOSS_SIGNIFICANCE_LEVEL,
  FF_DISTRIBUTION_THRESHOLD,
  MIN_PROBABILITY_FOR_SIGNIFICANCE,
  P_VALUE_SIGNIFICANCE_LEVEL,
  funnelSignificance,
  trendSignificance,
  type FunnelVariant,
  type SignificanceCode,
  type TrendVariant,
} from './significance.js'
export { SRM_P_VALUE_THRESHOLD, sampleRatioMismatch, type SampleRatioMismatch, type VariantSplit } from './srm.js'
export {
  MONTE_CARLO_DRAWS,
  conversionPosterior,
  countPosterior,
  credibleInterval,
  expectedLoss,
  probabilityGreater,
  winProbabilities,
  type Posterior,
} from './bayes.js'
export { countTestPValue } from './frequentist.js'
export {
  betaCdf,
  betaPdf,
  betaPpf,
  binomialCdf,
  binomialPmf,
  binomialTailAtLeast,
  chiSquareSf,
  gammaCdf,
  gammaPdf,
  gammaPpf,
} from './distributions.js'
export {
  logBeta,
  logChoose,
  logGamma,
  regularizedBeta,
  regularizedGammaP,
  regularizedGammaQ,
} from './special-functions.js'
export { sampleBeta, sampleGamma } from './sampling.js'
export { Random } from './random.js'
