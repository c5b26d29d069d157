/**
 * PostHog's ExperimentExposuresQueryRunner (products/experiments/backend/hogql_queries/
 * experiment_exposures_query_runner.py), the experiment's exposures tab: `POST …/query/` with
 * `{"query": {"kind": "ExperimentExposureQuery", "experiment_id", …}}` answers, for each variant, the entities
 * first exposed up to each day of the experiment (cumulative, days in the project's zone, from the start to the
 * end or today, every variant on every day), the totals, the sample ratio mismatch of those totals against
 * the flag's split (`_calculate_srm`), and the `$multiple` bias risk (analysis_health.py's
 * `evaluate_bias_risk`).
 *
 * Exposure is the experiment's (`exposure_criteria`: event, action, property filters, multiple-variant
 * handling; exposure.ts), without activation mode, as PostHog's exposure timeseries query; the variants are the
 * flag's less `excluded_variants`, the holdout's people none of them. The window is the query's `start_date`
 * and `end_date` when it names them (PostHog reads only the query's), else the experiment's; without a start
 * (a draft) there are no days and nothing is read. Differences: the days run to today in the project's zone,
 * where PostHog's run to the server's date and drop the exposures of a zone already in the next day.
 */
import { ValidationError } from '../../common/errors.js'
import { isPlainObject, type JsonObject } from '../../common/json.js'
import { isoformat, zoneOffsetMs } from '../../common/time-zones.js'
import type { FeatureFlagRecord } from '../../management/index.js'
import type { ExposureCount } from '../../storage/events/index.js'
import type { ExperimentRecord } from '../record.js'
import { chiSquareSf } from '../stats/index.js'
import { flagVariants, type FlagVariant } from '../validation.js'

const MULTIPLE_VARIANT_KEY = '$multiple'
const DAY_MS = 86_400_000
/** `SRM_MINIMUM_SAMPLE_SIZE`: fewer exposures of the split's variants than this test nothing. */
const SRM_MINIMUM_SAMPLE_SIZE = 100
/** `MULTIPLE_VARIANT_BIAS_THRESHOLD`, on the 0–100 scale. */
const MULTIPLE_VARIANT_BIAS_THRESHOLD = 0.1

/** The window read: the query's dates where it names them (a key present, null included), else the experiment's. */
export function exposureWindow(query: JsonObject, experiment: ExperimentRecord): { start: number | null; end: number | null } {
  const read = (name: 'start_date' | 'end_date'): number | null => {
    const value = name in query ? query[name] : experiment[name]
    if (value === undefined || value === null) return null
    const ms = typeof value === 'string' ? Date.parse(value) : Number.NaN
    if (Number.isNaN(ms)) throw new ValidationError('invalid', `${name} must be an ISO 8601 date and time.`, name)
    return ms
  }
  return { start: read('start_date'), end: read('end_date') }
}

/** The day (YYYY-MM-DD) of an instant in a zone. */
function dayIn(ms: number, zone: string): string {
  return new Date(ms + (zoneOffsetMs(zone, ms) ?? 0)).toISOString().slice(0, 10)
}

/** `is_evenly_distributed`: the split is the auto-even one (34/33/33 for three), as PostHog's frontend makes it. */
function evenlyDistributed(percentages: readonly number[]): boolean {
  const base = Math.floor(100 / percentages.length)
  return percentages.every((p, i) => p === base + (i < 100 - base * percentages.length ? 1 : 0))
}

export interface ExposuresInput {
  counts: readonly ExposureCount[]
  /** The flag's variants, the excluded ones included (the split). */
  split: readonly FlagVariant[]
  /** The variants shown: the split's less the excluded, in the flag's order. */
  variants: readonly string[]
  excluded: ReadonlySet<string>
  /** The holdout's share (its first group's rollout), 0 without one. */
  holdoutPercentage: number
  handling: 'exclude' | 'first_seen'
  start: number | null
  end: number | null
  zone: string
  nowMs: number
}

/** The answer from the store's counts: PostHog's `_calculate` after its query. */
export function exposuresAnswer(input: ExposuresInput): JsonObject {
  const { start, end, zone } = input
  const dateRange = { date_from: start === null ? null : isoformat(start * 1000, zone), date_to: end === null ? null : isoformat(end * 1000, zone), explicitDate: true }
  if (start === null) return { timeseries: [], total_exposures: {}, date_range: dateRange, sample_ratio_mismatch: null, bias_risk: null }
  const perDay = new Map<string, Map<string, number>>()
  for (const c of input.counts) {
    const days = perDay.get(c.variant) ?? new Map<string, number>()
    const day = dayIn(c.at, zone)
    days.set(day, (days.get(day) ?? 0) + c.count)
    perDay.set(c.variant, days)
  }
  const days: string[] = []
  const last = dayIn(end ?? input.nowMs, zone)
  for (let d = dayIn(start, zone); d <= last; d = new Date(Date.parse(d) + DAY_MS).toISOString().slice(0, 10)) days.push(d)
  const shown = [...input.variants, ...(perDay.has(MULTIPLE_VARIANT_KEY) ? [MULTIPLE_VARIANT_KEY] : [])]
  const timeseries = shown.map((variant) => {
    let total = 0
    const counts = days.map((d) => (total += perDay.get(variant)?.get(d) ?? 0))
    return { variant, days, exposure_counts: counts }
  })
  const totals = Object.fromEntries(timeseries.map((s) => [s.variant, s.exposure_counts.at(-1) ?? 0]))
  return {
    timeseries,
    total_exposures: totals,
    date_range: dateRange,
    sample_ratio_mismatch: sampleRatioMismatch(input, totals),
    bias_risk: end === null ? biasRisk(input, totals) : null,
  }
}

/** `_calculate_srm`: the totals against the split, its shares rescaled for the holdout, the excluded left out. */
function sampleRatioMismatch(input: ExposuresInput, totals: Readonly<Record<string, number>>): JsonObject | null {
  if (input.split.length === 0 || Object.keys(totals).length === 0) return null
  const scale = input.holdoutPercentage > 0 ? (100 - input.holdoutPercentage) / 100 : 1
  const tested = input.split.filter((v) => !input.excluded.has(v.key) && v.rollout_percentage * scale > 0 && v.key !== MULTIPLE_VARIANT_KEY)
  const observed = tested.reduce((sum, v) => sum + (totals[v.key] ?? 0), 0)
  if (observed < SRM_MINIMUM_SAMPLE_SIZE) return null
  const share = tested.reduce((sum, v) => sum + v.rollout_percentage * scale, 0)
  if (share <= 0 || tested.length < 2) return null
  const expected: Record<string, number> = {}
  let statistic = 0
  for (const v of tested) {
    const e = ((v.rollout_percentage * scale) / share) * observed
    expected[v.key] = e
    statistic += ((totals[v.key] ?? 0) - e) ** 2 / e
  }
  return { expected, p_value: chiSquareSf(statistic, tested.length - 1) }
}

/** `evaluate_bias_risk`: an uneven split, `exclude` handling and more than 0.1 % of the exposed in `$multiple`. */
function biasRisk(input: ExposuresInput, totals: Readonly<Record<string, number>>): JsonObject | null {
  if (input.handling !== 'exclude' || input.split.length === 0) return null
  if (evenlyDistributed(input.split.map((v) => v.rollout_percentage))) return null
  const all = Object.values(totals).reduce((a, b) => a + b, 0)
  if (all <= 0) return null
  const percentage = ((totals[MULTIPLE_VARIANT_KEY] ?? 0) / all) * 100
  return percentage > MULTIPLE_VARIANT_BIAS_THRESHOLD ? { multiple_variant_percentage: percentage } : null
}

/** The holdout's share of the flag: its first release group's rollout (`holdout.filters[0].rollout_percentage`). */
export function holdoutPercentage(filters: readonly unknown[] | null): number {
  const first = filters?.[0]
  return isPlainObject(first) && typeof first.rollout_percentage === 'number' ? first.rollout_percentage : 0
}

/** The flag's split and the variants the exposures count. */
export function exposureVariants(flag: FeatureFlagRecord, experiment: ExperimentRecord): { split: FlagVariant[]; variants: string[]; excluded: Set<string> } {
  const excluded = new Set(experiment.excluded_variants ?? [])
  const split = flagVariants(flag.filters)
  return { split, variants: split.map((v) => v.key).filter((key) => !excluded.has(key)), excluded }
}
