/**
 * A shared ("saved") metric as stored (one row of `experiment_saved_metrics`, management.db version 9) and
 * an experiment's link to one (`experiment_to_saved_metrics`), as PostHog's ExperimentSavedMetric and
 * ExperimentToSavedMetric models hold them.
 */
import { isPlainObject, type JsonObject } from '../../common/json.js'

export interface SavedMetricRecord {
  id: number
  team_id: number
  name: string
  description: string | null
  /** An ExperimentMetric with the `uuid` the metric keeps for life. */
  query: JsonObject
  tags: string[]
  created_by_id: number | null
  created_at: string
  updated_at: string
}

export type SavedMetricRow = Omit<SavedMetricRecord, 'query' | 'tags'> & { query: string; tags: string }

export interface SavedMetricLinkRecord {
  id: number
  experiment_id: number
  saved_metric_id: number
  /** `{type: "primary" | "secondary", …}`: the list of the experiment the metric counts in. */
  metadata: JsonObject
  created_at: string
  updated_at: string
}

export type SavedMetricLinkRow = Omit<SavedMetricLinkRecord, 'metadata'> & { metadata: string }

function parseObject(text: string): JsonObject {
  try {
    const value: unknown = JSON.parse(text)
    return isPlainObject(value) ? value : {}
  } catch {
    return {}
  }
}

export function toSavedMetric(row: SavedMetricRow): SavedMetricRecord {
  const tags: unknown = JSON.parse(row.tags)
  return { ...row, query: parseObject(row.query), tags: Array.isArray(tags) ? tags.filter((t): t is string => typeof t === 'string') : [] }
}

export function toSavedMetricRow(record: SavedMetricRecord): SavedMetricRow {
  return { ...record, query: JSON.stringify(record.query), tags: JSON.stringify(record.tags) }
}

export const toLink = (row: SavedMetricLinkRow): SavedMetricLinkRecord => ({ ...row, metadata: parseObject(row.metadata) })

/** PostHog files a link under the primary metrics when its type is `primary` or absent; any other type is secondary. */
export const isPrimary = (metadata: JsonObject | null | undefined): boolean => !metadata || !('type' in metadata) || metadata.type === 'primary'
