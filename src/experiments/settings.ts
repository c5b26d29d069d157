/**
 * The new metrics engine's fields on create and update, in the order PostHog's serializer and
 * `create_experiment` / `update_experiment` handle them: field checks first, then (once the flag's
 * variants are known) stats config and excluded variants, then defaults, uuids, fingerprints and
 * orderings. Skylark stores these and answers them; results are still computed from `filters`.
 */
import { randomUUID } from 'node:crypto'
import type { JsonObject } from '../common/json.js'
import type { ExperimentWrite } from '../schemas/experiment.js'
import {
  assignUuids,
  checkOrdering,
  checkUniqueUuids,
  exposureCriteriaDefaults,
  orderingOnCreate,
  orderingOnUpdate,
  statsConfigDefaults,
  uuidsOf,
  withFingerprints,
  type FingerprintContext,
} from './metric-list.js'
import type { ExperimentRecord, ExperimentSettings } from './record.js'
import { appendMissing, asMetrics, NO_LINKS, syncLinkedOrdering, type LinkedUuids } from './saved-metrics/ordering.js'
import {
  baselineKey,
  checkExcludedVariants,
  checkExposureCriteria,
  checkMetrics,
  checkRunningTimeCalculation,
  checkSavedMetricsIds,
  checkStatsConfig,
} from './settings-validation.js'

/** The serializer's field validators, which run before anything touches the flag. */
export function checkSettingFields(body: ExperimentWrite): void {
  checkMetrics(body.metrics, 'metrics')
  checkMetrics(body.metrics_secondary, 'metrics_secondary')
  checkExposureCriteria(body.exposure_criteria)
  checkRunningTimeCalculation(body.running_time_calculation)
  checkSavedMetricsIds(body.saved_metrics_ids)
}

/** A metric list that passed `checkMetrics` (absent stays absent). */
const metricList = (value: unknown): JsonObject[] | null | undefined => value as JsonObject[] | null | undefined

/**
 * Create: the body's settings with PostHog's defaults, checked against the variants the flag ended up with.
 * Linked shared metrics keep their uuids (inline metrics may not take them) and join the orderings.
 */
export function settingsOnCreate(body: ExperimentWrite, variantKeys: readonly string[], startDate: string | null, linked: LinkedUuids = NO_LINKS): ExperimentSettings {
  const seen = new Set<string>([...linked.primary, ...linked.secondary])
  const metrics = assignUuids(metricList(body.metrics) ?? null, seen)
  const secondary = assignUuids(metricList(body.metrics_secondary) ?? null, seen)
  checkStatsConfig(body.stats_config, variantKeys)
  const excluded = body.excluded_variants ?? null
  checkExcludedVariants(excluded, variantKeys, baselineKey(body.stats_config))
  const stats = statsConfigDefaults(body.stats_config)
  const exposure = exposureCriteriaDefaults(body.exposure_criteria as JsonObject | null | undefined)
  const onlyMatured = body.only_count_matured_users ?? false
  const ctx: FingerprintContext = { startDate, stats, exposure, onlyMatured, excluded }
  const settings: ExperimentSettings = {
    metrics: withFingerprints(metrics, ctx) ?? [],
    metrics_secondary: withFingerprints(secondary, ctx) ?? [],
    primary_metrics_ordered_uuids: appendMissing(orderingOnCreate(body.primary_metrics_ordered_uuids, metrics), linked.primary),
    secondary_metrics_ordered_uuids: appendMissing(orderingOnCreate(body.secondary_metrics_ordered_uuids, secondary), linked.secondary),
    stats_config: stats,
    exposure_criteria: exposure,
    scheduling_config: body.scheduling_config ?? null,
    running_time_calculation: (body.running_time_calculation as JsonObject | null | undefined) || {},
    excluded_variants: excluded,
    only_count_matured_users: onlyMatured,
    conclusion: body.conclusion ?? null,
    conclusion_comment: body.conclusion_comment ?? null,
  }
  checkUniqueUuids(settings.metrics, settings.metrics_secondary)
  return settings
}

/**
 * Update: what the body sends replaces what is stored (no defaults). A new metric list keeps its uuids
 * apart from the other, stored list; stats config is checked again when it or the variants change;
 * fingerprints follow the new settings and start date; orderings follow added and removed metrics, linked
 * shared metrics included.
 */
export function settingsOnUpdate(
  body: ExperimentWrite,
  current: ExperimentRecord,
  variantKeys: readonly string[],
  variantsSent: boolean,
  startDate: string | null,
  linked: LinkedUuids = NO_LINKS,
): ExperimentSettings {
  const has = (key: keyof ExperimentWrite) => body[key] !== undefined
  const seen = new Set<string>([...linked.primary, ...linked.secondary])
  if (has('metrics') && !has('metrics_secondary')) for (const u of uuidsOf(current.metrics_secondary)) seen.add(u)
  if (has('metrics_secondary') && !has('metrics')) for (const u of uuidsOf(current.metrics)) seen.add(u)
  const metrics = has('metrics') ? assignUuids(metricList(body.metrics)!, seen) : current.metrics
  const secondary = has('metrics_secondary') ? assignUuids(metricList(body.metrics_secondary)!, seen) : current.metrics_secondary
  const stats = has('stats_config') ? (body.stats_config ?? null) : current.stats_config
  if (has('stats_config') || variantsSent) checkStatsConfig(stats, variantKeys)
  const excluded = has('excluded_variants') ? (body.excluded_variants ?? null) : current.excluded_variants
  if (has('excluded_variants')) checkExcludedVariants(excluded, variantKeys, baselineKey(stats))
  if (has('metrics') || has('metrics_secondary')) checkUniqueUuids(has('metrics') ? metrics : null, has('metrics_secondary') ? secondary : null)
  const exposure = has('exposure_criteria') ? ((body.exposure_criteria as JsonObject | null) ?? null) : current.exposure_criteria
  const onlyMatured = body.only_count_matured_users ?? current.only_count_matured_users
  const ctx: FingerprintContext = { startDate, stats, exposure, onlyMatured, excluded }
  const refingerprint = (list: JsonObject[] | null) => (list && list.length > 0 ? withFingerprints(list, ctx) : list)
  const next: ExperimentSettings = {
    metrics: refingerprint(metrics),
    metrics_secondary: refingerprint(secondary),
    primary_metrics_ordered_uuids: has('metrics')
      ? orderingOnUpdate(current.metrics, metrics, body.primary_metrics_ordered_uuids, current.primary_metrics_ordered_uuids)
      : has('primary_metrics_ordered_uuids') ? (body.primary_metrics_ordered_uuids ?? null) : current.primary_metrics_ordered_uuids,
    secondary_metrics_ordered_uuids: has('metrics_secondary')
      ? orderingOnUpdate(current.metrics_secondary, secondary, body.secondary_metrics_ordered_uuids, current.secondary_metrics_ordered_uuids)
      : has('secondary_metrics_ordered_uuids') ? (body.secondary_metrics_ordered_uuids ?? null) : current.secondary_metrics_ordered_uuids,
    stats_config: stats,
    exposure_criteria: exposure,
    scheduling_config: has('scheduling_config') ? body.scheduling_config : current.scheduling_config,
    running_time_calculation: has('running_time_calculation') ? ((body.running_time_calculation as JsonObject | null) ?? null) : current.running_time_calculation,
    excluded_variants: excluded,
    only_count_matured_users: onlyMatured,
    conclusion: has('conclusion') ? (body.conclusion ?? null) : current.conclusion,
    conclusion_comment: has('conclusion_comment') ? (body.conclusion_comment ?? null) : current.conclusion_comment,
  }
  if (linked.before) {
    next.primary_metrics_ordered_uuids = syncLinkedOrdering(next.primary_metrics_ordered_uuids, linked.before.primary, linked.primary)
    next.secondary_metrics_ordered_uuids = syncLinkedOrdering(next.secondary_metrics_ordered_uuids, linked.before.secondary, linked.secondary)
  }
  checkOrdering([...(next.metrics ?? []), ...asMetrics(linked.primary)], next.primary_metrics_ordered_uuids, 'primary')
  checkOrdering([...(next.metrics_secondary ?? []), ...asMetrics(linked.secondary)], next.secondary_metrics_ordered_uuids, 'secondary')
  return next
}

/** New uuids for a cloned metric list, and the ordering rewritten to them (PostHog's `_regenerate_all_metric_uuids`). */
function regenerated(metrics: JsonObject[] | null, ordering: string[] | null): { metrics: JsonObject[] | null; ordering: string[] | null } {
  if (metrics === null) return { metrics: null, ordering }
  const remap = new Map<string, string>()
  const fresh = metrics.map((m) => {
    const uuid = randomUUID()
    if (typeof m.uuid === 'string' && m.uuid !== '') remap.set(m.uuid, uuid)
    return { ...structuredClone(m), uuid }
  })
  return { metrics: fresh, ordering: ordering && ordering.map((u) => remap.get(u) ?? u) }
}

/** What `duplicate` hands to create: the settings PostHog's clone copies, with the metrics' uuids renewed. */
export function clonedSettings(source: ExperimentSettings): ExperimentWrite {
  const primary = regenerated(source.metrics, source.primary_metrics_ordered_uuids)
  const secondary = regenerated(source.metrics_secondary, source.secondary_metrics_ordered_uuids)
  return {
    metrics: primary.metrics,
    metrics_secondary: secondary.metrics,
    primary_metrics_ordered_uuids: primary.ordering,
    secondary_metrics_ordered_uuids: secondary.ordering,
    stats_config: source.stats_config,
    exposure_criteria: source.exposure_criteria,
    scheduling_config: source.scheduling_config,
    running_time_calculation: source.running_time_calculation,
    only_count_matured_users: source.only_count_matured_users,
  }
}
