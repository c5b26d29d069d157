/**
 * From an experiment's exposures and metric events to each variant's sufficient statistics, as PostHog's
 * ExperimentQueryRunner computes them in SQL. Pure, and run where the events are read: the SQLite store runs
 * all of it on its read thread (experiment-rows.ts walks the rows), ClickHouse computes the per-entity part in
 * SQL (clickhouse-experiment.ts) and `VariantSummer` adds up what comes back, so only per-variant numbers
 * reach the main thread's caller (docs/architecture.md, "Experiments").
 *
 * - Exposure: each entity's first exposure time; an entity exposed to more than one variant is `$multiple`
 *   and left out (`multiple_variant_handling` "exclude", the default), or counted under the variant of its
 *   earliest exposure ("first_seen").
 * - An entity's metric events are those at or after its first exposure and, with a conversion window,
 *   before first exposure + window (else up to the experiment's end, which the store's bound already is);
 *   a funnel's are not cut there, its walk applying the window from each exposure.
 * - Mean: per entity the source's aggregate (count, sum / avg / min / max of the property's number, distinct
 *   sessions, persons or group keys), 0 without events; winsorised to the percentile bounds when set, or with
 *   a threshold 1 when it reaches it and else 0; then per variant n, sum and sum of squares. Ratio: the numerator's and denominator's per-entity aggregates, their sums, sums of
 *   squares and sum of products. Funnel: the furthest step reached as experiment-funnel.ts walks each
 *   entity's exposures and step events for the metric's order (PostHog's UDF, the exposure its step 0, the
 *   window from each exposure, else three years as PostHog's default), `step_counts[i]` the entities
 *   reaching step i or beyond, sum the entities completing all.
 * - Retention (experiment-retention.ts): each entity's start and completion events from its first exposure on
 *   give 1 (retained), 0, or nothing (no start event: not counted); summed as a ratio whose denominator is 1
 *   for every entity counted (PostHog's retention query).
 * - CUPED (`cupedLookbackMs`, means and funnels): each entity's covariate over its events in the lookback
 *   before its first exposure — a mean the same aggregate, a funnel 1 when its last step's event happened
 *   then — summed per variant as `covariate_sum`, its squares and its products with the (winsorised) value.
 * - Breakdowns (PostHog's BreakdownInjector): an entity's group is the breakdown texts of its first exposure;
 *   every group is summed as above on its own (winsorisation's bounds too, over the group's entities of all
 *   variants), and the variants' sums over everyone are the groups' added up (`aggregate_variants_across_breakdowns`).
 */
import {
  MAX_EXPERIMENT_STEPS,
  type BreakdownSums,
  type ExperimentAggregation,
  type ExperimentSums,
  type ExperimentVariantsQuery,
  type VariantSums,
} from './types.js'

export const MULTIPLE_VARIANT_KEY = '$multiple'
/** PostHog's funnel window for the new engine when the metric sets none (the legacy results' is 14 days). */
const DEFAULT_FUNNEL_WINDOW_MS = 3 * 365 * 86_400_000

/** How long after its exposure a funnel's chain may run on: the metric's conversion window as set (0 too), else the default. */
export const funnelWindow = (a: ExperimentAggregation): number => a.windowMs ?? DEFAULT_FUNNEL_WINDOW_MS

/** The query's step count, which both stores take from 1 to MAX_EXPERIMENT_STEPS: an event's steps travel as one number's bits. */
export function experimentSteps(query: ExperimentVariantsQuery): number {
  const steps = query.metric.steps.length
  if (steps === 0 || steps > MAX_EXPERIMENT_STEPS) throw new RangeError(`an experiment metric reads 1 to ${MAX_EXPERIMENT_STEPS} steps`)
  return steps
}

export type MultipleVariantHandling = 'exclude' | 'first_seen'

export interface Exposure {
  variant: string
  first: number
  /** The breakdown texts of the first exposure ([] without breakdowns). */
  breakdown: string[]
}

/** Text order by code point, as ClickHouse compares strings (UTF-8 bytes) and Python sorts them. */
export function compareText(a: string, b: string): number {
  if (a === b) return 0
  const n = Math.min(a.length, b.length)
  for (let i = 0; i < n; i++) {
    const x = a.codePointAt(i)!
    const y = b.codePointAt(i)!
    if (x !== y) return x - y
    if (x > 0xffff) i++
  }
  return a.length - b.length
}

/** Tuples of texts in order, element by element. */
export function compareTexts(a: readonly string[], b: readonly string[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const c = compareText(a[i], b[i])
    if (c !== 0) return c
  }
  return a.length - b.length
}

/** CUPED's lookback in ms, for the metrics PostHog adjusts (means and funnels), else null. */
export function cupedLookback(a: ExperimentAggregation): number | null {
  return (a.type === 'mean' || a.type === 'funnel') && a.cupedLookbackMs !== undefined && a.cupedLookbackMs !== null ? a.cupedLookbackMs : null
}

/**
 * ClickHouse's `quantileExact(level)`, with which PostHog's mean query builder takes winsorisation's bounds: the
 * element at floor(level × n) of the sorted values (the last for level 1), never a value between two.
 */
export function quantileExact(values: readonly number[], level: number): number {
  if (values.length === 0) return Number.NaN
  const sorted = Float64Array.from(values).sort()
  return sorted[level < 1 ? Math.floor(level * sorted.length) : sorted.length - 1]
}

/** `get_winsorized_metric_values_query`: every value clamped to the bounds over all variants' values. */
function winsorise(values: number[], a: ExperimentAggregation): number[] {
  if (a.lowerPercentile === null && a.upperPercentile === null) return values
  if (values.length === 0) return values
  // Loops, not Math.min(...values): a spread of many thousands of persons overflows the stack.
  const lower = a.lowerPercentile === null ? values.reduce((x, y) => Math.min(x, y)) : quantileExact(values, a.lowerPercentile)
  // ignore_zeros: the upper bound is taken over the entities that did something (PostHog's outlier setting
  // "Ignore zeros when calculating upper bound").
  const upperBase = a.ignoreZeros ? values.filter((v) => v !== 0) : values
  const upper =
    a.upperPercentile === null ? values.reduce((x, y) => Math.max(x, y)) : upperBase.length === 0 ? quantileExact(values, a.upperPercentile) : quantileExact(upperBase, a.upperPercentile)
  return values.map((v) => Math.min(Math.max(lower, v), upper))
}

/**
 * A mean entity's value as summed: with a threshold, whether it reached it (1 or 0), as PostHog's mean query
 * builder's `if(value >= threshold, 1, 0)` turns the mean into a proportion.
 */
export function entityValue(a: ExperimentAggregation, value: number): number {
  return a.type === 'mean' && a.threshold !== undefined && a.threshold !== null ? (value >= a.threshold ? 1 : 0) : value
}

/** Whether the per-entity values must all be known before any is added up (winsorisation's bounds). */
export function needsAllValues(a: ExperimentAggregation): boolean {
  return a.type === 'mean' && (a.lowerPercentile !== null || a.upperPercentile !== null)
}

/** An entity's events for a funnel: [ms, step bits], oldest first. */
export type StepEvent = readonly [t: number, mask: number]

/**
 * Per-variant sums, added up one entity at a time in any order (winsorised means keep each entity's value
 * until `result`, the bounds being over all of them). Entities of other variants are left out.
 */
export class VariantSummer {
  readonly #a: ExperimentAggregation
  readonly #variants: readonly string[]
  readonly #stats = new Map<string, VariantSums>()
  /** Winsorised means: [variant, value, covariate] of each entity, in the order added. */
  readonly #held: Array<[VariantSums, number, number]> = []

  constructor(aggregation: ExperimentAggregation, variants: readonly string[], steps: number) {
    this.#a = aggregation
    this.#variants = variants
    for (const key of variants) {
      const s: VariantSums = { key, number_of_samples: 0, sum: 0, sum_squares: 0 }
      if (aggregation.type === 'funnel') s.step_counts = new Array(steps).fill(0)
      if (aggregation.type === 'ratio' || aggregation.type === 'retention') Object.assign(s, { denominator_sum: 0, denominator_sum_squares: 0, numerator_denominator_sum_product: 0 })
      if (cupedLookback(aggregation) !== null) Object.assign(s, { covariate_sum: 0, covariate_sum_squares: 0, covariate_sum_product: 0 })
      this.#stats.set(key, s)
    }
  }

  /**
   * A mean's (or a ratio's numerator and denominator) value for one entity, and with CUPED its covariate (not
   * winsorised: PostHog clamps the value only).
   */
  addValue(variant: string, value: number, denominator = 0, covariate = 0): void {
    const s = this.#stats.get(variant)
    if (!s) return
    if (needsAllValues(this.#a)) this.#held.push([s, value, covariate])
    else this.#add(s, value, denominator, covariate)
  }

  /** A funnel entity's furthest step (-1: none), and with CUPED its covariate (1 or 0). */
  addFunnel(variant: string, reached: number, covariate = 0): void {
    const s = this.#stats.get(variant)
    if (!s) return
    s.number_of_samples++
    for (let i = 0; i <= reached; i++) s.step_counts![i]++
    const completed = reached === s.step_counts!.length - 1 ? 1 : 0
    s.sum += completed
    s.sum_squares += completed
    this.#addCovariate(s, completed, covariate)
  }

  /**
   * A retention entity's outcome (retentionOutcome): null (no start event) is not counted; 1 or 0 is, with a
   * denominator of 1, as PostHog's retention query sums it for its ratio statistic.
   */
  addRetention(variant: string, outcome: 0 | 1 | null): void {
    if (outcome !== null) this.addValue(variant, outcome, 1)
  }

  /** Sums already added up elsewhere (ClickHouse's GROUP BY variant) for one variant. */
  addSums(variant: string, sums: Omit<VariantSums, 'key'>): void {
    const s = this.#stats.get(variant)
    if (s) Object.assign(s, sums, { key: variant })
  }

  result(): VariantSums[] {
    if (this.#held.length > 0) {
      const values = winsorise(
        this.#held.map(([, v]) => v),
        this.#a,
      )
      this.#held.forEach(([s, , covariate], i) => this.#add(s, values[i], 0, covariate))
      this.#held.length = 0
    }
    return this.#variants.map((key) => this.#stats.get(key)!)
  }

  #add(s: VariantSums, value: number, d: number, covariate: number): void {
    s.number_of_samples++
    s.sum += value
    s.sum_squares += value * value
    if (this.#a.type === 'ratio' || this.#a.type === 'retention') {
      s.denominator_sum! += d
      s.denominator_sum_squares! += d * d
      s.numerator_denominator_sum_product! += value * d
    }
    this.#addCovariate(s, value, covariate)
  }

  #addCovariate(s: VariantSums, value: number, covariate: number): void {
    if (s.covariate_sum === undefined) return
    s.covariate_sum += covariate
    s.covariate_sum_squares! += covariate * covariate
    s.covariate_sum_product! += value * covariate
  }
}

/**
 * PostHog's experiment query returns at most MAX_SELECT_RETURNED_ROWS (50,000) rows, one per variant and
 * breakdown group with someone in it; the groups past that many rows (in the answer's order) are left out of
 * the breakdown results here, while the sums over everyone still count them.
 */
export const MAX_BREAKDOWN_ROWS = 50_000

/** `aggregate_variants_across_breakdowns`: each variant's sums added up over the groups. */
export function sumAcrossGroups(groups: readonly BreakdownSums[], empty: VariantSums[]): VariantSums[] {
  return empty.map((total, i) => {
    const out: VariantSums = { ...total }
    if (total.step_counts) out.step_counts = [...total.step_counts]
    for (const group of groups) {
      const v = group.variants[i]
      out.number_of_samples += v.number_of_samples
      out.sum += v.sum
      out.sum_squares += v.sum_squares
      v.step_counts?.forEach((c, k) => (out.step_counts![k] += c))
      if (out.denominator_sum !== undefined) {
        out.denominator_sum += v.denominator_sum!
        out.denominator_sum_squares! += v.denominator_sum_squares!
        out.numerator_denominator_sum_product! += v.numerator_denominator_sum_product!
      }
      if (out.covariate_sum !== undefined) {
        out.covariate_sum += v.covariate_sum!
        out.covariate_sum_squares! += v.covariate_sum_squares!
        out.covariate_sum_product! += v.covariate_sum_product!
      }
    }
    return out
  })
}

/**
 * Sums per breakdown group, one VariantSummer each (so a winsorised mean's bounds are the group's); without
 * breakdowns one group of everyone.
 */
export class BreakdownSummer {
  readonly #a: ExperimentAggregation
  readonly #variants: readonly string[]
  readonly #steps: number
  readonly #breakdowns: number
  readonly #groups = new Map<string, { values: string[]; summer: VariantSummer }>()

  constructor(aggregation: ExperimentAggregation, variants: readonly string[], steps: number, breakdowns: number) {
    this.#a = aggregation
    this.#variants = variants
    this.#steps = steps
    this.#breakdowns = breakdowns
  }

  /** The summer of a breakdown group (its texts, one per breakdown), made at its first entity. */
  group(values: readonly string[]): VariantSummer {
    // One text is its own key (the count of breakdowns is fixed, so keys of different lengths never meet).
    const key = values.length === 0 ? '' : values.length === 1 ? values[0] : JSON.stringify(values)
    let g = this.#groups.get(key)
    if (!g) {
      g = { values: [...values], summer: new VariantSummer(this.#a, this.#variants, this.#steps) }
      this.#groups.set(key, g)
    }
    return g.summer
  }

  result(): ExperimentSums {
    const empty = new VariantSummer(this.#a, this.#variants, this.#steps).result()
    const groups: BreakdownSums[] = [...this.#groups.values()].map((g) => ({ values: g.values, variants: g.summer.result() }))
    if (this.#breakdowns === 0) return { variants: groups[0]?.variants ?? empty, breakdowns: null }
    // Only the variants answered count: a group of `$multiple` entities alone is no group (PostHog drops those rows).
    const counted = groups.filter((g) => g.variants.some((v) => v.number_of_samples > 0)).sort((x, y) => compareTexts(x.values, y.values))
    const kept: BreakdownSums[] = []
    let rows = 0
    for (const g of counted) {
      rows += g.variants.filter((v) => v.number_of_samples > 0).length
      if (rows > MAX_BREAKDOWN_ROWS) break
      kept.push(g)
    }
    return { variants: sumAcrossGroups(counted, empty), breakdowns: kept }
  }
}
