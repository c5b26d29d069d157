/**
 * The experiment's `only_count_matured_users` (PostHog's "Require completed conversion or retention window"):
 * which entities have had their whole window by now, as PostHog's ExperimentQueryBuilder gates them with
 * `… + toIntervalSecond(window) <= toDateTime(now, 'UTC')`, `now` being `timezone.now()` formatted to the
 * second. Pure: the runner passes the request's time.
 *
 * - Means, funnels and ratios (`_build_maturity_having_clause`): a HAVING on each entity's exposures, anchored on
 *   its first exposure (`min(timestamp)`; the funnel's single scan takes `minIf(timestamp, step_0 = 1)`, the same
 *   instant), over the metric's conversion window — none without one (`get_conversion_window_seconds` is 0 for
 *   an absent or zero window). An entity left out is left out of everything: its samples, winsorisation's
 *   bounds, CUPED's covariates and its breakdown group.
 * - Retention metrics gate their start event instead (`build_retention_maturity_having_clause`, runner.ts's
 *   retentionOf), never their exposure.
 */
import type { MetricType } from './statistics.js'

/** The latest instant a JS Date holds: cutoffs are kept within it, so a window of any length stays a number. */
const MAX_MS = 8.64e15

/** The latest start whose `spanMs` has ended at `nowMs`, now read to the second as PostHog formats it. */
export function maturedBy(nowMs: number, spanMs: number): number {
  return Math.min(Math.max(Math.floor(nowMs / 1000) * 1000 - spanMs, -MAX_MS), MAX_MS)
}

/**
 * A mean's, funnel's or ratio's cutoff on first exposures (ExperimentAggregation's `maturedBy`) at `nowMs`, when
 * the experiment asks for matured users only (else `nowMs` is null); null when nothing is gated.
 */
export function exposureMaturedBy(type: MetricType, windowMs: number | null, nowMs: number | null): number | null {
  if (nowMs === null || type === 'retention' || windowMs === null || windowMs === 0) return null
  return maturedBy(nowMs, windowMs)
}
