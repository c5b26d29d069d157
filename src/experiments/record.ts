/** An experiment as stored (one row of `experiments`) and as the domain handles it (parsed JSON, booleans). */
import { isPlainObject, type JsonObject } from '../common/json.js'

/**
 * The fields of PostHog's new metrics engine and conclusion (management.db version 4). Skylark stores and
 * answers them; results are still computed from `filters` and `secondary_metrics`.
 */
export interface ExperimentSettings {
  metrics: JsonObject[] | null
  metrics_secondary: JsonObject[] | null
  primary_metrics_ordered_uuids: string[] | null
  secondary_metrics_ordered_uuids: string[] | null
  stats_config: JsonObject | null
  exposure_criteria: JsonObject | null
  /** Any JSON, as PostHog's JSONField takes it. */
  scheduling_config: unknown
  running_time_calculation: JsonObject | null
  excluded_variants: string[] | null
  only_count_matured_users: boolean
  conclusion: string | null
  conclusion_comment: string | null
}

export const SETTINGS_KEYS = [
  'metrics',
  'metrics_secondary',
  'primary_metrics_ordered_uuids',
  'secondary_metrics_ordered_uuids',
  'stats_config',
  'exposure_criteria',
  'scheduling_config',
  'running_time_calculation',
  'excluded_variants',
  'only_count_matured_users',
  'conclusion',
  'conclusion_comment',
] as const satisfies ReadonlyArray<keyof ExperimentSettings>

export interface ExperimentRecord extends ExperimentSettings {
  id: number
  team_id: number
  name: string
  description: string
  feature_flag_id: number
  exposure_cohort_id: number | null
  /** The project's holdout the experiment's flag holds out (management.db version 8). */
  holdout_id: number | null
  /** ISO 8601 (UTC, milliseconds); null while a draft. */
  start_date: string | null
  end_date: string | null
  parameters: JsonObject | null
  secondary_metrics: JsonObject[]
  filters: JsonObject
  archived: boolean
  deleted: boolean
  type: string
  created_by_id: number | null
  created_at: string
  updated_at: string
}

type JsonColumn = Exclude<(typeof SETTINGS_KEYS)[number], 'only_count_matured_users' | 'conclusion' | 'conclusion_comment'>
const JSON_COLUMNS: readonly JsonColumn[] = SETTINGS_KEYS.filter(
  (key): key is JsonColumn => key !== 'only_count_matured_users' && key !== 'conclusion' && key !== 'conclusion_comment',
)

export type ExperimentRow = Omit<ExperimentRecord, 'parameters' | 'secondary_metrics' | 'filters' | 'archived' | 'deleted' | JsonColumn | 'only_count_matured_users'> & {
  parameters: string | null
  secondary_metrics: string
  filters: string
  archived: number
  deleted: number
  only_count_matured_users: number
} & Record<JsonColumn, string | null>

function parseJson(text: string | null): unknown {
  if (text === null) return null
  try {
    return JSON.parse(text) as unknown
  } catch {
    return null
  }
}

const objectOrNull = (value: unknown): JsonObject | null => (isPlainObject(value) ? value : null)
const objectsOrNull = (value: unknown): JsonObject[] | null => (Array.isArray(value) ? value.filter(isPlainObject) : null)
const stringsOrNull = (value: unknown): string[] | null =>
  Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : null

export function toRecord(row: ExperimentRow): ExperimentRecord {
  const parameters = parseJson(row.parameters)
  const secondary = parseJson(row.secondary_metrics)
  const filters = parseJson(row.filters)
  return {
    ...row,
    parameters: objectOrNull(parameters),
    secondary_metrics: Array.isArray(secondary) ? secondary.filter(isPlainObject) : [],
    filters: isPlainObject(filters) ? filters : {},
    archived: row.archived === 1,
    deleted: row.deleted === 1,
    metrics: objectsOrNull(parseJson(row.metrics)),
    metrics_secondary: objectsOrNull(parseJson(row.metrics_secondary)),
    primary_metrics_ordered_uuids: stringsOrNull(parseJson(row.primary_metrics_ordered_uuids)),
    secondary_metrics_ordered_uuids: stringsOrNull(parseJson(row.secondary_metrics_ordered_uuids)),
    stats_config: objectOrNull(parseJson(row.stats_config)),
    exposure_criteria: objectOrNull(parseJson(row.exposure_criteria)),
    scheduling_config: parseJson(row.scheduling_config),
    running_time_calculation: objectOrNull(parseJson(row.running_time_calculation)),
    excluded_variants: stringsOrNull(parseJson(row.excluded_variants)),
    only_count_matured_users: row.only_count_matured_users === 1,
  }
}

export function toRow(record: ExperimentRecord): ExperimentRow {
  const row = {
    ...record,
    parameters: record.parameters === null ? null : JSON.stringify(record.parameters),
    secondary_metrics: JSON.stringify(record.secondary_metrics),
    filters: JSON.stringify(record.filters),
    archived: record.archived ? 1 : 0,
    deleted: record.deleted ? 1 : 0,
    only_count_matured_users: record.only_count_matured_users ? 1 : 0,
  } as unknown as ExperimentRow
  for (const key of JSON_COLUMNS) {
    const value = record[key]
    row[key] = value === null || value === undefined ? null : JSON.stringify(value)
  }
  return row
}

/**
 * The fields the activity log compares, in the order of PostHog's model. `feature_flag` and
 * `exposure_cohort` are listed so the scope's exclusions (activity-log.ts) decide, as in PostHog.
 */
export function activitySnapshot(e: ExperimentRecord): Record<string, unknown> {
  return {
    name: e.name,
    description: e.description,
    filters: e.filters,
    parameters: e.parameters,
    secondary_metrics: e.secondary_metrics,
    feature_flag: e.feature_flag_id,
    exposure_cohort: e.exposure_cohort_id,
    start_date: e.start_date,
    end_date: e.end_date,
    archived: e.archived,
    deleted: e.deleted,
    type: e.type,
    exposure_criteria: e.exposure_criteria,
    metrics: e.metrics,
    metrics_secondary: e.metrics_secondary,
    primary_metrics_ordered_uuids: e.primary_metrics_ordered_uuids,
    secondary_metrics_ordered_uuids: e.secondary_metrics_ordered_uuids,
    stats_config: e.stats_config,
    scheduling_config: e.scheduling_config,
    running_time_calculation: e.running_time_calculation,
    excluded_variants: e.excluded_variants,
    only_count_matured_users: e.only_count_matured_users,
    conclusion: e.conclusion,
    conclusion_comment: e.conclusion_comment,
  }
}
