/**
 * The new experiment engine's statistics (PostHog's products/experiments/stats and the result builders of
 * products/experiments/backend/hogql_queries/utils.py), pure: per-variant sufficient statistics in, PostHog's
 * ExperimentQueryResponse `baseline` and `variant_results` out. What `stats_config` asks for is read by
 * stats-config.ts.
 *
 * - Each variant is checked first (`validate_variant_result`): fewer than 50 samples is
 *   `not-enough-exposures`, a funnel or retention metric with fewer than 5 conversions `not-enough-metric-data`, a baseline
 *   whose sum is 0 `baseline-mean-is-zero`; a variant with a failure (or any, when the baseline has one) is
 *   answered without statistics.
 * - A variant is a sample mean (mean metrics: mean and variance from n, sum and sum of squares, refused when the
 *   sum of squares is below sum²/n by any amount, as SampleMeanStatistic is), a proportion (funnels, and mean
 *   metrics with a threshold, whose sum counts who reached it: p(1 − p)) or a ratio (delta method with the
 *   numerator–denominator covariance; retention metrics too, as PostHog's `metric_variant_to_statistic`:
 *   retained over started, every entity's denominator 1).
 * - Bayesian (the default): the effect, relative (T − C)/C by default or absolute, with its delta-method
 *   variance, under a flat prior is the posterior N(effect, variance); chance to win is P(effect > 0), the
 *   credible interval its central `ci_level` (0.95), and `significant` is PostHog's `is_decisive`: the chance to
 *   win beyond `ci_level` either way (one-sided, so a 0.96 chance is significant while the 95% interval still
 *   holds 0). Proportions need 5 successes and 5 failures in both groups; then `validate_test_inputs` refuses a
 *   non-finite mean or variance, a sample mean's |sum| above 1e15 or sum of squares above 1e30, and a proportion
 *   within 1e-10 of 0 or 1.
 * - CUPED (`stats_config.cuped`, means and funnels; cuped.ts): before either test, a test variant and the
 *   control are adjusted by their pre-exposure covariates (each a SampleMeanStatistic, refused as one) with θ
 *   pooled over the two, and a relative effect divides by the control's unadjusted mean.
 * - Frequentist: Welch's two-sided t-test on the same effect and variance with Welch–Satterthwaite degrees
 *   of freedom; p-value, the `1 − alpha` confidence interval (alpha 0.05), significant when p < alpha. With
 *   `frequentist.sequential_testing_enabled` it is PostHog's SequentialTwoSidedTTest instead
 *   (stats/sequential.ts): the always-valid p-value and confidence sequence of the same estimate and variance.
 *
 * A computation PostHog's code refuses (a zero variance, a non-positive control mean for a relative effect)
 * throws StatisticError. experimentResult catches it per variant as PostHog's result builders do: a test
 * variant whose statistics fail keeps its sums and has its statistic fields null (a control whose statistic
 * fails leaves every variant so); only a `ci_level` or `alpha` outside (0, 1), which PostHog's method configs
 * refuse before any variant, reaches the caller, which answers it as PostHog's error handler does.
 */
import type { VariantSums } from '../../storage/events/index.js'
import { normalPpf, normalSf, studentTCdf, studentTPpf } from '../stats/gaussian.js'
import { sequentialHalfwidth, sequentialPValue, sequentialRho } from '../stats/sequential.js'
import { covariateOf, cupedAdjust, type Covariate } from './cuped.js'
import { methodSettings, type Difference, type StatsMethod } from './stats-config.js'

export { statsMethod, type StatsMethod } from './stats-config.js'
export type MetricType = 'mean' | 'funnel' | 'ratio' | 'retention'

export class StatisticError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'StatisticError'
  }
}

/** One variant's aggregates, as the event store sums them (experimentVariants). */
export type VariantStats = VariantSums

export type ValidationFailure = 'not-enough-exposures' | 'not-enough-metric-data' | 'baseline-mean-is-zero'

const MIN_SAMPLES = 50
const MIN_CONVERSIONS = 5

/** `validate_variant_result`. */
export function validationFailures(v: VariantStats, type: MetricType, baseline: boolean): ValidationFailure[] {
  const failures: ValidationFailure[] = []
  if (v.number_of_samples < MIN_SAMPLES) failures.push('not-enough-exposures')
  if ((type === 'funnel' || type === 'retention') && v.sum < MIN_CONVERSIONS) failures.push('not-enough-metric-data')
  if (baseline && v.sum === 0) failures.push('baseline-mean-is-zero')
  return failures
}

export interface Statistic {
  kind: 'mean' | 'proportion' | 'ratio'
  n: number
  mean: number
  /** Per-unit variance (the sample variance, p(1 − p), or the ratio's delta-method variance). */
  variance: number
  sum: number
  /** A sample mean's sum of squares (what the Bayesian test's input checks read); absent for the others. */
  sumSquares?: number
}

/**
 * SampleMeanStatistic: refused without samples or when the sum of squares lies below sum²/n by any amount, as
 * PostHog compares exactly (values all equal may leave a rounding's shortfall, which it refuses too).
 */
function sampleMean(n: number, sum: number, sumSquares: number): Statistic {
  if (n <= 0) throw new StatisticError('Sample size must be positive')
  if (n === 1 && sumSquares < sum * sum) throw new StatisticError('sum_squares must be >= sum^2 for single observation')
  if (n > 1 && sumSquares < (sum * sum) / n) throw new StatisticError('sum_squares incompatible with sum and n')
  const variance = n === 1 ? 0 : (sumSquares - (sum * sum) / n) / (n - 1)
  return { kind: 'mean', n, mean: sum / n, variance, sum, sumSquares }
}

/** `metric_variant_to_statistic`. */
export function toStatistic(type: MetricType, v: VariantStats): Statistic {
  const n = v.number_of_samples
  if (type === 'mean') return sampleMean(n, v.sum, v.sum_squares)
  if (type === 'funnel') {
    if (n <= 0) throw new StatisticError('Sample size must be positive')
    const sum = Math.trunc(v.sum)
    if (sum < 0 || sum > n) throw new StatisticError('Number of successes out of range')
    const p = sum / n
    return { kind: 'proportion', n, mean: p, variance: p * (1 - p), sum }
  }
  const m = sampleMean(n, v.sum, v.sum_squares)
  const d = sampleMean(n, v.denominator_sum ?? 0, v.denominator_sum_squares ?? 0)
  if (Math.abs(d.mean) < 1e-10) throw new StatisticError('Denominator mean cannot be zero for ratio calculation')
  const covariance = n === 1 ? 0 : ((v.numerator_denominator_sum_product ?? 0) - (m.sum * d.sum) / n) / (n - 1)
  const variance = m.variance / d.mean ** 2 + (m.mean ** 2 * d.variance) / d.mean ** 4 - (2 * m.mean * covariance) / d.mean ** 3
  return { kind: 'ratio', n, mean: m.sum / d.sum, variance, sum: m.sum }
}

/**
 * The effect of treatment against control and its variance (`calculate_effect_size_and_variance`,
 * `calculate_variance_pooled`); a relative one divides by `base`, the control's mean or with CUPED its
 * unadjusted mean (PostHog's `unadjusted_mean`).
 */
export function effect(t: Statistic, c: Statistic, difference: Difference, strictlyPositiveControl: boolean, base = c.mean): { estimate: number; variance: number } {
  if (difference === 'ABSOLUTE') return { estimate: t.mean - c.mean, variance: t.variance / t.n + c.variance / c.n }
  if (strictlyPositiveControl ? base <= 0 : Math.abs(base) < 1e-10) throw new StatisticError('Control mean must be positive for relative difference calculation')
  return {
    estimate: (t.mean - c.mean) / base,
    variance: t.variance / (t.n * base ** 2) + (t.mean ** 2 * c.variance) / (c.n * base ** 4),
  }
}

export interface BayesianOutcome {
  chance_to_win: number
  credible_interval: [number, number]
  significant: boolean
}

/**
 * `validate_test_inputs` (shared/utils.py), which the Bayesian test runs on both groups and the frequentist one
 * does not: a finite mean, a finite non-negative variance, then a sample mean's sums below overflow range and a
 * proportion away from 0 and 1 (ratios have no checks of their own).
 */
function checkBayesianInput(s: Statistic, name: string): void {
  const failures: string[] = []
  if (!Number.isFinite(s.mean)) failures.push('Mean must be finite')
  if (!Number.isFinite(s.variance) || s.variance < 0) failures.push('Variance must be finite and non-negative')
  if (s.kind === 'mean') {
    const sumSquares = s.sumSquares ?? 0
    if (s.n > 1 && sumSquares < (s.sum * s.sum) / s.n - 1e-10) failures.push('sum_squares violates mathematical constraint')
    if (Math.abs(s.sum) > 1e15) failures.push('Sum value extremely large - potential overflow risk')
    if (sumSquares > 1e30) failures.push('Sum of squares extremely large - potential overflow risk')
  }
  if (s.kind === 'proportion' && (s.mean < 1e-10 || s.mean > 1 - 1e-10)) {
    failures.push('Proportion extremely close to 0 or 1 - statistical tests may be unreliable')
  }
  if (failures.length > 0) throw new StatisticError(`${name} statistic validation failed: ${failures.join('; ')}`)
}

/** BayesianMethod.run_test with a flat (improper) Gaussian prior, as PostHog's default config has. */
export function bayesianTest(t: Statistic, c: Statistic, ciLevel = 0.95, difference: Difference = 'RELATIVE', base = c.mean): BayesianOutcome {
  if (!(ciLevel > 0 && ciLevel < 1)) throw new StatisticError('ci_level must be between 0 and 1')
  if (t.kind === 'proportion') {
    for (const [name, s] of [['treatment', t], ['control', c]] as const) {
      if (s.sum < 5) throw new StatisticError(`Normal approximation invalid: ${name} has only ${s.sum} successes (need ≥5).`)
      if (s.n - s.sum < 5) throw new StatisticError(`Normal approximation invalid: ${name} has only ${s.n - s.sum} failures (need ≥5).`)
    }
  }
  checkBayesianInput(t, 'Treatment')
  checkBayesianInput(c, 'Control')
  const { estimate, variance } = effect(t, c, difference, true, base)
  if (!(variance > 0)) throw new StatisticError('Effect variance must be positive')
  const sd = Math.sqrt(variance)
  const chance = normalSf(-estimate / sd)
  const alpha = 1 - ciLevel
  return {
    chance_to_win: chance,
    credible_interval: [estimate + sd * normalPpf(alpha / 2), estimate + sd * normalPpf(1 - alpha / 2)],
    significant: chance > ciLevel || chance < 1 - ciLevel,
  }
}

export interface FrequentistOutcome {
  p_value: number
  confidence_interval: [number, number]
  significant: boolean
}

/** `calculate_welch_satterthwaite_df`: the t distribution's (fractional) degrees of freedom for two groups. */
export function welchDegreesOfFreedom(t: Statistic, c: Statistic): number {
  if (Math.min(t.n, c.n) < 2) throw new StatisticError('Welch-Satterthwaite requires n ≥ 2 per group.')
  const a = t.variance / t.n
  const b = c.variance / c.n
  const denominator = a ** 2 / (t.n - 1) + b ** 2 / (c.n - 1)
  // Python's float division raises here, which FrequentistMethod turns into a StatisticError.
  if (denominator === 0) throw new StatisticError('float division by zero')
  return (a + b) ** 2 / denominator
}

/**
 * FrequentistMethod.run_test: Welch's two-sided t-test, or with a `sequentialTuning` parameter PostHog's
 * SequentialTwoSidedTTest, whose p-value and interval come from the combined sample size rather than a t
 * distribution.
 */
export function frequentistTest(
  t: Statistic,
  c: Statistic,
  alpha = 0.05,
  difference: Difference = 'RELATIVE',
  base = c.mean,
  sequentialTuning: number | null = null,
): FrequentistOutcome {
  if (!(alpha > 0 && alpha < 1)) throw new StatisticError('Alpha must be between 0 and 1')
  if (sequentialTuning !== null && !(sequentialTuning > 0)) throw new StatisticError('Sequential tuning parameter must be positive')
  if (t.n < 5 || c.n < 5) throw new StatisticError('Sample size below minimum (5)')
  const { estimate, variance } = effect(t, c, difference, false, base)
  if (sequentialTuning !== null) return sequentialTest(estimate, variance, t.n + c.n, alpha, sequentialTuning)
  const df = welchDegreesOfFreedom(t, c)
  if (!(variance > 0)) throw new StatisticError('Pooled variance must be positive')
  const statistic = estimate / Math.sqrt(variance)
  const p = 2 * (1 - studentTCdf(Math.abs(statistic), df))
  const margin = studentTPpf(1 - alpha / 2, df) * Math.sqrt(variance)
  return { p_value: p, confidence_interval: [estimate - margin, estimate + margin], significant: p < alpha }
}

/** SequentialTwoSidedTTest.run_test after the effect: the e-value p-value and the confidence sequence around it. */
function sequentialTest(estimate: number, variance: number, n: number, alpha: number, tuning: number): FrequentistOutcome {
  if (!(variance > 0)) throw new StatisticError('Pooled variance must be positive')
  const rho = sequentialRho(alpha, tuning)
  const p = sequentialPValue(estimate, variance, n, rho)
  const halfwidth = sequentialHalfwidth(variance, n, alpha, rho)
  return { p_value: p, confidence_interval: [estimate - halfwidth, estimate + halfwidth], significant: p < alpha }
}

/** A variant as PostHog's ExperimentStatsBaseValidated serialises it (unset fields null). */
function validated(v: VariantStats, type: MetricType, failures: ValidationFailure[]) {
  return {
    key: v.key,
    number_of_samples: v.number_of_samples,
    sum: v.sum,
    sum_squares: v.sum_squares,
    denominator_sum: type === 'ratio' || type === 'retention' ? (v.denominator_sum ?? 0) : null,
    denominator_sum_squares: type === 'ratio' || type === 'retention' ? (v.denominator_sum_squares ?? 0) : null,
    numerator_denominator_sum_product: type === 'ratio' || type === 'retention' ? (v.numerator_denominator_sum_product ?? 0) : null,
    step_counts: type === 'funnel' ? (v.step_counts ?? []) : null,
    step_sessions: null,
    validation_failures: failures,
    covariate_sum: v.covariate_sum ?? null,
    covariate_sum_squares: v.covariate_sum_squares ?? null,
    covariate_sum_product: v.covariate_sum_product ?? null,
  }
}

/**
 * A variant's covariate sums, refused as PostHog's `metric_variant_to_cuped_data` refuses them: it builds a
 * SampleMeanStatistic of them, inside the variant's statistics, so impossible sums skip that variant.
 */
function checkedCovariate(v: VariantStats): Covariate {
  sampleMean(v.number_of_samples, v.covariate_sum ?? 0, v.covariate_sum_squares ?? 0)
  return covariateOf(v)
}

/** The computation's value, or null when it throws a StatisticError (PostHog's `experiment_statistics_skipped`). */
function skippingFailure<T>(compute: () => T): T | null {
  try {
    return compute()
  } catch (error) {
    if (error instanceof StatisticError) return null
    throw error
  }
}

export interface ResultOptions {
  /** A mean metric with a `threshold`: its sums count the entities that reached it. */
  threshold?: boolean
  /** CUPED: each test variant and the control adjusted by their covariates' sums before the test (cuped.ts). */
  cuped?: boolean
}

/**
 * `get_bayesian_experiment_result` / `get_frequentist_experiment_result`: the baseline (control) and a result
 * per test variant, in the order given.
 */
export function experimentResult(
  type: MetricType,
  method: StatsMethod,
  stats: Record<string, unknown> | null,
  control: VariantStats,
  tests: readonly VariantStats[],
  options: ResultOptions = {},
) {
  const { level, difference, sequentialTuning } = methodSettings(stats, method)
  // `_validate_numeric_range` keeps 0 and 1, which BayesianConfig / FrequentistConfig then refuse, before any variant.
  if (!(level > 0 && level < 1)) throw new StatisticError(method === 'frequentist' ? 'Alpha must be between 0 and 1' : 'ci_level must be between 0 and 1')
  // A thresholded mean is validated as a mean but is a proportion (`metric_variant_to_statistic`): its sum counts
  // the entities that reached the threshold.
  const statistic = (v: VariantStats) => toStatistic(options.threshold === true && type === 'mean' ? 'funnel' : type, v)
  const baselineFailures = validationFailures(control, type, true)
  const controlStat = baselineFailures.length === 0 ? skippingFailure(() => statistic(control)) : null
  // `_apply_cuped_adjustment_if_enabled`: with CUPED (means and funnels, never a thresholded mean) the test
  // compares the adjusted statistics, a relative effect over the control's unadjusted mean.
  const cuped = options.cuped === true && (type === 'mean' || type === 'funnel') && options.threshold !== true
  const compared = (test: Statistic, controlStatistic: Statistic, v: VariantStats) => {
    if (!cuped) return { test, control: controlStatistic, base: controlStatistic.mean }
    const adjusted = cupedAdjust(test, controlStatistic, checkedCovariate(v), checkedCovariate(control))
    return { test: adjusted.treatment, control: adjusted.control, base: adjusted.controlUnadjustedMean }
  }
  const variant_results = tests.map((v) => {
    const failures = validationFailures(v, type, false)
    const base = validated(v, type, failures)
    const tested = controlStat !== null && failures.length === 0
    if (method === 'frequentist') {
      const outcome = tested ? skippingFailure(() => {
        const pair = compared(statistic(v), controlStat, v)
        return frequentistTest(pair.test, pair.control, level, difference, pair.base, sequentialTuning)
      }) : null
      return { ...base, method, significant: outcome?.significant ?? null, p_value: outcome?.p_value ?? null, confidence_interval: outcome?.confidence_interval ?? null }
    }
    const outcome = tested ? skippingFailure(() => {
      const pair = compared(statistic(v), controlStat, v)
      return bayesianTest(pair.test, pair.control, level, difference, pair.base)
    }) : null
    return { ...base, method, significant: outcome?.significant ?? null, chance_to_win: outcome?.chance_to_win ?? null, credible_interval: outcome?.credible_interval ?? null }
  })
  return { baseline: validated(control, type, baselineFailures), variant_results }
}
