/**
 * management.db as it first shipped (migration 1): organisations, projects, users, keys, roles, flags,
 * experiments, early-access features, scheduled changes, annotations, actions, activity. Every change since is a
 * migration of its own in management.ts, in order.
 */
import type { Migration } from '../database.js'

export const MANAGEMENT_INITIAL: Migration = {
  version: 1,
  name: 'initial',
  sql: `
CREATE TABLE organizations (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE TABLE users (
  id INTEGER PRIMARY KEY,
  uuid TEXT NOT NULL UNIQUE,
  distinct_id TEXT NOT NULL UNIQUE,
  first_name TEXT NOT NULL DEFAULT '',
  last_name TEXT NOT NULL DEFAULT '',
  email TEXT NOT NULL UNIQUE,
  is_email_verified INTEGER NOT NULL DEFAULT 0,
  hedgehog_config TEXT,
  created_at TEXT NOT NULL
);
-- level follows PostHog's OrganizationMembership: 1 member, 8 admin, 15 owner.
CREATE TABLE organization_memberships (
  organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  level INTEGER NOT NULL,
  joined_at TEXT NOT NULL,
  PRIMARY KEY (organization_id, user_id)
);
CREATE TABLE projects (
  id INTEGER PRIMARY KEY,
  organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  api_token TEXT NOT NULL UNIQUE,
  anonymize_ips INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
-- secure_value is 'sha256$<hex>' of the key; the key itself is never stored.
CREATE TABLE personal_api_keys (
  id TEXT PRIMARY KEY,
  user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  label TEXT NOT NULL,
  secure_value TEXT NOT NULL UNIQUE,
  mask_value TEXT NOT NULL,
  scopes TEXT NOT NULL,
  scoped_teams TEXT,
  created_at TEXT NOT NULL,
  last_used_at TEXT,
  revoked_at TEXT
);
CREATE TABLE roles (
  id TEXT PRIMARY KEY,
  organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  feature_flags_access_level INTEGER NOT NULL DEFAULT 37,
  created_by_id INTEGER REFERENCES users(id) ON DELETE SET NULL,
  created_at TEXT NOT NULL,
  UNIQUE (organization_id, name)
);
CREATE TABLE role_memberships (
  id TEXT PRIMARY KEY,
  role_id TEXT NOT NULL REFERENCES roles(id) ON DELETE CASCADE,
  user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  joined_at TEXT NOT NULL,
  UNIQUE (role_id, user_id)
);
CREATE TABLE dashboards (
  id INTEGER PRIMARY KEY,
  team_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  description TEXT NOT NULL DEFAULT '',
  tiles TEXT NOT NULL DEFAULT '[]',
  deleted INTEGER NOT NULL DEFAULT 0,
  created_by_id INTEGER REFERENCES users(id) ON DELETE SET NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE TABLE feature_flags (
  id INTEGER PRIMARY KEY,
  team_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  key TEXT NOT NULL,
  name TEXT NOT NULL DEFAULT '',
  filters TEXT NOT NULL DEFAULT '{}',
  deleted INTEGER NOT NULL DEFAULT 0,
  active INTEGER NOT NULL DEFAULT 1,
  ensure_experience_continuity INTEGER NOT NULL DEFAULT 0,
  rollback_conditions TEXT,
  performed_rollback INTEGER NOT NULL DEFAULT 0,
  tags TEXT NOT NULL DEFAULT '[]',
  analytics_dashboards TEXT NOT NULL DEFAULT '[]',
  has_enriched_analytics INTEGER NOT NULL DEFAULT 0,
  usage_dashboard_id INTEGER REFERENCES dashboards(id) ON DELETE SET NULL,
  evaluation_runtime TEXT NOT NULL DEFAULT 'all',
  is_remote_configuration INTEGER NOT NULL DEFAULT 0,
  has_encrypted_payloads INTEGER NOT NULL DEFAULT 0,
  version INTEGER NOT NULL DEFAULT 1,
  created_by_id INTEGER REFERENCES users(id) ON DELETE SET NULL,
  last_modified_by_id INTEGER REFERENCES users(id) ON DELETE SET NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
-- A deleted flag's key may be reused, so uniqueness covers live flags only.
CREATE UNIQUE INDEX feature_flags_live_key ON feature_flags(team_id, key) WHERE deleted = 0;
CREATE INDEX feature_flags_team ON feature_flags(team_id, deleted, created_at);
CREATE TABLE feature_flag_role_access (
  id INTEGER PRIMARY KEY,
  feature_flag_id INTEGER NOT NULL REFERENCES feature_flags(id) ON DELETE CASCADE,
  role_id TEXT NOT NULL REFERENCES roles(id) ON DELETE CASCADE,
  added_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (feature_flag_id, role_id)
);
CREATE TABLE cohorts (
  id INTEGER PRIMARY KEY,
  team_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  name TEXT NOT NULL DEFAULT '',
  description TEXT NOT NULL DEFAULT '',
  filters TEXT NOT NULL DEFAULT '{}',
  is_static INTEGER NOT NULL DEFAULT 0,
  deleted INTEGER NOT NULL DEFAULT 0,
  count INTEGER,
  version INTEGER NOT NULL DEFAULT 1,
  created_by_id INTEGER REFERENCES users(id) ON DELETE SET NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE TABLE experiments (
  id INTEGER PRIMARY KEY,
  team_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  description TEXT NOT NULL DEFAULT '',
  feature_flag_id INTEGER NOT NULL REFERENCES feature_flags(id),
  exposure_cohort_id INTEGER REFERENCES cohorts(id) ON DELETE SET NULL,
  start_date TEXT,
  end_date TEXT,
  parameters TEXT,
  secondary_metrics TEXT NOT NULL DEFAULT '[]',
  filters TEXT NOT NULL DEFAULT '{}',
  archived INTEGER NOT NULL DEFAULT 0,
  deleted INTEGER NOT NULL DEFAULT 0,
  type TEXT NOT NULL DEFAULT 'product',
  created_by_id INTEGER REFERENCES users(id) ON DELETE SET NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX experiments_team ON experiments(team_id, deleted, created_at);
CREATE TABLE activity_log (
  id INTEGER PRIMARY KEY,
  team_id INTEGER REFERENCES projects(id) ON DELETE CASCADE,
  organization_id TEXT,
  user_id INTEGER REFERENCES users(id) ON DELETE SET NULL,
  is_system INTEGER NOT NULL DEFAULT 0,
  activity TEXT NOT NULL,
  scope TEXT NOT NULL,
  item_id TEXT NOT NULL,
  detail TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX activity_log_item ON activity_log(team_id, scope, item_id, id);
`,
}
