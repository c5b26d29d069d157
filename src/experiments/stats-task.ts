/**
 * One statistics computation as plain data, so it can run on the main thread or in a pool worker with
 * the same result: the worker entry (workers/experiment-stats.ts) calls `runStatsTask`, which turns
 * PostHog's 400s into values (errors do not survive the thread hop as AppErrors).
 */
import { isAppError, ValidationError } from '../common/errors.js'
import {
  funnelResult,
  trendResult,
  type FunnelResult,
  type FunnelVariant,
  type TrendResult,
  type TrendVariant,
  type VariantSplit,
} from './stats/index.js'

export type StatsTask =
  | { kind: 'funnel'; seed: string; variants: FunnelVariant[]; split?: VariantSplit[] }
  | { kind: 'trend'; seed: string; variants: TrendVariant[]; split?: VariantSplit[] }

export type StatsResult = FunnelResult | TrendResult

export type StatsOutcome =
  | { ok: true; result: StatsResult }
  | { ok: false; error: { code: string; detail: string; attr: string | null } }

/** Pure and synchronous; throws PostHog's ValidationErrors (too many or too few variants). */
export function computeStats(task: StatsTask): StatsResult {
  const options = { seed: task.seed, split: task.split }
  return task.kind === 'funnel' ? funnelResult(task.variants, options) : trendResult(task.variants, options)
}

export function runStatsTask(task: StatsTask): StatsOutcome {
  try {
    return { ok: true, result: computeStats(task) }
  } catch (error) {
    if (isAppError(error)) return { ok: false, error: { code: error.code, detail: error.detail, attr: error.attr } }
    throw error
  }
}

/** Back to the error the main thread throws. */
export function unwrapOutcome(outcome: StatsOutcome): StatsResult {
  if (outcome.ok) return outcome.result
  throw new ValidationError(outcome.error.code, outcome.error.detail, outcome.error.attr)
}
