/**
 * Schema of management.db, in order: the first schema (management-initial.ts), then each change since (experiment
 * holdouts and shared metrics, cohorts, their calculations, …), never edited once shipped.
 */
import type { Migration } from '../database.js'
import { MANAGEMENT_INITIAL } from './management-initial.js'

export const MANAGEMENT_MIGRATIONS: readonly Migration[] = [
  MANAGEMENT_INITIAL,
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
  {
    version: 17,
    name: 'exported assets',
    // PostHog's ExportedAsset: a CSV export of a list or a query (management/exports/), its CSV kept in the row
    // (PostHog's `content` column; skylark has no object storage). created_by is the user whose key made it: the
    // list shows each user their own.
    sql: `
CREATE TABLE exported_assets (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  team_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  export_format TEXT NOT NULL,
  export_context TEXT,
  created_by INTEGER,
  created_at TEXT NOT NULL,
  expires_after TEXT,
  exception TEXT,
  content TEXT
);
CREATE INDEX exported_assets_team ON exported_assets(team_id, created_by, id);
`,
  },
]
