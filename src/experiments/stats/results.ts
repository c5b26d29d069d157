/**
 * Experiment results in PostHog's v1 shapes (`ee/clickhouse/queries/experiments/*_experiment_result.py`),
 * minus the query echo (`insight`, `filters`) that the caller adds, plus a sample-ratio-mismatch check.
 * Inputs are aggregated counts; everything here is pure and, for a given seed, deterministic.
 */
import { ValidationError } from '../../common/errors.js'
import { conversionPosterior, countPosterior, credibleInterval, winProbabilities, type Posterior } from './bayes.js'
import { Random } from './random.js'
import {
  CONTROL_VARIANT_KEY,
  funnelSignificance,
  trendSignificance,
  type FunnelVariant,
  type SignificanceCode,
  type TrendVariant,
} from './significance.js'
import { sampleRatioMismatch, type SampleRatioMismatch, type VariantSplit } from './srm.js'

/** PostHog rejects results with more than nine test variants (ten in all). */
const MAX_TEST_VARIANTS = 9

export interface ResultOptions {
  /**
   * Seeds the Monte Carlo draws (used with three or more variants). Derive it from the experiment id and
   * the metric, e.g. `${experimentId}:secondary:${index}`, so each metric is reproducible on its own.
   */
  seed: string
  /** The flag's variants with their rollout percentages, for the sample-ratio-mismatch check. */
  split?: readonly VariantSplit[]
}

interface CommonResult {
  probability: Record<string, number>
  significant: boolean
  significance_code: SignificanceCode
  credible_intervals: Record<string, [number, number]>
  /** Null when there is no split to check against or nobody was exposed. */
  srm: SampleRatioMismatch | null
}

export interface FunnelResult extends CommonResult {
  expected_loss: number
  variants: FunnelVariant[]
}

export interface TrendResult extends CommonResult {
  p_value: number
  variants: TrendVariant[]
}

function checkCount(value: number, field: string, key: string): void {
  if (!Number.isInteger(value) || value < 0) {
    throw new RangeError(`${field} of variant ${key} must be a non-negative integer, got ${value}`)
  }
}

function checkPositive(value: number, field: string, key: string): void {
  if (!(value > 0) || !Number.isFinite(value)) {
    throw new RangeError(`${field} of variant ${key} must be a positive number, got ${value}`)
  }
}

/** Control first, then the test variants in input order; PostHog's variant-count errors. */
function orderVariants<V extends { key: string }>(variants: readonly V[]): { control: V; tests: V[] } {
  const keys = new Set(variants.map((variant) => variant.key))
  if (keys.size !== variants.length) throw new RangeError('variant keys must be unique')
  const control = variants.find((variant) => variant.key === CONTROL_VARIANT_KEY)
  if (!control) throw new ValidationError('no_data', 'No control variant data found')
  const tests = variants.filter((variant) => variant !== control)
  if (tests.length > MAX_TEST_VARIANTS) {
    throw new ValidationError('too_much_data', "Can't calculate experiment results for more than 10 variants")
  }
  if (tests.length < 1) {
    throw new ValidationError('no_data', "Can't calculate experiment results for less than 2 variants")
  }
  return { control, tests }
}

/**
 * Win probabilities as reported, control first. PostHog reports control's as max(0, 1 − Σ tests) rather
 * than its own estimate, so the values always sum to at most 1; kept for wire compatibility.
 */
function reportedProbabilities(posteriors: readonly Posterior[], seed: string): number[] {
  const raw = winProbabilities(posteriors, Random.fromSeed(seed))
  const testsTotal = raw.slice(1).reduce((sum, p) => sum + p, 0)
  return [Math.max(0, 1 - testsTotal), ...raw.slice(1)]
}

/** Arrays stay the source of order: object key order is not insertion order for keys like "2". */
function byKey<T>(keys: readonly string[], values: readonly T[]): Record<string, T> {
  return Object.fromEntries(keys.map((key, i) => [key, values[i]]))
}

function srmFor(observed: Record<string, number>, options: ResultOptions): SampleRatioMismatch | null {
  return options.split ? sampleRatioMismatch(observed, options.split) : null
}

/**
 * Conversion-funnel result: Beta(s + 1, f + 1) posteriors, win probabilities, expected loss, 95% credible
 * intervals of the conversion rate, and SRM on the users who entered the funnel (s + f per variant).
 */
export function funnelResult(variants: readonly FunnelVariant[], options: ResultOptions): FunnelResult {
  const { control, tests } = orderVariants(variants)
  const ordered = [control, ...tests].map(({ key, success_count, failure_count }) => {
    checkCount(success_count, 'success_count', key)
    checkCount(failure_count, 'failure_count', key)
    return { key, success_count, failure_count }
  })
  const keys = ordered.map((variant) => variant.key)
  const posteriors = ordered.map((variant) => conversionPosterior(variant.success_count, variant.failure_count))
  const probabilities = reportedProbabilities(posteriors, options.seed)
  const { code, expectedLoss } = funnelSignificance(ordered[0], ordered.slice(1), probabilities)
  const entered = Object.fromEntries(ordered.map((v) => [v.key, v.success_count + v.failure_count]))
  return {
    probability: byKey(keys, probabilities),
    significant: code === 'significant',
    significance_code: code,
    expected_loss: expectedLoss,
    variants: ordered,
    credible_intervals: byKey(keys, posteriors.map((posterior) => credibleInterval(posterior))),
    srm: srmFor(entered, options),
  }
}

/**
 * Count-trend result: Gamma(count + 1, rate = relative exposure) posteriors for the win probabilities,
 * Miller's count-test p-value, 95% credible intervals of events per exposed user
 * (Gamma(count + 1, rate = absolute exposure)), and SRM on the absolute exposures.
 */
export function trendResult(variants: readonly TrendVariant[], options: ResultOptions): TrendResult {
  const { control, tests } = orderVariants(variants)
  const ordered = [control, ...tests].map(({ key, count, exposure, absolute_exposure }) => {
    checkCount(count, 'count', key)
    checkPositive(exposure, 'exposure', key)
    checkPositive(absolute_exposure, 'absolute_exposure', key)
    return { key, count, exposure, absolute_exposure }
  })
  const keys = ordered.map((variant) => variant.key)
  const relative = ordered.map((variant) => countPosterior(variant.count, variant.exposure))
  const absolute = ordered.map((variant) => countPosterior(variant.count, variant.absolute_exposure))
  const probabilities = reportedProbabilities(relative, options.seed)
  const { code, pValue } = trendSignificance(ordered[0], ordered.slice(1), probabilities)
  const exposed = Object.fromEntries(ordered.map((v) => [v.key, v.absolute_exposure]))
  return {
    probability: byKey(keys, probabilities),
    significant: code === 'significant',
    significance_code: code,
    p_value: pValue,
    variants: ordered,
    credible_intervals: byKey(keys, absolute.map((posterior) => credibleInterval(posterior))),
    srm: srmFor(exposed, options),
  }
}
