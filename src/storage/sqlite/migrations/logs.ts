/** Schema of logs.db, the embedded store of OTLP logs (/i/v1/logs) when CLICKHOUSE_URL is unset. */
import type { Migration } from '../database.js'

export const LOGS_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'initial',
    sql: `
-- timestamp and observed_timestamp are microseconds since the Unix epoch (UTC); the attribute columns JSON
-- objects of texts.
CREATE TABLE logs (
  uuid TEXT PRIMARY KEY,
  team_id INTEGER NOT NULL,
  timestamp INTEGER NOT NULL,
  observed_timestamp INTEGER NOT NULL,
  trace_id TEXT NOT NULL,
  span_id TEXT NOT NULL,
  trace_flags INTEGER NOT NULL,
  body TEXT NOT NULL,
  severity_text TEXT NOT NULL,
  severity_number INTEGER NOT NULL,
  service_name TEXT NOT NULL,
  resource_attributes TEXT NOT NULL,
  resource_fingerprint TEXT NOT NULL,
  instrumentation_scope TEXT NOT NULL,
  event_name TEXT NOT NULL,
  attributes TEXT NOT NULL
);
CREATE INDEX logs_team_time ON logs (team_id, timestamp, uuid);
`,
  },
]
