/** Schema of metrics.db, the embedded store of OTLP metrics (/i/v1/metrics) when CLICKHOUSE_URL is unset. */
import type { Migration } from '../database.js'

export const METRICS_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'initial',
    sql: `
-- One row per data point. Times are microseconds since the Unix epoch (UTC); the attribute columns JSON objects
-- of texts, the histogram columns JSON arrays of numbers; value NULL where the point's was not finite.
CREATE TABLE metrics (
  uuid TEXT PRIMARY KEY,
  team_id INTEGER NOT NULL,
  timestamp INTEGER NOT NULL,
  observed_timestamp INTEGER NOT NULL,
  trace_id TEXT NOT NULL,
  span_id TEXT NOT NULL,
  trace_flags INTEGER NOT NULL,
  service_name TEXT NOT NULL,
  metric_name TEXT NOT NULL,
  metric_type TEXT NOT NULL,
  value REAL,
  count INTEGER NOT NULL,
  histogram_bounds TEXT NOT NULL,
  histogram_counts TEXT NOT NULL,
  unit TEXT NOT NULL,
  aggregation_temporality TEXT NOT NULL,
  is_monotonic INTEGER NOT NULL,
  resource_attributes TEXT NOT NULL,
  instrumentation_scope TEXT NOT NULL,
  attributes TEXT NOT NULL,
  series TEXT NOT NULL
);
CREATE INDEX metrics_name_time ON metrics (team_id, metric_name, timestamp);
CREATE INDEX metrics_team_time ON metrics (team_id, timestamp);
`,
  },
]
