/**
 * CUPED (Controlled-experiment Using Pre-Experiment Data), as PostHog's new engine does it: whether an
 * experiment asks for it (products/experiments/backend/hogql_queries/cuped_config.py), and the adjustment of a
 * test variant's and the control's statistics by the pre-exposure covariate (products/experiments/stats/shared/
 * cuped.py, Deng et al. 2013). The covariate's sums come from the event store (experiment-aggregate.ts): per
 * entity the metric over the lookback before its first exposure (a funnel: whether its last step's event
 * happened then), summed per variant with its square and its product with the value.
 */
import { pyTruthy } from '../../common/drf-fields.js'
import { isPlainObject, type JsonObject } from '../../common/json.js'
import type { VariantSums } from '../../storage/events/index.js'
import { isSessionPropertySource } from './metric.js'
import type { Statistic } from './statistics.js'

export const DEFAULT_CUPED_LOOKBACK_DAYS = 14
const MIN_CUPED_LOOKBACK_DAYS = 1
const MAX_CUPED_LOOKBACK_DAYS = 30
/** Below this a variance is no variance (PostHog's VARIANCE_FLOOR). */
const VARIANCE_FLOOR = 1e-10

/** Python's `int(value)` of a JSON value, or null where it raises TypeError or ValueError. */
function pyInt(value: unknown): number | null {
  if (typeof value === 'boolean') return value ? 1 : 0
  if (typeof value === 'number') return Number.isFinite(value) ? Math.trunc(value) : null
  if (typeof value === 'string' && /^\s*[+-]?\d+(_\d+)*\s*$/.test(value)) return Number(value.replace(/_/g, ''))
  return null
}

/** `_resolve_lookback_days` without a team default: an integer clamped to 1–30, else 14. */
function lookbackDays(value: unknown): number {
  const days = value === undefined || value === null ? null : pyInt(value)
  if (days === null) return DEFAULT_CUPED_LOOKBACK_DAYS
  return Math.min(Math.max(days, MIN_CUPED_LOOKBACK_DAYS), MAX_CUPED_LOOKBACK_DAYS)
}

/**
 * `_metric_supports_cuped`: means without a threshold (a proportion then) whose math is not a session
 * property's, and funnels but unordered ones (PostHog's reads no event before the exposure); not ratios.
 */
function supportsCuped(metric: JsonObject): boolean {
  if (metric.metric_type === 'funnel') return metric.funnel_order_type !== 'unordered'
  if (metric.metric_type !== 'mean') return false
  if (metric.threshold !== undefined && metric.threshold !== null) return false
  return !isSessionPropertySource(metric.source)
}

/**
 * The lookback in days when CUPED applies to this metric of the experiment, else null (`get_cuped_config`):
 * `stats_config.cuped.enabled` (Python's truth; absent is the team default, off as skylark has no team
 * setting) and `lookback_days` (an integer clamped to 1–30, 14 when absent or not one).
 */
export function cupedLookbackDays(stats: Record<string, unknown> | null, metric: JsonObject): number | null {
  if (!supportsCuped(metric)) return null
  const config = isPlainObject(stats?.cuped) ? stats.cuped : {}
  if (!('enabled' in config) || !pyTruthy(config.enabled)) return null
  return lookbackDays(config.lookback_days)
}

export interface Covariate {
  sum: number
  sumSquares: number
  /** Σ value × covariate over the group's entities. */
  crossProducts: number
}

export const covariateOf = (v: VariantSums): Covariate => ({
  sum: v.covariate_sum ?? 0,
  sumSquares: v.covariate_sum_squares ?? 0,
  crossProducts: v.covariate_sum_product ?? 0,
})

/** Bessel-corrected sample covariance from sums (`_compute_covariance`). */
function covariance(n: number, postSum: number, preSum: number, crossProducts: number): number {
  return n <= 1 ? 0 : (crossProducts - (postSum * preSum) / n) / (n - 1)
}

/** The sample variance of a covariate from its sums (SampleMeanStatistic's), 0 for one entity. */
function preVariance(n: number, c: Covariate): number {
  return n === 1 ? 0 : (c.sumSquares - (c.sum * c.sum) / n) / (n - 1)
}

/** θ = Cov(Y, X) / Var(X) pooled over both groups, 0 when the covariate has no variance (`compute_theta`). */
export function cupedTheta(t: Statistic, c: Statistic, tc: Covariate, cc: Covariate): number {
  const n = t.n + c.n
  if (n <= 1) return 0
  const preSum = tc.sum + cc.sum
  const varPre = (tc.sumSquares + cc.sumSquares - (preSum * preSum) / n) / (n - 1)
  if (varPre < VARIANCE_FLOOR) return 0
  const cov = (tc.crossProducts + cc.crossProducts - ((t.sum + c.sum) * preSum) / n) / (n - 1)
  return cov / varPre
}

/**
 * One group adjusted (`_adjust_group`): mean − θ·mean(X), variance + θ²·Var(X) − 2θ·Cov(Y, X) (floored), as
 * the sample mean PostHog rebuilds from the adjusted sum and sum of squares.
 */
export function cupedAdjustGroup(post: Statistic, x: Covariate, theta: number): Statistic {
  const n = post.n
  const adjustedMean = post.mean - (theta * x.sum) / n
  const adjustedVariance = Math.max(post.variance + theta * theta * preVariance(n, x) - 2 * theta * covariance(n, post.sum, x.sum, x.crossProducts), VARIANCE_FLOOR)
  const sum = adjustedMean * n
  const sumSquares = n > 1 ? adjustedVariance * (n - 1) + (sum * sum) / n : sum * sum
  return { kind: 'mean', n, mean: sum / n, variance: n === 1 ? 0 : (sumSquares - (sum * sum) / n) / (n - 1), sum, sumSquares }
}

/**
 * `cuped_adjust` of two groups of one kind, a mean's or a funnel's (PostHog refuses ratios): the treatment's
 * and control's adjusted statistics (sample means, a funnel's proportions too) and the control's unadjusted
 * mean, the denominator of a relative effect.
 */
export function cupedAdjust(t: Statistic, c: Statistic, tc: Covariate, cc: Covariate) {
  const theta = cupedTheta(t, c, tc, cc)
  return { treatment: cupedAdjustGroup(t, tc, theta), control: cupedAdjustGroup(c, cc, theta), controlUnadjustedMean: c.mean, theta }
}
