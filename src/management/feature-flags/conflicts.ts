/**
 * PostHog's rule for a change based on a stale `version` (`_get_conflicting_changes`): it goes through unless
 * the body's `original_flag` (the flag as the client read it) shows that a field the change writes was
 * changed by someone else since, to a value other than the one written. Without `original_flag` nothing
 * conflicts, so scripts that send back a flag they read earlier are not refused.
 */
import { isPlainObject } from '../../common/json.js'
import type { FeatureFlagWrite } from '../../schemas/feature-flag.js'
import { jsonEqual } from '../activity-log.js'
import type { FeatureFlagRecord } from './record.js'

/** The stored fields a change can write, under the names the API gives them. */
const WRITABLE = [
  'name',
  'key',
  'filters',
  'deleted',
  'active',
  'created_at',
  'ensure_experience_continuity',
  'rollback_conditions',
  'performed_rollback',
  'tags',
  'analytics_dashboards',
  'has_enriched_analytics',
  'is_remote_configuration',
  'has_encrypted_payloads',
  'evaluation_runtime',
  'bucketing_identifier',
] as const

export function conflictingFields(current: FeatureFlagRecord, next: FeatureFlagRecord, body: FeatureFlagWrite, userId: number): string[] {
  const original = body.original_flag
  if (!isPlainObject(original) || Object.keys(original).length === 0) return []
  const written = new Set<string>(Object.keys(body))
  if (body.active) written.add('performed_rollback') // activating clears it
  const changed = (field: string, mine: unknown, theirs: unknown) =>
    field in original && !jsonEqual(mine, original[field]) && !jsonEqual(original[field], theirs) && !jsonEqual(mine, theirs)
  const conflicts: string[] = WRITABLE.filter((field) => written.has(field) && changed(field, next[field], current[field]))
  if (changed('version', body.version, current.version)) conflicts.push('version')
  // PostHog compares the user it writes with the object the client sent, which never match: an original_flag
  // naming last_modified_by conflicts whenever someone else saved the flag last.
  if ('last_modified_by' in original && current.last_modified_by_id !== userId) conflicts.push('last_modified_by')
  return conflicts
}
