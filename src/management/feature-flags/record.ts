/** A feature flag as stored (one row of `feature_flags`) and as the domain handles it (parsed JSON, booleans). */
import type { JsonObject } from '../../common/json.js'

export interface FeatureFlagRecord {
  id: number
  team_id: number
  key: string
  name: string
  filters: JsonObject
  deleted: boolean
  active: boolean
  ensure_experience_continuity: boolean
  rollback_conditions: unknown
  performed_rollback: boolean
  tags: string[]
  /** The tags that limit where the flag is evaluated (`evaluation_environments` of a /flags request). */
  evaluation_tags: string[]
  analytics_dashboards: number[]
  has_enriched_analytics: boolean
  usage_dashboard_id: number | null
  evaluation_runtime: string
  /** null (the distinct id) or `device_id`: what person conditions hash. */
  bucketing_identifier: string | null
  is_remote_configuration: boolean
  has_encrypted_payloads: boolean
  version: number
  created_by_id: number | null
  last_modified_by_id: number | null
  created_at: string
  updated_at: string
}

export interface FeatureFlagRow {
  id: number
  team_id: number
  key: string
  name: string
  filters: string
  deleted: number
  active: number
  ensure_experience_continuity: number
  rollback_conditions: string | null
  performed_rollback: number
  tags: string
  evaluation_tags: string
  analytics_dashboards: string
  has_enriched_analytics: number
  usage_dashboard_id: number | null
  evaluation_runtime: string
  bucketing_identifier: string | null
  is_remote_configuration: number
  has_encrypted_payloads: number
  version: number
  created_by_id: number | null
  last_modified_by_id: number | null
  created_at: string
  updated_at: string
}

export function toRecord(row: FeatureFlagRow): FeatureFlagRecord {
  return {
    ...row,
    filters: JSON.parse(row.filters) as JsonObject,
    deleted: row.deleted === 1,
    active: row.active === 1,
    ensure_experience_continuity: row.ensure_experience_continuity === 1,
    rollback_conditions: row.rollback_conditions === null ? null : (JSON.parse(row.rollback_conditions) as unknown),
    performed_rollback: row.performed_rollback === 1,
    tags: JSON.parse(row.tags) as string[],
    evaluation_tags: JSON.parse(row.evaluation_tags) as string[],
    analytics_dashboards: JSON.parse(row.analytics_dashboards) as number[],
    has_enriched_analytics: row.has_enriched_analytics === 1,
    is_remote_configuration: row.is_remote_configuration === 1,
    has_encrypted_payloads: row.has_encrypted_payloads === 1,
  }
}

export function toRow(record: FeatureFlagRecord): FeatureFlagRow {
  const bit = (b: boolean) => (b ? 1 : 0)
  return {
    ...record,
    filters: JSON.stringify(record.filters),
    deleted: bit(record.deleted),
    active: bit(record.active),
    ensure_experience_continuity: bit(record.ensure_experience_continuity),
    rollback_conditions: record.rollback_conditions === null || record.rollback_conditions === undefined ? null : JSON.stringify(record.rollback_conditions),
    performed_rollback: bit(record.performed_rollback),
    tags: JSON.stringify(record.tags),
    evaluation_tags: JSON.stringify(record.evaluation_tags),
    analytics_dashboards: JSON.stringify(record.analytics_dashboards),
    has_enriched_analytics: bit(record.has_enriched_analytics),
    is_remote_configuration: bit(record.is_remote_configuration),
    has_encrypted_payloads: bit(record.has_encrypted_payloads),
  }
}

/**
 * The fields the activity log compares, in the order PostHog's model lists them (`tagged_items`, a
 * reverse relation, comes first and is reported as `tags`).
 */
export function activitySnapshot(flag: FeatureFlagRecord): Record<string, unknown> {
  return {
    tags: flag.tags,
    key: flag.key,
    name: flag.name,
    filters: flag.filters,
    deleted: flag.deleted,
    active: flag.active,
    version: flag.version,
    rollback_conditions: flag.rollback_conditions,
    performed_rollback: flag.performed_rollback,
    ensure_experience_continuity: flag.ensure_experience_continuity,
    has_enriched_analytics: flag.has_enriched_analytics,
    is_remote_configuration: flag.is_remote_configuration,
    has_encrypted_payloads: flag.has_encrypted_payloads,
    evaluation_runtime: flag.evaluation_runtime,
    bucketing_identifier: flag.bucketing_identifier,
    evaluation_tags: flag.evaluation_tags,
  }
}

/** `filters` with each property of its `groups` (or `super_groups`) conditions passed through `map`. */
export function mapConditionProperties(filters: JsonObject, list: 'groups' | 'super_groups', map: (property: JsonObject) => JsonObject): JsonObject {
  if (!Array.isArray(filters[list])) return filters
  const conditions = (filters[list] as JsonObject[]).map((c) =>
    Array.isArray(c.properties) ? { ...c, properties: (c.properties as JsonObject[]).map(map) } : c,
  )
  return { ...filters, [list]: conditions }
}

/** Flag-type conditions in the release groups: the ids of the flags this one depends on. */
export function flagDependencyRefs(filters: JsonObject): unknown[] {
  const refs: unknown[] = []
  const groups = Array.isArray(filters.groups) ? filters.groups : []
  for (const group of groups) {
    const props = (group as { properties?: unknown }).properties
    if (!Array.isArray(props)) continue
    for (const prop of props as Array<{ type?: unknown; key?: unknown }>) {
      if (prop && prop.type === 'flag' && prop.key !== undefined && prop.key !== null && prop.key !== '') refs.push(prop.key)
    }
  }
  return refs
}

/** "5", 5 → 5; anything else → null (PostHog's `safe_int`). */
export function safeInt(value: unknown): number | null {
  if (typeof value === 'number') return Number.isInteger(value) ? value : null
  if (typeof value === 'string' && /^\s*-?\d+\s*$/.test(value)) return Number(value)
  return null
}
