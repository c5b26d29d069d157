/** The metrics store's rows and reads, alike for SQLite (metrics.db) and ClickHouse (its `metrics` table). */
import type { OtlpIngest } from '../storage/otlp-ingest.js'
import type { MetricType } from './otlp.js'

export interface MetricRow {
  uuid: string
  team_id: number
  /** The first exemplar's trace and span ids, lower-case hex ('' when the point had none). */
  trace_id: string
  span_id: string
  trace_flags: number
  /** Microseconds since the epoch. */
  timestamp: number
  observed_timestamp: number
  service_name: string
  metric_name: string
  metric_type: MetricType
  /** The reading, or a distribution's sum; null when it was no finite number (NaN, ±Infinity). */
  value: number | null
  /** 1 for gauges and sums, a distribution's count of observations. */
  count: number
  histogram_bounds: number[]
  histogram_counts: number[]
  unit: string
  /** 'delta' | 'cumulative' | 'unspecified' for sums and histograms, '' otherwise. */
  aggregation_temporality: string
  is_monotonic: boolean
  resource_attributes: Record<string, string>
  instrumentation_scope: string
  attributes: Record<string, string>
  /** The series' identity: metric, type, service and both attribute maps (never `$originalTimestamp`). */
  series: string
}

export type AttributeScope = 'resource' | 'attribute' | 'auto'

/** A label predicate; the negative operators also match a row without the key, as Prometheus's do. */
export interface MetricFilter {
  key: string
  op: 'eq' | 'neq' | 'regex' | 'not_regex'
  value: string
  scope: AttributeScope
}

export interface SampleQuery {
  teamId: number
  /** null: every metric (with a trace id). */
  metricName: string | null
  metricType: MetricType | null
  /** Microseconds, `from` inclusive, `to` exclusive. */
  from: number
  to: number
  filters: MetricFilter[]
  traceId?: string | null
  spanId?: string | null
  /** At most this many rows, newest first. */
  limit: number
}

export interface NamesQuery {
  teamId: number
  /** Microseconds: names reported since. */
  from: number
  /** Only names holding this, case aside ('' = every name). */
  search: string
  /** Only names these services reported ([] = every service). */
  services: string[]
}

/** A metric name in the window, and what the picker shows of it. */
export interface MetricName {
  name: string
  /** One of its types (a name sent as two types shows either). */
  metric_type: string
  unit: string
  /** Its newest data point, microseconds. */
  last_seen: number
  /** How many services reported it. */
  services: number
}

export interface SparklineQuery {
  teamId: number
  names: string[]
  services: string[]
  /** Microseconds: the window, and the width of its buckets, counted from `from`. */
  from: number
  to: number
  bucket: number
}

export interface AttributeKeysQuery {
  teamId: number
  /** Microseconds, `from` inclusive, `to` exclusive. */
  from: number
  to: number
  /** Only keys holding this, case aside (the service keys always come: the route decides on them). */
  search: string
}

export interface AttributeValuesQuery {
  teamId: number
  from: number
  to: number
  key: string
  search: string
  limit: number
}

/** One service's metrics in the overview's window. */
export interface ServiceOverview {
  service_name: string
  metric_names: number
  series: number
  /** Its newest data point, microseconds. */
  last_seen: number
}

export interface MetricStore {
  /** Stores the rows durably before resolving. */
  insert(rows: MetricRow[]): Promise<void>
  samples(query: SampleQuery): Promise<MetricRow[]>
  /** Every metric name reported in the window (the route ranks them). */
  names(query: NamesQuery): Promise<MetricName[]>
  /** The mean reading of each name in each bucket that has one, by name and then time. */
  nameSparklines(query: SparklineQuery): Promise<Array<{ name: string; bucket: number; value: number | null }>>
  /** Attribute keys (data point and resource attributes merged) and the data points that carry each. */
  attributeKeys(query: AttributeKeysQuery): Promise<Array<{ name: string; occurrences: number }>>
  /** A key's values (`service_name`/`service.name`: the service column's): the one equal to the search first, case aside, then the most frequent. */
  attributeValues(query: AttributeValuesQuery): Promise<Array<{ name: string; count: number }>>
  hasMetrics(teamId: number): Promise<boolean>
  /**
   * Every service with data points since `since` (microseconds), the most series first; the distinct metric
   * names since `namesSince`; and the newest data point ever (null: none).
   */
  overview(teamId: number, since: number, namesSince: number): Promise<{ services: ServiceOverview[]; metricNames: number; lastSeen: number | null }>
  close(): Promise<void>
}

/** What the main thread holds (src/metrics/thread.ts): the reads, and ingest; rows are written on the store's thread only. */
export type MetricService = Omit<MetricStore, 'insert'> & OtlpIngest
