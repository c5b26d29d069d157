/**
 * Metric queries as PostHog's metrics product computes them (products/metrics/backend: metric_query_runner.py,
 * facade/api.py, formula.py), on the samples a store read: pure, so both stores answer alike and the unit
 * tests reach every rule.
 *
 * Each aggregation resolves per series before it combines across series, so a series sampled ten times in a
 * bucket counts once: `sum`, `min`, `max`, `count` (of series) and `p95` take each series' last reading in the
 * bucket, `avg` its mean. `rate` and `increase` diff a series' samples in time order (a cumulative counter that
 * went down restarted, so its value is the increase; a delta sample is its own; the first sample of a series has
 * none, and a bucket with nothing computable is left out). `histogram_quantile` sums the buckets' increases and
 * interpolates as Prometheus does. Buckets follow the project's time zone, as ClickHouse's toStartOfInterval.
 */
import { ValidationError } from '../common/errors.js'
import { zoneOffsetMs, wallToInstant } from '../common/time-zones.js'
import type { MetricType } from './otlp.js'
import type { AttributeScope, MetricFilter, MetricRow } from './types.js'

const SECOND = 1000
const MINUTE = 60 * SECOND
const HOUR = 60 * MINUTE
const DAY = 24 * HOUR

/** The bucket widths, finest first. */
export const INTERVALS = {
  second: SECOND,
  minute: MINUTE,
  minute_5: 5 * MINUTE,
  minute_15: 15 * MINUTE,
  hour: HOUR,
  hour_6: 6 * HOUR,
  day: DAY,
  week: 7 * DAY,
} as const
export type Interval = keyof typeof INTERVALS

export const AGGREGATIONS = ['sum', 'avg', 'count', 'min', 'max', 'p95', 'rate', 'increase', 'histogram_quantile'] as const
export type Aggregation = (typeof AGGREGATIONS)[number]

/** About sixty buckets over the range: the finest interval that keeps to it. */
export function pickInterval(fromMs: number, toMs: number): Interval {
  for (const [name, step] of Object.entries(INTERVALS) as Array<[Interval, number]>) if ((toMs - fromMs) / step <= 60) return name
  return 'week'
}

/** The widest range a query reads, and the most buckets an interval may make of it. */
export const MAX_SPAN_MS = 31 * DAY
export const MAX_BUCKETS = 10_000
/** Series a clause answers at most: the largest win. */
export const MAX_SERIES = 100

/**
 * Where a clause's rows start (ms): counters and histograms read back max(interval, 5 minutes, Prometheus's
 * lookback) for the first sample's predecessor.
 */
export function scanFrom(clause: Pick<MetricClause, 'aggregation'>, fromMs: number, interval: Interval): number {
  const diffs = clause.aggregation === 'rate' || clause.aggregation === 'increase' || clause.aggregation === 'histogram_quantile'
  return diffs ? fromMs - Math.max(INTERVALS[interval], 5 * MINUTE) : fromMs
}

/** A zone's offset at an instant, cached per quarter hour (no zone changes its offset inside one). */
function offsets(zone: string): (ms: number) => number {
  if (zone === 'UTC') return () => 0
  const cache = new Map<number, number>()
  return (ms) => {
    const slot = Math.floor(ms / (15 * MINUTE))
    let offset = cache.get(slot)
    if (offset === undefined) cache.set(slot, (offset = zoneOffsetMs(zone, ms) ?? 0))
    return offset
  }
}

/**
 * The bucket an instant falls in, as toStartOfInterval in the zone: days from local midnight, weeks from
 * Monday's, shorter steps counted in elapsed time from local midnight.
 */
export function bucketer(interval: Interval, zone: string): (ms: number) => number {
  const offsetAt = offsets(zone)
  const step = INTERVALS[interval]
  const weekly = interval === 'week'
  // The local midnight each step counts from (for weeks, Monday's), per local day.
  const origins = new Map<number, number>()
  return (ms) => {
    const wallDay = Math.floor((ms + offsetAt(ms)) / DAY) * DAY
    let origin = origins.get(wallDay)
    if (origin === undefined) {
      const back = weekly ? ((new Date(wallDay).getUTCDay() + 6) % 7) * DAY : 0
      origins.set(wallDay, (origin = wallToInstant(zone, wallDay - back)))
    }
    return interval === 'day' || weekly ? origin : origin + Math.floor((ms - origin) / step) * step
  }
}

/** The keys that name the service column, not an attribute, as PostHog's metrics read them. */
export const SERVICE_KEYS: ReadonlySet<string> = new Set(['service_name', 'service.name'])

/** An attribute as filters and group-bys see it: '' when absent; `auto` looks at the resource first. */
export function labelOf(row: MetricRow, key: string, scope: AttributeScope): string {
  if (SERVICE_KEYS.has(key)) return row.service_name
  const resource = row.resource_attributes[key] ?? ''
  if (scope === 'resource') return resource
  const attribute = row.attributes[key] ?? ''
  if (scope === 'attribute') return attribute
  return resource !== '' ? resource : attribute
}

export interface MetricClause {
  name: string
  metricName: string
  metricType: MetricType | null
  aggregation: Aggregation
  /** histogram_quantile's, in (0, 1). */
  quantile: number | null
  filters: MetricFilter[]
  groupBy: Array<{ key: string; scope: AttributeScope }>
}

/** One bucket of one label set: its value (null: not a finite number) and the units of the series behind it. */
export interface ClausePoint {
  time: number
  labels: Record<string, string>
  value: number | null
  units: Set<string>
}

interface Group {
  time: number
  labels: Record<string, string>
  units: Set<string>
  values: Array<number | null>
}

/** The group a row of a bucket joins: its labels by the clause's groupBy, keyed with the bucket. */
function groupOf(clause: MetricClause, time: number, row: MetricRow): { key: string; labels: Record<string, string> } {
  const labels: Record<string, string> = {}
  for (const g of clause.groupBy) labels[g.key] = labelOf(row, g.key, g.scope)
  return { key: JSON.stringify([time, Object.values(labels)]), labels }
}

/** Rows gathered by bucket and label set, in first-seen order. */
function grouper(clause: MetricClause) {
  const groups = new Map<string, Group>()
  return {
    add(time: number, row: MetricRow, value: number | null): void {
      const { key, labels } = groupOf(clause, time, row)
      let group = groups.get(key)
      if (!group) groups.set(key, (group = { time, labels, units: new Set(), values: [] }))
      group.units.add(row.unit)
      group.values.push(value)
    },
    groups: () => [...groups.values()],
  }
}

/** ClickHouse's `quantile` as it is exact (up to 8,192 values, its reservoir): sorted, interpolated at level × (n − 1). */
export function quantile(level: number, values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const position = level * (sorted.length - 1)
  const low = Math.floor(position)
  const high = Math.min(low + 1, sorted.length - 1)
  return sorted[low]! + (sorted[high]! - sorted[low]!) * (position - low)
}

/** Prometheus's histogram_quantile on explicit bounds (one more count than bounds: the overflow bucket). */
export function histogramQuantile(level: number, bounds: number[], counts: number[]): number {
  const total = counts.reduce((a, b) => a + b, 0)
  if (total <= 0 || bounds.length === 0) return 0
  const rank = level * total
  let cumulative = 0
  for (let i = 0; i < counts.length; i++) {
    const count = counts[i]!
    cumulative += count
    if (cumulative >= rank) {
      if (i >= bounds.length) return bounds[bounds.length - 1]!
      const upper = bounds[i]!
      const lower = i > 0 ? bounds[i - 1]! : Math.min(0, bounds[0]!)
      if (count === 0) return upper
      return lower + ((upper - lower) * (rank - (cumulative - count))) / count
    }
  }
  return bounds[bounds.length - 1]!
}

function combine(aggregation: Aggregation, values: number[]): number {
  switch (aggregation) {
    case 'avg':
      return values.reduce((a, b) => a + b, 0) / values.length
    case 'count':
      return values.length
    // reduce, not Math.min(...values): a bucket may hold more series than a call takes arguments.
    case 'min':
      return values.reduce((a, b) => (b < a ? b : a))
    case 'max':
      return values.reduce((a, b) => (b > a ? b : a))
    case 'p95':
      return quantile(0.95, values)
    default:
      return values.reduce((a, b) => a + b, 0)
  }
}

/** Rows of each series in time order (stable: rows of one instant keep the store's order). */
function bySeries(rows: readonly MetricRow[]): MetricRow[][] {
  const series = new Map<string, MetricRow[]>()
  for (const row of rows) {
    let list = series.get(row.series)
    if (!list) series.set(row.series, (list = []))
    list.push(row)
  }
  return [...series.values()].map((list) => list.sort((a, b) => a.timestamp - b.timestamp))
}

/** sum/avg/count/min/max/p95: each series reduced in each bucket, then combined across series. */
function instant(rows: readonly MetricRow[], clause: MetricClause, bucket: (ms: number) => number, fromMs: number): ClausePoint[] {
  const out = grouper(clause)
  for (const samples of bySeries(rows)) {
    const perBucket = new Map<number, MetricRow[]>()
    for (const row of samples) {
      if (row.value === null || row.timestamp < fromMs * 1000) continue
      const time = bucket(row.timestamp / 1000)
      let list = perBucket.get(time)
      if (!list) perBucket.set(time, (list = []))
      list.push(row)
    }
    for (const [time, list] of perBucket) {
      const value = clause.aggregation === 'avg' ? list.reduce((a, r) => a + r.value!, 0) / list.length : list[list.length - 1]!.value
      out.add(time, list[0]!, value)
    }
  }
  return out.groups().map((g) => ({ time: g.time, labels: g.labels, units: g.units, value: finite(combine(clause.aggregation, g.values as number[])) }))
}

/** rate/increase: each sample's increase over its series' previous one, summed per bucket. */
function counter(rows: readonly MetricRow[], clause: MetricClause, bucket: (ms: number) => number, fromMs: number, interval: Interval): ClausePoint[] {
  const out = grouper(clause)
  for (const samples of bySeries(rows.filter((r) => r.value !== null))) {
    // Two rows of one instant are one reading delivered twice: the last one counts.
    const readings = samples.filter((r, i) => samples[i + 1]?.timestamp !== r.timestamp)
    readings.forEach((row, i) => {
      const value = row.value!
      const prev = i > 0 ? readings[i - 1]!.value! : null
      const contribution = row.aggregation_temporality === 'delta' ? value : prev === null ? null : value >= prev ? value - prev : value
      if (row.timestamp >= fromMs * 1000) out.add(bucket(row.timestamp / 1000), row, contribution)
    })
  }
  const divisor = clause.aggregation === 'rate' ? INTERVALS[interval] / 1000 : 1
  return out
    .groups()
    .filter((g) => g.values.some((v) => v !== null))
    .map((g) => ({ time: g.time, labels: g.labels, units: g.units, value: finite((g.values as number[]).reduce((a, v) => a + (v ?? 0), 0) / divisor) }))
}

/** histogram_quantile: each bucket's increase in counts, summed per time bucket, then interpolated. */
function histogram(rows: readonly MetricRow[], clause: MetricClause, bucket: (ms: number) => number, fromMs: number): ClausePoint[] {
  const groups = new Map<string, { time: number; labels: Record<string, string>; units: Set<string>; bounds: number[]; variants: Set<string>; counts: number[] }>()
  for (const samples of bySeries(rows.filter((r) => r.histogram_counts.length > 0))) {
    samples.forEach((row, i) => {
      const counts = row.histogram_counts
      const prev = i > 0 ? samples[i - 1]!.histogram_counts : []
      const contribution =
        row.aggregation_temporality === 'delta' ? counts
        : prev.length === 0 ? counts.map(() => 0)
        : prev.length !== counts.length ? counts
        : counts.every((c, j) => c >= prev[j]!) ? counts.map((c, j) => c - prev[j]!)
        : counts
      if (row.timestamp < fromMs * 1000) return
      const time = bucket(row.timestamp / 1000)
      const { key, labels } = groupOf(clause, time, row)
      let group = groups.get(key)
      if (!group) groups.set(key, (group = { time, labels, units: new Set(), bounds: row.histogram_bounds, variants: new Set(), counts: [] }))
      group.units.add(row.unit)
      if (row.histogram_bounds.length > 0) group.variants.add(JSON.stringify(row.histogram_bounds))
      contribution.forEach((c, j) => (group.counts[j] = (group.counts[j] ?? 0) + c))
    })
  }
  const all = new Set([...groups.values()].flatMap((g) => [...g.variants]))
  if (all.size > 1) {
    throw new ValidationError(
      'parse_error',
      'histogram bounds differ across the selected series/time range; narrow the query with filters so all series share one bucket layout',
    )
  }
  return [...groups.values()]
    .filter((g) => g.counts.reduce((a, b) => a + b, 0) > 0)
    .map((g) => ({ time: g.time, labels: g.labels, units: g.units, value: finite(histogramQuantile(clause.quantile!, g.bounds, g.counts)) }))
}

const finite = (v: number): number | null => (Number.isFinite(v) ? v : null)

/** A clause's points over the rows the store read for it (from `fromMs` less the lookback where one applies). */
export function clausePoints(rows: readonly MetricRow[], clause: MetricClause, range: { fromMs: number; interval: Interval; zone: string }): ClausePoint[] {
  const bucket = bucketer(range.interval, range.zone)
  if (clause.aggregation === 'histogram_quantile') return histogram(rows, clause, bucket, range.fromMs)
  if (clause.aggregation === 'rate' || clause.aggregation === 'increase') return counter(rows, clause, bucket, range.fromMs, range.interval)
  return instant(rows, clause, bucket, range.fromMs)
}
