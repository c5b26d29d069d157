/**
 * From the store's rows (exposures per entity and variant, metric events of exposed entities) to each
 * variant's sufficient statistics, as PostHog's ExperimentQueryRunner computes them in SQL:
 *
 * - Exposure: each entity's first exposure time; an entity exposed to more than one variant is `$multiple`
 *   and left out (`multiple_variant_handling` "exclude", the default), or counted under the variant of its
 *   earliest exposure ("first_seen").
 * - An entity's metric events are those at or after its first exposure and, with a conversion window,
 *   before first exposure + window (else up to the experiment's end, which the store's bound already is).
 * - Mean: per entity the source's aggregate (count, sum / avg / min / max of the property's number, distinct
 *   sessions), 0 without events; winsorised to the percentile bounds when set; then per variant n, sum and
 *   sum of squares. Ratio: the numerator's and denominator's per-entity aggregates, their sums, sums of
 *   squares and sum of products. Funnel: the furthest step reached in order (each step at or after the
 *   previous one, within the window of the entity's first step, else within three years as PostHog's
 *   default), `step_counts[i]` the entities reaching step i or beyond, sum the entities completing all.
 */
import type { ExposureRow, MetricEventRow } from '../../storage/events/index.js'
import type { MetricPlan, SourceMath } from './metric.js'
import { valueProperties } from './metric.js'
import type { VariantStats } from './statistics.js'

export const MULTIPLE_VARIANT_KEY = '$multiple'
const DEFAULT_FUNNEL_WINDOW_MS = 3 * 365 * 86_400_000

export type MultipleVariantHandling = 'exclude' | 'first_seen'

export interface Exposure {
  variant: string
  first: number
}

/** Each entity's variant and first exposure (`get_experiment_exposure_query`). */
export function exposuresByEntity(rows: readonly ExposureRow[], handling: MultipleVariantHandling): Map<string, Exposure> {
  const seen = new Map<string, { variants: Set<string>; first: number; firstVariant: string }>()
  for (const [entity, variant, first] of rows) {
    const e = seen.get(entity)
    if (!e) seen.set(entity, { variants: new Set([variant]), first, firstVariant: variant })
    else {
      e.variants.add(variant)
      if (first < e.first || (first === e.first && variant < e.firstVariant)) {
        e.first = first
        e.firstVariant = variant
      }
    }
  }
  const out = new Map<string, Exposure>()
  for (const [entity, e] of seen) {
    const variant = handling === 'first_seen' || e.variants.size === 1 ? e.firstVariant : MULTIPLE_VARIANT_KEY
    out.set(entity, { variant, first: e.first })
  }
  return out
}

/** A property's text as HogQL's toFloat reads it: a number, else null (coalesced to 0 by the aggregations). */
function toFloat(text: string | null): number | null {
  if (text === null || text.trim() === '') return null
  const n = Number(text)
  return Number.isFinite(n) ? n : null
}

class SourceAggregate {
  count = 0
  sum = 0
  min = Number.POSITIVE_INFINITY
  max = Number.NEGATIVE_INFINITY
  sessions = new Set<string>()

  add(value: number, session: string | null): void {
    this.count++
    this.sum += value
    this.min = Math.min(this.min, value)
    this.max = Math.max(this.max, value)
    if (session !== null && session !== '') this.sessions.add(session)
  }

  result(math: SourceMath): number {
    switch (math.kind) {
      case 'count':
        return this.count
      case 'unique_session':
        return this.sessions.size
      case 'sum':
        return this.sum
      case 'avg':
        return this.count === 0 ? 0 : this.sum / this.count
      case 'min':
        return this.count === 0 ? 0 : this.min
      case 'max':
        return this.count === 0 ? 0 : this.max
    }
  }
}

/** The events that count for an entity: at or after its first exposure, within the conversion window. */
function inWindow(t: number, exposure: Exposure, windowMs: number | null): boolean {
  return t >= exposure.first && (windowMs === null || t < exposure.first + windowMs)
}

/** ClickHouse's `quantile(level)` over the values: linear interpolation between the sorted neighbours. */
export function quantile(values: readonly number[], level: number): number {
  if (values.length === 0) return Number.NaN
  const sorted = [...values].sort((a, b) => a - b)
  const index = level * (sorted.length - 1)
  const lo = Math.floor(index)
  const hi = Math.min(lo + 1, sorted.length - 1)
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (index - lo)
}

/** `get_winsorized_metric_values_query`: every value clamped to the bounds over all variants' values. */
function winsorise(values: number[], plan: MetricPlan): number[] {
  if (plan.lowerPercentile === null && plan.upperPercentile === null) return values
  if (values.length === 0) return values
  // Loops, not Math.min(...values): a spread of many thousands of persons overflows the stack.
  const lower = plan.lowerPercentile === null ? values.reduce((a, b) => Math.min(a, b)) : quantile(values, plan.lowerPercentile)
  // ignore_zeros: the upper bound is taken over the entities that did something (PostHog's outlier setting
  // "Ignore zeros when calculating upper bound").
  const upperBase = plan.ignoreZeros ? values.filter((v) => v !== 0) : values
  const upper =
    plan.upperPercentile === null ? values.reduce((a, b) => Math.max(a, b)) : upperBase.length === 0 ? quantile(values, plan.upperPercentile) : quantile(upperBase, plan.upperPercentile)
  return values.map((v) => Math.min(Math.max(lower, v), upper))
}

/** The furthest funnel step (0-based) an entity's events reach in order, -1 for none. */
export function furthestStep(events: readonly MetricEventRow[], steps: number, windowMs: number): number {
  // reach[k]: the latest start (first-step time) of a chain that has reached step k.
  const reach: Array<number | null> = new Array(steps).fill(null)
  for (const [, t, mask] of events) {
    // From the last step back, so one event advances a chain by one step at most.
    for (let k = steps - 1; k >= 0; k--) {
      if ((mask & (1 << k)) === 0) continue
      if (k === 0) reach[0] = t
      else {
        const start = reach[k - 1]
        if (start !== null && t - start <= windowMs && (reach[k] === null || start > reach[k]!)) reach[k] = start
      }
    }
  }
  for (let k = steps - 1; k >= 0; k--) if (reach[k] !== null) return k
  return -1
}

/** Per-variant statistics, in the order of `variants`; variants nobody was exposed to answer zeros. */
export function aggregateVariants(
  plan: MetricPlan,
  variants: readonly string[],
  exposures: ReadonlyMap<string, Exposure>,
  events: readonly MetricEventRow[],
): VariantStats[] {
  const byEntity = new Map<string, MetricEventRow[]>()
  for (const row of events) {
    const exposure = exposures.get(row[0])
    if (!exposure || !inWindow(row[1], exposure, plan.windowMs)) continue
    const list = byEntity.get(row[0])
    if (list) list.push(row)
    else byEntity.set(row[0], [row])
  }
  const entities = [...exposures].filter(([, e]) => variants.includes(e.variant))
  const stats = new Map(variants.map((key) => [key, { key, number_of_samples: 0, sum: 0, sum_squares: 0 } as VariantStats]))

  if (plan.type === 'funnel') {
    const n = plan.steps.length
    for (const v of stats.values()) v.step_counts = new Array(n).fill(0)
    for (const [entity, e] of entities) {
      const s = stats.get(e.variant)!
      const reached = furthestStep(byEntity.get(entity) ?? [], n, plan.windowMs ?? DEFAULT_FUNNEL_WINDOW_MS)
      s.number_of_samples++
      for (let i = 0; i <= reached; i++) s.step_counts![i]++
      if (reached === n - 1) {
        s.sum++
        s.sum_squares++
      }
    }
    return variants.map((key) => stats.get(key)!)
  }

  const props = valueProperties(plan)
  const perSource = (entity: string, index: number): number => {
    const math = plan.sources[index]
    const agg = new SourceAggregate()
    const propIndex = 'property' in math ? props.indexOf(math.property) : -1
    for (const [, , mask, values, session] of byEntity.get(entity) ?? []) {
      if ((mask & (1 << index)) === 0) continue
      agg.add(propIndex < 0 ? 1 : (toFloat(values[propIndex] ?? null) ?? 0), session)
    }
    return agg.result(math)
  }
  const numerators = winsorise(
    entities.map(([entity]) => perSource(entity, 0)),
    plan,
  )
  entities.forEach(([entity, e], i) => {
    const s = stats.get(e.variant)!
    const value = numerators[i]
    s.number_of_samples++
    s.sum += value
    s.sum_squares += value * value
    if (plan.type === 'ratio') {
      const d = perSource(entity, 1)
      s.denominator_sum = (s.denominator_sum ?? 0) + d
      s.denominator_sum_squares = (s.denominator_sum_squares ?? 0) + d * d
      s.numerator_denominator_sum_product = (s.numerator_denominator_sum_product ?? 0) + value * d
    }
  })
  if (plan.type === 'ratio') {
    for (const s of stats.values()) {
      s.denominator_sum ??= 0
      s.denominator_sum_squares ??= 0
      s.numerator_denominator_sum_product ??= 0
    }
  }
  return variants.map((key) => stats.get(key)!)
}
