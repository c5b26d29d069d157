/** Schema of management.db: organisations, projects, users, keys, roles, flags, experiments, experiment holdouts and shared metrics, early-access features, scheduled changes, annotations, actions, activity. */
import type { Migration } from '../database.js'

export const MANAGEMENT_MIGRATIONS: readonly Migration[] = [
  {
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
  },
  {
    // PostHog's Team.secret_api_token: a server-only key (`phs_…`) that reads the project's flag definitions
    // and remote config. Projects made before it get one here (SQLite's randomblob draws from the OS).
    version: 2,
    name: 'project secret api keys',
    sql: `
ALTER TABLE projects ADD COLUMN secret_api_token TEXT;
UPDATE projects SET secret_api_token = 'phs_' || lower(hex(randomblob(24))) WHERE secret_api_token IS NULL;
CREATE UNIQUE INDEX projects_secret_api_token ON projects(secret_api_token);
`,
  },
  {
    // PostHog's flag fields the API had dropped: evaluation tags (a subset of the flag's tags that limits the
    // requests it is evaluated for) and the bucketing identifier (null, or "device_id")
    version: 3,
    name: 'flag evaluation tags and bucketing identifier',
    sql: `
ALTER TABLE feature_flags ADD COLUMN evaluation_tags TEXT NOT NULL DEFAULT '[]';
ALTER TABLE feature_flags ADD COLUMN bucketing_identifier TEXT;
`,
  },
  {
    // PostHog's experiment fields the API had dropped: the new metrics engine's metrics and their order,
    // stats, exposure, scheduling and running-time settings, excluded variants, and the conclusion. JSON
    // columns hold the value as sent (NULL is JSON null); rows made before keep what the API answered for
    // them: empty metric lists, null settings.
    version: 4,
    name: 'experiment metrics, settings and conclusions',
    sql: `
ALTER TABLE experiments ADD COLUMN metrics TEXT DEFAULT '[]';
ALTER TABLE experiments ADD COLUMN metrics_secondary TEXT DEFAULT '[]';
ALTER TABLE experiments ADD COLUMN primary_metrics_ordered_uuids TEXT;
ALTER TABLE experiments ADD COLUMN secondary_metrics_ordered_uuids TEXT;
ALTER TABLE experiments ADD COLUMN stats_config TEXT;
ALTER TABLE experiments ADD COLUMN exposure_criteria TEXT;
ALTER TABLE experiments ADD COLUMN scheduling_config TEXT;
ALTER TABLE experiments ADD COLUMN running_time_calculation TEXT;
ALTER TABLE experiments ADD COLUMN excluded_variants TEXT;
ALTER TABLE experiments ADD COLUMN only_count_matured_users INTEGER NOT NULL DEFAULT 0;
ALTER TABLE experiments ADD COLUMN conclusion TEXT;
ALTER TABLE experiments ADD COLUMN conclusion_comment TEXT;
`,
  },
  {
    // PostHog's early access features: a feature in a stage, linked to the flag whose enrollment it drives (a
    // flag with features can't be deleted, so no ON DELETE); assigned to a user or a role of the organisation.
    // The id is a UUID, as PostHog's; posthog-js and the public list read it as text.
    version: 5,
    name: 'early access features',
    sql: `
CREATE TABLE early_access_features (
  id TEXT PRIMARY KEY,
  team_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  feature_flag_id INTEGER REFERENCES feature_flags(id),
  name TEXT NOT NULL,
  description TEXT NOT NULL DEFAULT '',
  stage TEXT NOT NULL,
  documentation_url TEXT NOT NULL DEFAULT '',
  payload TEXT NOT NULL DEFAULT '{}',
  created_by_id INTEGER REFERENCES users(id) ON DELETE SET NULL,
  assigned_user_id INTEGER REFERENCES users(id) ON DELETE SET NULL,
  assigned_role_id TEXT REFERENCES roles(id) ON DELETE SET NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX early_access_features_team ON early_access_features(team_id, created_at);
CREATE INDEX early_access_features_flag ON early_access_features(feature_flag_id);
`,
  },
  {
    // PostHog's ScheduledChange: a change to a flag (`payload`) applied at `scheduled_at` by the main thread's
    // applier, which records `executed_at` or `failure_reason` (JSON: the error and its retry state). Recurring
    // rows move `scheduled_at` forward instead. `record_id` is text, as PostHog's; no foreign key, so a change
    // outlives its flag and fails with a reason. Times are ISO 8601 with milliseconds and Z, so text order is
    // time order and the due index serves `scheduled_at <= now`.
    version: 6,
    name: 'scheduled changes',
    sql: `
CREATE TABLE scheduled_changes (
  id INTEGER PRIMARY KEY,
  team_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  record_id TEXT NOT NULL,
  model_name TEXT NOT NULL,
  payload TEXT NOT NULL,
  scheduled_at TEXT NOT NULL,
  executed_at TEXT,
  failure_reason TEXT,
  failure_count INTEGER NOT NULL DEFAULT 0,
  is_recurring INTEGER NOT NULL DEFAULT 0,
  recurrence_interval TEXT,
  last_executed_at TEXT,
  end_date TEXT,
  created_by_id INTEGER REFERENCES users(id) ON DELETE SET NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX scheduled_changes_due ON scheduled_changes(scheduled_at) WHERE executed_at IS NULL;
CREATE INDEX scheduled_changes_team ON scheduled_changes(team_id, model_name, record_id);
`,
  },
  {
    // PostHog's annotations: a note at a moment (date_marker) for a project, or with scope 'organization' for
    // every project of the organisation. Insights and recordings don't exist here, so there is no column for
    // them; a dashboard's annotations go with it (SET NULL, as PostHog's). Soft-deleted, never removed.
    version: 7,
    name: 'annotations',
    sql: `
CREATE TABLE annotations (
  id INTEGER PRIMARY KEY,
  team_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  content TEXT,
  date_marker TEXT,
  creation_type TEXT NOT NULL DEFAULT 'USR',
  scope TEXT NOT NULL DEFAULT 'dashboard_item',
  dashboard_id INTEGER REFERENCES dashboards(id) ON DELETE SET NULL,
  emoji TEXT,
  hidden_in_user_interface INTEGER,
  tags TEXT NOT NULL DEFAULT '[]',
  deleted INTEGER NOT NULL DEFAULT 0,
  created_by_id INTEGER REFERENCES users(id) ON DELETE SET NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX annotations_team ON annotations(team_id, date_marker);
CREATE INDEX annotations_organization ON annotations(organization_id, date_marker) WHERE scope = 'organization';
`,
  },
  {
    // PostHog's experiment holdouts: a share of people held out of every experiment that names the holdout (its
    // flag serves them `holdout-<id>`). `filters` is PostHog's list of release groups as JSON. Deleting a holdout
    // leaves its experiments without one, as PostHog's SET_NULL.
    version: 8,
    name: 'experiment holdouts',
    sql: `
CREATE TABLE experiment_holdouts (
  id INTEGER PRIMARY KEY,
  team_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  description TEXT,
  filters TEXT NOT NULL DEFAULT '[]',
  created_by_id INTEGER REFERENCES users(id) ON DELETE SET NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX experiment_holdouts_team ON experiment_holdouts(team_id, created_at);
ALTER TABLE experiments ADD COLUMN holdout_id INTEGER REFERENCES experiment_holdouts(id) ON DELETE SET NULL;
CREATE INDEX experiments_holdout ON experiments(holdout_id);
`,
  },
  {
    // PostHog's shared ("saved") experiment metrics and experiments' links to them. A link's metadata says which
    // list of the experiment the metric counts in ({"type": "primary" | "secondary"}); deleting a metric or an
    // experiment drops its links, as PostHog's cascades do. Numbered 9: versions 6 to 8 are other branches'.
    version: 9,
    name: 'experiment saved metrics',
    sql: `
CREATE TABLE experiment_saved_metrics (
  id INTEGER PRIMARY KEY,
  team_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  description TEXT,
  query TEXT NOT NULL,
  tags TEXT NOT NULL DEFAULT '[]',
  created_by_id INTEGER REFERENCES users(id) ON DELETE SET NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX experiment_saved_metrics_team ON experiment_saved_metrics(team_id);
CREATE TABLE experiment_to_saved_metrics (
  id INTEGER PRIMARY KEY,
  experiment_id INTEGER NOT NULL REFERENCES experiments(id) ON DELETE CASCADE,
  saved_metric_id INTEGER NOT NULL REFERENCES experiment_saved_metrics(id) ON DELETE CASCADE,
  metadata TEXT NOT NULL DEFAULT '{}',
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX experiment_to_saved_metrics_experiment ON experiment_to_saved_metrics(experiment_id);
CREATE INDEX experiment_to_saved_metrics_metric ON experiment_to_saved_metrics(saved_metric_id);
`,
  },
  {
    // PostHog's Action (products/actions/backend/models/action.py) with its steps as JSON, as PostHog's
    // steps_json keeps them; `last_calculated_at` is its deprecated field, set at creation, which lists sort by.
    version: 10,
    name: 'actions',
    sql: `
CREATE TABLE actions (
  id INTEGER PRIMARY KEY,
  team_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  name TEXT,
  description TEXT NOT NULL DEFAULT '',
  tags TEXT NOT NULL DEFAULT '[]',
  post_to_slack INTEGER NOT NULL DEFAULT 0,
  slack_message_format TEXT NOT NULL DEFAULT '',
  steps TEXT NOT NULL DEFAULT '[]',
  deleted INTEGER NOT NULL DEFAULT 0,
  pinned_at TEXT,
  created_by_id INTEGER REFERENCES users(id) ON DELETE SET NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  last_calculated_at TEXT NOT NULL
);
CREATE INDEX actions_team ON actions(team_id, deleted);
`,
  },
  {
    // PostHog's ScheduledChange.cron_expression: a recurring change may follow a five-field cron expression
    // (UTC) instead of recurrence_interval. Null on the rows written before, as PostHog's column is.
    version: 11,
    name: 'scheduled change cron expressions',
    sql: `ALTER TABLE scheduled_changes ADD COLUMN cron_expression TEXT;`,
  },
  {
    version: 12,
    name: 'project timezone',
    // Every project was UTC until now, and so was every scheduled change's wall clock: both start as 'UTC'.
    // A change keeps the timezone its project had when it was made, as PostHog's ScheduledChange.timezone.
    sql: `
ALTER TABLE projects ADD COLUMN timezone TEXT NOT NULL DEFAULT 'UTC';
ALTER TABLE scheduled_changes ADD COLUMN timezone TEXT NOT NULL DEFAULT 'UTC';
`,
  },
  {
    version: 13,
    name: 'project test account filters',
    // PostHog's Team.test_account_filters: a JSON list of property filters, none until set.
    sql: `ALTER TABLE projects ADD COLUMN test_account_filters TEXT NOT NULL DEFAULT '[]';`,
  },
  {
    version: 14,
    name: 'project modifiers',
    // PostHog's Team.modifiers: a JSON object of HogQL query modifiers, null until set.
    sql: `ALTER TABLE projects ADD COLUMN modifiers TEXT NOT NULL DEFAULT 'null';`,
  },
  {
    version: 15,
    name: 'project cookieless server hash mode',
    // PostHog's Team.cookieless_server_hash_mode: 0 disabled (the default), 1 stateless, 2 stateful; nullable there too.
    sql: `ALTER TABLE projects ADD COLUMN cookieless_server_hash_mode INTEGER DEFAULT 0;`,
  },
  {
    version: 16,
    name: 'cohort calculations',
    // PostHog's Cohort.is_calculating, last_calculation and errors_calculating, and its CohortCalculationHistory:
    // each count of a dynamic cohort's persons (management/cohorts/calculator.ts). Dynamic cohorts written before
    // start never calculated, so the calculator's first look counts them.
    sql: `
ALTER TABLE cohorts ADD COLUMN is_calculating INTEGER NOT NULL DEFAULT 0;
ALTER TABLE cohorts ADD COLUMN last_calculation TEXT;
ALTER TABLE cohorts ADD COLUMN errors_calculating INTEGER NOT NULL DEFAULT 0;
CREATE TABLE cohort_calculations (
  id TEXT PRIMARY KEY,
  team_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  cohort_id INTEGER NOT NULL REFERENCES cohorts(id) ON DELETE CASCADE,
  filters TEXT NOT NULL,
  count INTEGER,
  started_at TEXT NOT NULL,
  finished_at TEXT,
  query_ms INTEGER,
  error TEXT
);
CREATE INDEX cohort_calculations_cohort ON cohort_calculations(cohort_id, started_at);
`,
  },
]
