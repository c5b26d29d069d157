/**
 * Turning a validated create/update body into the record to store, with PostHog's rules: field checks in
 * serializer order (key, filters, analytics dashboards), PATCH without `filters.groups` keeps the stored
 * filters, `active: true` clears `performed_rollback`, tags are normalised (trimmed, lower-case, unique), and
 * evaluation tags must be among the tags the body sends.
 */
import { iso } from '../../common/clock.js'
import { ValidationError } from '../../common/errors.js'
import type { JsonObject } from '../../common/json.js'
import { isConfigFormatOne } from '../../flags/index.js'
import type { FeatureFlagWrite } from '../../schemas/feature-flag.js'
import { mapConditionProperties, type FeatureFlagRecord } from './record.js'
import { refuseConfigVersion, validateFilters, validateKey, type FlagLookups } from './validation.js'

/** What a flag created with a key only evaluates with: one group, no conditions, everyone. */
export const DEFAULT_FILTERS: JsonObject = Object.freeze({ groups: [{ properties: [], rollout_percentage: null }] })

export function normaliseTags(tags: readonly string[]): string[] {
  return [...new Set(tags.map((t) => t.trim().toLowerCase()))].sort()
}

/**
 * The body's evaluation tags, normalised, once checked against the tags the same body sends (none when it
 * sends none, as PostHog's serializer reads them from the request, even on a PATCH); undefined when absent.
 */
function evaluationTags(body: FeatureFlagWrite): string[] | undefined {
  // `evaluation_contexts` is the field's current name in PostHog's API; `evaluation_tags` is still read
  const requested = body.evaluation_contexts ?? body.evaluation_tags
  if (requested === undefined) return undefined
  const tags = new Set(normaliseTags(body.tags ?? []))
  const evaluation = normaliseTags(requested)
  const invalid = evaluation.filter((t) => !tags.has(t))
  if (invalid.length > 0) throw new ValidationError('invalid', `Evaluation tags must be a subset of tags. Invalid evaluation tags: ${invalid.join(', ')}`)
  return evaluation
}

export interface ApplyContext {
  lookups: FlagLookups
  /** Which of the ids are dashboards of the project. */
  dashboards(ids: readonly number[]): Set<number>
}

function checkDashboards(ids: readonly number[] | undefined, ctx: ApplyContext): void {
  if (!ids) return
  const known = ctx.dashboards(ids)
  const missing = ids.find((id) => !known.has(id))
  if (missing !== undefined) {
    throw new ValidationError('does_not_exist', `Invalid pk "${missing}" - object does not exist.`, 'analytics_dashboards')
  }
}

/** The record a create body describes (without id, owner or timestamps). */
export function recordFromCreate(body: FeatureFlagWrite & { key: string }, ctx: ApplyContext) {
  validateKey(body.key, null, ctx.lookups)
  refuseConfigVersion(body.filters)
  const filters =
    body.filters === undefined
      ? structuredClone(DEFAULT_FILTERS)
      : validateFilters(body.filters, { creating: true, flagId: null, flagKey: body.key }, ctx.lookups)
  const evaluation = evaluationTags(body)
  checkDashboards(body.analytics_dashboards, ctx)
  const active = body.active ?? true
  return {
    key: body.key,
    name: body.name ?? '',
    filters,
    deleted: body.deleted ?? false,
    active,
    ensure_experience_continuity: body.ensure_experience_continuity ?? false,
    rollback_conditions: body.rollback_conditions ?? null,
    performed_rollback: body.active === true ? false : (body.performed_rollback ?? false),
    tags: normaliseTags(body.tags ?? []),
    evaluation_tags: evaluation ?? [],
    analytics_dashboards: [...new Set(body.analytics_dashboards ?? [])],
    has_enriched_analytics: body.has_enriched_analytics ?? false,
    usage_dashboard_id: null,
    evaluation_runtime: body.evaluation_runtime ?? 'all',
    bucketing_identifier: body.bucketing_identifier ?? null,
    is_remote_configuration: body.is_remote_configuration ?? false,
    has_encrypted_payloads: body.has_encrypted_payloads ?? false,
    created_at: body.created_at === undefined ? undefined : iso(Date.parse(body.created_at)),
  }
}

/** The record after an update body; `current` is not modified. */
export function recordFromUpdate(current: FeatureFlagRecord, body: FeatureFlagWrite, ctx: ApplyContext): FeatureFlagRecord {
  const key = body.key ?? current.key
  const revived = current.deleted && body.deleted === false
  if (body.key !== undefined) validateKey(body.key, current.id, ctx.lookups)
  else if (revived) {
    // Restoring must not give a second live flag the same key.
    const other = ctx.lookups.liveFlagByKey(key)
    if (other && other.id !== current.id) throw new ValidationError('unique', 'There is already a feature flag with this key.', 'key')
  }
  let filters = current.filters
  if (body.filters !== undefined && !isConfigFormatOne(current.filters)) {
    // A row of another config format (restored or written by SQL): its other fields may still change.
    throw new ValidationError('unsupported_config_version', "This flag's stored configuration cannot be updated through this API. Contact support.", 'filters')
  }
  refuseConfigVersion(body.filters)
  if (body.filters !== undefined && 'groups' in body.filters) {
    filters = validateFilters(body.filters, { creating: false, flagId: current.id, flagKey: current.key }, ctx.lookups)
  }
  if (key !== current.key) filters = withEnrollmentKey(filters, key)
  const evaluation = evaluationTags(body)
  checkDashboards(body.analytics_dashboards, ctx)
  return {
    ...current,
    key,
    name: body.name ?? current.name,
    filters,
    deleted: body.deleted ?? current.deleted,
    active: body.active ?? current.active,
    ensure_experience_continuity: body.ensure_experience_continuity ?? current.ensure_experience_continuity,
    rollback_conditions: body.rollback_conditions === undefined ? current.rollback_conditions : body.rollback_conditions,
    performed_rollback: body.active === true ? false : (body.performed_rollback ?? current.performed_rollback),
    tags: body.tags === undefined ? current.tags : normaliseTags(body.tags),
    evaluation_tags: evaluation ?? current.evaluation_tags,
    analytics_dashboards: body.analytics_dashboards === undefined ? current.analytics_dashboards : [...new Set(body.analytics_dashboards)],
    has_enriched_analytics: body.has_enriched_analytics ?? current.has_enriched_analytics,
    evaluation_runtime: body.evaluation_runtime ?? current.evaluation_runtime,
    bucketing_identifier: body.bucketing_identifier === undefined ? current.bucketing_identifier : body.bucketing_identifier,
    is_remote_configuration: body.is_remote_configuration ?? current.is_remote_configuration,
    has_encrypted_payloads: body.has_encrypted_payloads ?? current.has_encrypted_payloads,
    created_at: body.created_at === undefined ? current.created_at : iso(Date.parse(body.created_at)),
  }
}

const ENROLLMENT_PREFIX = '$feature_enrollment/'

/**
 * An early-access flag's super groups match the person property `$feature_enrollment/<flag key>`: a new key
 * renames it there, as PostHog's update does, or enrolled people would drop out of the flag.
 */
function withEnrollmentKey(filters: JsonObject, key: string): JsonObject {
  return mapConditionProperties(filters, 'super_groups', (p) =>
    typeof p.key === 'string' && p.key.startsWith(ENROLLMENT_PREFIX) ? { ...p, key: ENROLLMENT_PREFIX + key } : p,
  )
}

/** "a (ID: 1), b (ID: 2), and 3 more" as PostHog lists flags in refusals. */
export function describeFlags(flags: ReadonlyArray<{ id: number; key: string }>, max = 5): string {
  const names = flags.slice(0, max).map((f) => `${f.key} (ID: ${f.id})`)
  if (flags.length > max) names.push(`and ${flags.length - max} more`)
  return names.join(', ')
}
