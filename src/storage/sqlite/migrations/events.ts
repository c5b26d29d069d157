/** Schema of events.db, the embedded event store (used when CLICKHOUSE_URL is unset). */
import type { Migration } from '../database.js'

/**
 * A stored event with PostHog's `$set`/`$set_once` and GeoIP properties is ≈2.5–3 KB, so a 4 KB page held
 * one row and wasted the rest: 4.1 KB on disk per event, twice that written through the WAL. 16 KB pages
 * hold five: 2.8 KB per event and half the insert thread's CPU (≈20 → ≈11 µs a row under /capture/).
 */
export const EVENTS_PAGE_SIZE = 16384

export const EVENTS_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'initial',
    sql: `
-- timestamp and created_at are milliseconds since the Unix epoch (UTC).
CREATE TABLE events (
  uuid TEXT NOT NULL,
  team_id INTEGER NOT NULL,
  event TEXT NOT NULL,
  distinct_id TEXT NOT NULL,
  person_id TEXT,
  properties TEXT NOT NULL,
  timestamp INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  group_0 TEXT NOT NULL DEFAULT '',
  group_1 TEXT NOT NULL DEFAULT '',
  group_2 TEXT NOT NULL DEFAULT '',
  group_3 TEXT NOT NULL DEFAULT '',
  group_4 TEXT NOT NULL DEFAULT '',
  elements_chain TEXT NOT NULL DEFAULT ''
);
-- Replays after a crash insert the same uuid again; the unique index makes that a no-op.
CREATE UNIQUE INDEX events_uuid ON events(uuid);
CREATE INDEX events_team_time ON events(team_id, timestamp);
CREATE INDEX events_team_event_time ON events(team_id, event, timestamp);
CREATE INDEX events_team_distinct ON events(team_id, distinct_id, timestamp);
`,
  },
]
