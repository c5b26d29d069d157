/**
 * OTLP metrics: what /i/v1/metrics takes (otlp.ts, otlp-proto.ts), the rows it makes (records.ts), where they
 * are kept (metrics.db on a thread of its own, or ClickHouse when CLICKHOUSE_URL is set) and how the metrics API
 * computes its series from them (query.ts, series.ts). docs/architecture.md, "Metrics".
 */
import type { ClickHouseConnection } from '../config/index.js'
import { ClickHouseMetricStore } from './clickhouse.js'
import { ThreadedMetricStore } from './thread.js'
import type { MetricStore } from './types.js'

export * from './types.js'
export { decodeMetricsRequest, METRIC_TYPES, type MetricType } from './otlp.js'
export { metricRows } from './records.js'

export function openMetricStore(options: { sqlitePath: string; clickhouse: ClickHouseConnection | null; onThreadStart?: (threadId: number) => void }): MetricStore {
  return options.clickhouse ? new ClickHouseMetricStore(options.clickhouse) : new ThreadedMetricStore({ file: options.sqlitePath, onThreadStart: options.onThreadStart })
}
