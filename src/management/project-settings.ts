/**
 * PATCH of a project (or its environment) as PostHog's ProjectBackwardCompatSerializer / TeamSerializer
 * take it, for the settings skylark keeps: `name` (CharField, 1–200 characters, trimmed, unique in the
 * organisation ignoring case: 409 otherwise), `anonymize_ips` (BooleanField), `timezone` (a ChoiceField
 * over pytz's zone names, posthog/models/team/team.py: `"X" is not a valid choice.` otherwise) and
 * `cookieless_server_hash_mode` (0, 1 or 2, or null: persons/cookieless.ts), admin settings
 * there (posthog/api/team_config.py TEAM_CONFIG_ADMIN_FIELDS_SET, refused by validate_team_attrs with 403), and
 * `test_account_filters` (event, person and cohort filters) and `modifiers` (the bounce rate's two), which any
 * member may change.
 * Read-only fields and names the serializer doesn't know are ignored, as DRF ignores them; a setting
 * PostHog keeps and skylark doesn't is accepted only with the value skylark answers for it, so a client
 * never believes a change was made that wasn't.
 */
import { drfBoolean, drfDict, drfText } from '../common/drf-fields.js'
import { AppError, ValidationError } from '../common/errors.js'
import { isPlainObject, type JsonObject } from '../common/json.js'
import { pyStr, pyTypeName } from '../common/python-format.js'
import { DEFAULT_BOUNCE, isBounceMode, readPropertyFilter, type BounceRule, type NodeRules } from '../storage/events/index.js'
import { isTimeZoneName } from '../common/time-zones.js'
import { MembershipLevel, type Accounts, type Project } from './accounts.js'

/** Writable settings of PostHog's project that skylark doesn't keep, with the value skylark answers (undefined: not answered). */
const FIXED_SETTINGS: Record<string, unknown> = {
  product_description: null,
  app_urls: [],
  completed_snippet_onboarding: false,
  has_completed_onboarding_for: null,
  is_demo: false,
  access_control: false,
  session_recording_opt_in: false,
  week_start_day: null,
  primary_dashboard: null,
  inject_web_apps: false,
  ...Object.fromEntries(
    [
      'test_account_filters_default_checked', 'path_cleaning_filters', 'data_attributes', 'person_display_name_properties',
      'correlation_config', 'autocapture_opt_out', 'autocapture_exceptions_opt_in', 'autocapture_web_vitals_opt_in',
      'autocapture_web_vitals_allowed_metrics', 'autocapture_exceptions_errors_to_ignore', 'capture_console_log_opt_in',
      'capture_performance_opt_in', 'session_recording_sample_rate', 'session_recording_minimum_duration_milliseconds',
      'session_recording_linked_flag', 'session_recording_network_payload_capture_config', 'session_recording_masking_config',
      'session_recording_url_trigger_config', 'session_recording_url_blocklist_config', 'session_recording_event_trigger_config',
      'session_recording_trigger_match_type_config', 'session_recording_trigger_groups', 'session_recording_retention_period',
      'session_replay_config', 'survey_config', 'live_events_columns', 'recording_domains', 'extra_settings',
      'surveys_opt_in', 'heatmaps_opt_in', 'flags_persistence_default', 'receive_org_level_activity_logs', 'business_model',
      'conversations_enabled', 'conversations_settings', 'logs_settings', 'proactive_tasks_enabled', 'revenue_analytics_config',
      'marketing_analytics_config', 'customer_analytics_config', 'workflows_config', 'base_currency', 'capture_dead_clicks',
      'human_friendly_comparison_periods', 'feature_flag_confirmation_enabled',
      'feature_flag_confirmation_message', 'default_evaluation_contexts_enabled', 'require_evaluation_contexts',
      'default_data_theme', 'onboarding_tasks', 'web_analytics_pre_aggregated_tables_enabled',
    ].map((name) => [name, undefined]),
  ),
}

const ADMIN_SETTINGS = ['anonymize_ips', 'cookieless_server_hash_mode', 'name', 'timezone'] as const

export interface ProjectChanges {
  name?: string
  anonymize_ips?: boolean
  timezone?: string
  /** JSON text of the filters. */
  test_account_filters?: string
  /** JSON text of the modifiers after the PATCH (`null` for none). */
  modifiers?: string
  /** 0 disabled, 1 stateless, 2 stateful, or null (read as disabled). */
  cookieless_server_hash_mode?: number | null
}

/** Reads a PATCH body into the changes skylark makes, with DRF's messages, in the serializer's field order. */
export function parseProjectPatch(body: unknown, project: Project, accounts: Accounts): ProjectChanges {
  const data = drfDict(body)
  const changes: ProjectChanges = {}
  if ('name' in data) changes.name = projectName(data.name, project, accounts)
  if ('anonymize_ips' in data) {
    if (data.anonymize_ips === null) throw new ValidationError('null', 'This field may not be null.', 'anonymize_ips')
    changes.anonymize_ips = drfBoolean(data.anonymize_ips, 'anonymize_ips')
  }
  if ('timezone' in data) changes.timezone = timeZone(data.timezone)
  if ('cookieless_server_hash_mode' in data) changes.cookieless_server_hash_mode = cookielessMode(data.cookieless_server_hash_mode)
  if ('test_account_filters' in data) changes.test_account_filters = JSON.stringify(testAccountFilters(data.test_account_filters))
  if ('modifiers' in data) changes.modifiers = JSON.stringify(modifiers(data.modifiers, project))
  for (const [field, value] of Object.entries(data)) {
    if (!(field in FIXED_SETTINGS)) continue
    const answered = FIXED_SETTINGS[field]
    if (answered === undefined || JSON.stringify(value) !== JSON.stringify(answered)) {
      const keeps = answered === undefined ? 'does not keep this setting' : `keeps this setting at ${JSON.stringify(answered)}`
      throw new ValidationError('unsupported', `skylark ${keeps}.`, field)
    }
  }
  return changes
}

function projectName(value: unknown, project: Project, accounts: Accounts): string {
  const name = drfText(value, 'name', { maxLength: 200 })
  if (name === project.name) return name
  const taken = accounts
    .projects()
    .some((p) => p.organization_id === project.organization_id && p.id !== project.id && p.name.trim().toLowerCase() === name.toLowerCase())
  if (taken) {
    throw new AppError('conflict', { detail: `There is already a project called "${name}" in this organization. Choose a different name.` })
  }
  return name
}

/** DRF's ChoiceField: the value as `str()` reads it must be one of the choices; blank is no choice. */
function timeZone(value: unknown): string {
  if (value === null) throw new ValidationError('null', 'This field may not be null.', 'timezone')
  const name = typeof value === 'string' ? value : pyStr(value)
  if (typeof value !== 'string' || !isTimeZoneName(name)) throw new ValidationError('invalid_choice', `"${name}" is not a valid choice.`, 'timezone')
  return name
}

/** DRF's ChoiceField over the SmallIntegerField's choices (0, 1, 2; null allowed): `str()` of the value must name one. */
function cookielessMode(value: unknown): number | null {
  if (value === null) return null
  const text = typeof value === 'string' ? value : pyStr(value)
  if ((typeof value !== 'string' && typeof value !== 'number') || !['0', '1', '2'].includes(text)) {
    throw new ValidationError('invalid_choice', `"${text}" is not a valid choice.`, 'cookieless_server_hash_mode')
  }
  return Number(text)
}

/**
 * PostHog's validate_test_account_filters: a list of property filters. skylark keeps the event, person and
 * cohort ones (the kinds its experiments evaluate; experiments/query/person-filters.ts) and refuses the others
 * by name.
 */
function testAccountFilters(value: unknown): JsonObject[] {
  const refuse = (why: string) => new ValidationError('invalid', `Must provide an array of valid property filters. ${why}`, 'test_account_filters')
  if (!Array.isArray(value)) throw refuse(`Expected a list, got ${pyTypeName(value)}.`)
  const rules: NodeRules = {
    kind: (type) => (type === 'event' || type === 'person' ? (filter) => filter : undefined),
    refuse: (r) => {
      if (r.why === 'type') throw refuse(`skylark keeps event, person and cohort filters here, not ${JSON.stringify(r.node.type ?? null)} (${r.path}).`)
      throw refuse(r.why === 'no_key' ? `A filter needs a key (${r.path}).` : r.why === 'operator' ? `Unknown operator ${JSON.stringify(r.node.operator)} (${r.path}).` : r.why === 'value' ? `A filter's value must be a scalar or a list of them (${r.path}).` : `Every filter must be an object (${r.path}).`)
    },
  }
  return value.map((item, i) => {
    const path = `test_account_filters[${i}]`
    if (!isPlainObject(item)) return rules.refuse({ why: 'not_object', path })
    if (item.type === 'cohort') {
      // PostHog's CohortPropertyFilter: a cohort id, `in` (the default) or `not_in` it.
      if (!Number.isSafeInteger(item.value)) throw refuse(`A cohort filter's value is a cohort id (${path}).`)
      if (!(item.operator === undefined || item.operator === null || item.operator === 'in' || item.operator === 'not_in')) throw refuse(`A cohort filter's operator is in or not_in (${path}).`)
      return item
    }
    readPropertyFilter(item, path, rules)
    return item
  })
}

/** The HogQL query modifiers skylark keeps: those of the bounce rate, which experiments' `$is_bounce` reads. */
const KEPT_MODIFIERS = ['bounceRateDurationSeconds', 'bounceRatePageViewMode']

/**
 * TeamSerializer.validate_modifiers: null, or an object whose `bounceRateDurationSeconds` is a number of
 * seconds from 1 to 120 and whose `bounceRatePageViewMode` is one of PostHog's modes (either may be null).
 * PostHog merges it into the modifiers the project has (`{**instance.modifiers, **value}`); null clears them.
 * A key skylark does not keep is refused by name, where PostHog would keep it.
 */
function modifiers(value: unknown, project: Project): JsonObject | null {
  if (value === null) return null
  if (!isPlainObject(value)) throw new ValidationError('invalid', 'Must provide a dictionary or None.', 'modifiers')
  for (const key of Object.keys(value)) {
    if (!KEPT_MODIFIERS.includes(key)) throw new ValidationError('unsupported', `skylark keeps only ${KEPT_MODIFIERS.join(' and ')} of the modifiers.`, `modifiers__${key}`)
  }
  const seconds = value.bounceRateDurationSeconds
  if (seconds !== undefined && seconds !== null) {
    const attr = 'modifiers__bounceRateDurationSeconds'
    if (typeof seconds !== 'number') throw new ValidationError('invalid', 'Must be a number.', attr)
    if (seconds < 1 || seconds > 120) throw new ValidationError('invalid', 'Must be between 1 and 120 seconds.', attr)
  }
  const mode = value.bounceRatePageViewMode
  if (mode !== undefined && mode !== null && !isBounceMode(mode)) throw new ValidationError('invalid', 'Invalid modifier key.', 'modifiers')
  return { ...storedModifiers(project), ...value }
}

const storedModifiers = (project: Project): JsonObject => (JSON.parse(project.modifiers) as JsonObject | null) ?? {}

/** When a session of the project bounces: its modifiers where set, PostHog's defaults elsewhere. */
export function bounceRule(project: Project): BounceRule {
  const set = storedModifiers(project)
  return {
    seconds: typeof set.bounceRateDurationSeconds === 'number' ? set.bounceRateDurationSeconds : DEFAULT_BOUNCE.seconds,
    mode: isBounceMode(set.bounceRatePageViewMode) ? set.bounceRatePageViewMode : DEFAULT_BOUNCE.mode,
  }
}

/** PostHog's validate_team_attrs: only organisation admins (and owners) change admin settings. */
export function requireProjectAdmin(changes: ProjectChanges, membershipLevel: number | null): void {
  const touched = ADMIN_SETTINGS.filter((field) => changes[field] !== undefined)
  if (touched.length > 0 && (membershipLevel === null || membershipLevel < MembershipLevel.admin)) {
    throw new AppError('permission_denied', { detail: `Only project admins can modify these settings: ${touched.join(', ')}` })
  }
}
