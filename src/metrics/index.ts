/**
 * OTLP metrics: what /i/v1/metrics takes (otlp.ts, otlp-proto.ts), the rows it makes (records.ts), where they
 * are kept (on a thread of its own: metrics.db, or ClickHouse when CLICKHOUSE_URL is set) and how the metrics API
 * computes its series from them (query.ts, series.ts). docs/architecture.md, "Metrics".
 */
import type { ClickHouseConnection } from '../config/index.js'
import { ThreadedMetricStore } from './thread.js'
import type { MetricService } from './types.js'

export * from './types.js'
export { decodeMetricsRequest, METRIC_TYPES, type MetricType } from './otlp.js'
export { metricRows } from './records.js'

export function openMetricStore(options: { sqlitePath: string; clickhouse: ClickHouseConnection | null; onThreadStart?: (threadId: number) => void }): MetricService {
  return new ThreadedMetricStore({ target: { file: options.sqlitePath, clickhouse: options.clickhouse }, onThreadStart: options.onThreadStart })
}
