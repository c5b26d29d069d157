/**
 * How an experiment's linked shared metrics take part in its metric ordering lists, as PostHog's
 * experiment_service does (`_sync_saved_metrics`, `_sync_ordering_for_saved_metrics_on_update`,
 * `_validate_metric_ordering_*`): a linked query's uuid sits in the primary or the secondary ordering
 * beside the inline metrics' uuids, which must not take it. Pure.
 */

export interface LinkedUuids {
  /** The linked queries' uuids after the write, by the list each counts in. */
  primary: readonly string[]
  secondary: readonly string[]
  /** The uuids linked before an update that changes the links; null when the write leaves them. */
  before: { primary: readonly string[]; secondary: readonly string[] } | null
}

export const NO_LINKS: LinkedUuids = { primary: [], secondary: [], before: null }

/** Create: the ordering with every linked uuid it lacks appended (unchanged, null included, when it lacks none). */
export function appendMissing(ordering: readonly string[] | null, uuids: readonly string[]): string[] | null {
  const missing = uuids.filter((u, i) => !(ordering ?? []).includes(u) && uuids.indexOf(u) === i)
  if (missing.length === 0) return ordering === null ? null : [...ordering]
  return [...(ordering ?? []), ...missing]
}

/** Update: uuids of links removed leave the ordering, those of links added join its end. */
export function syncLinkedOrdering(ordering: readonly string[] | null, before: readonly string[], after: readonly string[]): string[] | null {
  const removed = new Set(before.filter((u) => !after.includes(u)))
  const added = after.filter((u) => !before.includes(u))
  if (removed.size === 0 && added.length === 0) return ordering === null ? null : [...ordering]
  return appendMissing((ordering ?? []).filter((u) => !removed.has(u)), added)
}

/** The uuids as the metric-like objects the ordering check reads. */
export const asMetrics = (uuids: readonly string[]) => uuids.map((uuid) => ({ uuid }))
