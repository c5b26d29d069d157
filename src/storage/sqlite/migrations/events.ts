/** Schema of events.db, the embedded event store (used when CLICKHOUSE_URL is unset). */
import type { Migration } from '../database.js'

/**
 * A stored event with PostHog's `$set`/`$set_once` and GeoIP properties is ≈2.5–3 KB, so a 4 KB page held
 * one row and wasted the rest: 4.1 KB on disk per event, twice that written through the WAL. 16 KB pages
 * hold five: 2.8 KB per event and half the insert thread's CPU (≈20 → ≈11 µs a row under /capture/).
 */
export const EVENTS_PAGE_SIZE = 16384

/**
 * Rows per `block`: the insert thread numbers blocks in insertion order, and the distinct-id index leads
 * with the block, so new entries land in the newest block's few pages instead of all over an index keyed
 * by distinct id alone. That index (version 1) had every commit rewrite one 16 KB page per distinct id it
 * held once it outgrew the commit: a row cost ≈16 µs and 7.7 KB of writes at 100,000 rows and 66–75 µs
 * and 27–33 KB past 700,000 (100,000 distinct ids, bench/micro/event-insert.mjs). With blocks it takes
 * 15–27 µs and 6.9 KB up to 1.5 million. A lookup by distinct id then seeks once per block the project
 * spans: ≈300 seeks for 10 million rows.
 */
export const EVENTS_BLOCK_ROWS = 32768

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
  {
    version: 2,
    name: 'distinct id index by block',
    // Rows from before keep block 0, which the new index holds exactly as the old one did.
    sql: `
ALTER TABLE events ADD COLUMN block INTEGER NOT NULL DEFAULT 0;
DROP INDEX events_team_distinct;
CREATE INDEX events_team_block_distinct ON events(team_id, block, distinct_id, timestamp);
`,
  },
]
