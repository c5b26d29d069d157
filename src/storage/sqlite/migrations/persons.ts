/** Schema of persons.db: persons, distinct ids, groups, hash-key overrides, cohort membership, warnings. */
import type { Migration } from '../database.js'

export const PERSONS_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'initial',
    sql: `
CREATE TABLE persons (
  id INTEGER PRIMARY KEY,
  uuid TEXT NOT NULL UNIQUE,
  team_id INTEGER NOT NULL,
  properties TEXT NOT NULL DEFAULT '{}',
  is_identified INTEGER NOT NULL DEFAULT 0,
  version INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL
);
CREATE INDEX persons_team ON persons(team_id, id);
CREATE TABLE person_distinct_ids (
  team_id INTEGER NOT NULL,
  distinct_id TEXT NOT NULL,
  person_id INTEGER NOT NULL REFERENCES persons(id) ON DELETE CASCADE,
  PRIMARY KEY (team_id, distinct_id)
) WITHOUT ROWID;
CREATE INDEX person_distinct_ids_person ON person_distinct_ids(person_id);
CREATE TABLE group_type_mappings (
  team_id INTEGER NOT NULL,
  group_type TEXT NOT NULL,
  group_type_index INTEGER NOT NULL,
  name_singular TEXT,
  name_plural TEXT,
  PRIMARY KEY (team_id, group_type_index),
  UNIQUE (team_id, group_type)
);
CREATE TABLE groups (
  team_id INTEGER NOT NULL,
  group_type_index INTEGER NOT NULL,
  group_key TEXT NOT NULL,
  properties TEXT NOT NULL DEFAULT '{}',
  version INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL,
  PRIMARY KEY (team_id, group_type_index, group_key)
);
CREATE TABLE hash_key_overrides (
  team_id INTEGER NOT NULL,
  person_id INTEGER NOT NULL REFERENCES persons(id) ON DELETE CASCADE,
  feature_flag_key TEXT NOT NULL,
  hash_key TEXT NOT NULL,
  PRIMARY KEY (team_id, person_id, feature_flag_key)
);
CREATE TABLE cohort_people (
  cohort_id INTEGER NOT NULL,
  person_id INTEGER NOT NULL REFERENCES persons(id) ON DELETE CASCADE,
  team_id INTEGER NOT NULL,
  PRIMARY KEY (cohort_id, person_id)
);
CREATE INDEX cohort_people_person ON cohort_people(person_id);
CREATE TABLE ingestion_warnings (
  id INTEGER PRIMARY KEY,
  team_id INTEGER NOT NULL,
  type TEXT NOT NULL,
  source TEXT NOT NULL,
  details TEXT NOT NULL,
  timestamp TEXT NOT NULL
);
CREATE INDEX ingestion_warnings_team ON ingestion_warnings(team_id, id);
-- How far the person stage has read each spool lane; committed with the person changes it covers.
CREATE TABLE consumer_checkpoints (
  lane TEXT PRIMARY KEY,
  segment INTEGER NOT NULL,
  offset INTEGER NOT NULL
);
`,
  },
  {
    version: 2,
    name: 'persons stage',
    sql: `
-- Distinct ids seen on personless events ($process_person_profile false) while they had no person. A later
-- identify that creates the person takes its uuid from such an id, so the earlier events keep their person.
CREATE TABLE personless_distinct_ids (
  team_id INTEGER NOT NULL,
  distinct_id TEXT NOT NULL,
  PRIMARY KEY (team_id, distinct_id)
) WITHOUT ROWID;
-- Deleting a merged-away person cascades here; without this index each cascade scans the table.
CREATE INDEX hash_key_overrides_person ON hash_key_overrides(person_id);
-- The groups API lists a group type newest first.
CREATE INDEX groups_team_type_created ON groups(team_id, group_type_index, created_at, group_key);
`,
  },
  {
    version: 3,
    name: 'pending event deletions',
    sql: `
-- Events of deleted persons' distinct ids waiting to be deleted from the event store. Written with the person
-- deletion, removed with the sink checkpoint past it; \`cut\` holds each lane's persons position at the deletion
-- (JSON lane → cursor), so a replay after a crash stores the rows before it, deletes, then stores the rest.
CREATE TABLE pending_event_deletions (
  id INTEGER PRIMARY KEY,
  team_id INTEGER NOT NULL,
  distinct_ids TEXT NOT NULL,
  cut TEXT NOT NULL
);
`,
  },
  {
    version: 4,
    name: 'definitions',
    sql: `
-- What each project has captured, recorded by the consumer as events are processed (src/persons/definitions.ts),
-- as PostHog's posthog_eventdefinition, posthog_propertydefinition and posthog_eventproperty.
CREATE TABLE event_definitions (
  id TEXT PRIMARY KEY,
  team_id INTEGER NOT NULL,
  name TEXT NOT NULL,
  created_at TEXT NOT NULL,
  last_seen_at TEXT NOT NULL,
  UNIQUE (team_id, name)
);
-- type: 1 event, 2 person, 3 group (PostHog's PropertyDefinition.Type); group_type_index -1 unless a group's.
CREATE TABLE property_definitions (
  id TEXT PRIMARY KEY,
  team_id INTEGER NOT NULL,
  type INTEGER NOT NULL,
  group_type_index INTEGER NOT NULL,
  name TEXT NOT NULL,
  property_type TEXT,
  is_numerical INTEGER NOT NULL,
  UNIQUE (team_id, type, group_type_index, name)
);
-- Which event properties were seen on which events; keyed for "was this property seen on these events".
CREATE TABLE event_properties (
  team_id INTEGER NOT NULL,
  property TEXT NOT NULL,
  event TEXT NOT NULL,
  PRIMARY KEY (team_id, property, event)
) WITHOUT ROWID;
`,
  },
  {
    version: 5,
    name: 'definitions back-fill',
    sql: `
-- Definitions of the events stored before migration 4, derived once from the event store by the consumer
-- (src/persons/definition-backfill.ts). One row: \`bound\` the store's end when it began and \`cursor\` the last
-- event done, in the store's order (JSON, the store's own form); \`done_at\` once finished. Every data folder
-- starts with it to do: a new one finds an empty store.
CREATE TABLE definitions_backfill (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  bound TEXT,
  cursor TEXT,
  done_at TEXT
);
INSERT INTO definitions_backfill (id) VALUES (1);
-- While it runs: the property types it set and when the value that gave each was stored (ms), so a type
-- from an event stored earlier replaces it, and one from an event stored later does not. Emptied when done.
CREATE TABLE definitions_backfill_types (
  team_id INTEGER NOT NULL,
  type INTEGER NOT NULL,
  group_type_index INTEGER NOT NULL,
  name TEXT NOT NULL,
  at INTEGER NOT NULL,
  PRIMARY KEY (team_id, type, group_type_index, name)
) WITHOUT ROWID;
`,
  },
  {
    version: 6,
    name: 'cookieless tracking',
    sql: `
-- Cookieless tracking (src/persons/cookieless-state.ts): one random salt per calendar day, deleted with every row
-- of that day once no time zone is in it any more. Stateful mode keeps, per hash of the day, the $identify events
-- seen (their count tells a device's successive users apart) and the current session.
CREATE TABLE cookieless_salts (
  day TEXT PRIMARY KEY,
  salt BLOB NOT NULL
) WITHOUT ROWID;
CREATE TABLE cookieless_identifies (
  team_id INTEGER NOT NULL,
  base_hash TEXT NOT NULL,
  event_uuid TEXT NOT NULL,
  day TEXT NOT NULL,
  PRIMARY KEY (team_id, base_hash, event_uuid)
) WITHOUT ROWID;
CREATE TABLE cookieless_sessions (
  team_id INTEGER NOT NULL,
  hash TEXT NOT NULL,
  session_id TEXT NOT NULL,
  last_activity INTEGER NOT NULL,
  day TEXT NOT NULL,
  PRIMARY KEY (team_id, hash)
) WITHOUT ROWID;
`,
  },
]
