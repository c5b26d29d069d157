/** An experiment as stored (one row of `experiments`) and as the domain handles it (parsed JSON, booleans). */
import { isPlainObject, type JsonObject } from '../common/json.js'

export interface ExperimentRecord {
  id: number
  team_id: number
  name: string
  description: string
  feature_flag_id: number
  exposure_cohort_id: number | null
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

export interface ExperimentRow {
  id: number
  team_id: number
  name: string
  description: string
  feature_flag_id: number
  exposure_cohort_id: number | null
  start_date: string | null
  end_date: string | null
  parameters: string | null
  secondary_metrics: string
  filters: string
  archived: number
  deleted: number
  type: string
  created_by_id: number | null
  created_at: string
  updated_at: string
}

function parseJson(text: string | null): unknown {
  if (text === null) return null
  try {
    return JSON.parse(text) as unknown
  } catch {
    return null
  }
}

export function toRecord(row: ExperimentRow): ExperimentRecord {
  const parameters = parseJson(row.parameters)
  const secondary = parseJson(row.secondary_metrics)
  const filters = parseJson(row.filters)
  return {
    ...row,
    parameters: isPlainObject(parameters) ? parameters : null,
    secondary_metrics: Array.isArray(secondary) ? secondary.filter(isPlainObject) : [],
    filters: isPlainObject(filters) ? filters : {},
    archived: row.archived === 1,
    deleted: row.deleted === 1,
  }
}

export function toRow(record: ExperimentRecord): ExperimentRow {
  return {
    ...record,
    parameters: record.parameters === null ? null : JSON.stringify(record.parameters),
    secondary_metrics: JSON.stringify(record.secondary_metrics),
    filters: JSON.stringify(record.filters),
    archived: record.archived ? 1 : 0,
    deleted: record.deleted ? 1 : 0,
  }
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
  }
}
