/**
 * What PostHog does to the metric lists it stores: every metric gets a unique `uuid`, its `fingerprint`
 * (the hash PostHog keys cached results by), and the ordering lists follow the metrics added and
 * removed; plus the creation defaults of `stats_config` and `exposure_criteria`
 * (products/experiments/backend/experiment_service.py, hogql_queries/experiment_metric_fingerprint.py).
 */
import { createHash, randomUUID } from 'node:crypto'
import { ValidationError } from '../common/errors.js'
import type { JsonObject } from '../common/json.js'
import { pyJsonDumps, pyStr } from '../common/python-format.js'
import type { ExperimentSettings } from './record.js'

/**
 * A copy of the metrics where each has a uuid no earlier metric (nor `seen`) has: missing or repeated
 * ones are replaced by new ones; `seen` collects them, so one set can span both lists.
 */
export function assignUuids(metrics: readonly JsonObject[] | null, seen: Set<string>): JsonObject[] | null {
  if (metrics === null) return null
  return metrics.map((metric) => {
    const copy = structuredClone(metric)
    const uuid = copy.uuid
    if (typeof uuid !== 'string' || uuid === '' || seen.has(uuid)) copy.uuid = randomUUID()
    seen.add(copy.uuid as string)
    return copy
  })
}

/** The uuids of a metric list. */
export function uuidsOf(metrics: readonly JsonObject[] | null): Set<string> {
  return new Set((metrics ?? []).flatMap((m) => (typeof m.uuid === 'string' && m.uuid !== '' ? [m.uuid] : [])))
}

const FINGERPRINT_IGNORED = ['uuid', 'name', 'kind', 'fingerprint', 'only_count_matured_users']

/** Python's `datetime.isoformat()` of a UTC time: `+00:00`, microseconds only when not zero. */
function pyIsoformat(iso: string): string {
  const date = new Date(iso)
  const ms = date.getUTCMilliseconds()
  return `${date.toISOString().slice(0, 19)}${ms ? `.${String(ms * 1000).padStart(6, '0')}` : ''}+00:00`
}

export interface FingerprintContext {
  startDate: string | null
  stats: JsonObject | null
  exposure: JsonObject | null
  onlyMatured: boolean
  excluded: readonly string[] | null
}

/** PostHog's `compute_metric_fingerprint`: sha256 of the metric (less its identity) and what shapes its results. */
export function fingerprint(metric: JsonObject, ctx: FingerprintContext): string {
  const clean: JsonObject = structuredClone(metric)
  for (const field of FINGERPRINT_IGNORED) delete clean[field]
  const breakdown = clean.breakdownFilter
  if (breakdown === null) delete clean.breakdownFilter
  else if (typeof breakdown === 'object' && !Array.isArray(breakdown)) {
    const filter = breakdown as JsonObject
    if (!(Array.isArray(filter.breakdowns) ? filter.breakdowns.length : filter.breakdowns)) {
      const { breakdowns: _dropped, ...rest } = filter
      if (Object.keys(rest).length > 0) clean.breakdownFilter = rest
      else delete clean.breakdownFilter
    }
  }
  const data: JsonObject = {
    metric: clean,
    start_date: ctx.startDate === null ? null : pyIsoformat(ctx.startDate),
    stats_method: (ctx.stats?.method as string | undefined) ?? 'bayesian',
  }
  if (ctx.exposure && Object.keys(ctx.exposure).length > 0) data.exposure_criteria = ctx.exposure
  if (ctx.onlyMatured) data.only_count_matured_users = true
  if (ctx.excluded && ctx.excluded.length > 0) data.excluded_variants = [...new Set(ctx.excluded)].sort()
  return createHash('sha256').update(pyJsonDumps(data, { sortKeys: true, compact: true })).digest('hex')
}

/** The metrics with their fingerprints for the experiment's current settings. */
export function withFingerprints(metrics: readonly JsonObject[] | null, ctx: FingerprintContext): JsonObject[] | null {
  return metrics === null ? null : metrics.map((m) => ({ ...m, fingerprint: fingerprint(m, ctx) }))
}

/** The fingerprint context of stored settings at a start date. */
export function fingerprintContext(s: ExperimentSettings, startDate: string | null): FingerprintContext {
  return { startDate, stats: s.stats_config, exposure: s.exposure_criteria, onlyMatured: s.only_count_matured_users, excluded: s.excluded_variants }
}

/** Create: the ordering sent, then every metric's uuid not in it yet. */
export function orderingOnCreate(sent: readonly string[] | null | undefined, metrics: readonly JsonObject[] | null): string[] | null {
  if (metrics === null) return sent ? [...sent] : null
  const ordering = [...(sent ?? [])]
  for (const uuid of uuidsOf(metrics)) if (!ordering.includes(uuid)) ordering.push(uuid)
  return ordering
}

/**
 * Update: when a PATCH adds or removes metrics, the ordering (the one sent, else the stored one) drops
 * removed uuids and appends added ones; otherwise it is what was sent, or stays.
 */
export function orderingOnUpdate(
  before: readonly JsonObject[] | null,
  after: readonly JsonObject[] | null,
  sent: readonly string[] | null | undefined,
  stored: readonly string[] | null,
): string[] | null {
  const old = uuidsOf(before)
  const next = uuidsOf(after)
  const added = [...next].filter((u) => !old.has(u))
  const removed = new Set([...old].filter((u) => !next.has(u)))
  const base = sent === undefined ? stored : sent
  if (added.length === 0 && removed.size === 0) return base === null ? null : [...base]
  const ordering = (base ?? []).filter((u) => !removed.has(u))
  for (const uuid of added) if (!ordering.includes(uuid)) ordering.push(uuid)
  return ordering
}

/** Every metric's uuid must be in its ordering list (PostHog's message blames the frontend). */
export function checkOrdering(metrics: readonly JsonObject[] | null, ordering: readonly string[] | null, name: 'primary' | 'secondary'): void {
  const expected = uuidsOf(metrics)
  if (expected.size === 0) return
  const field = `${name}_metrics_ordered_uuids`
  if (ordering === null) {
    throw new ValidationError('invalid', `${field} is null but ${name} metrics exist. This is likely a frontend bug - please refresh and try again.`)
  }
  const missing = [...expected].filter((u) => !ordering.includes(u)).sort()
  if (missing.length > 0) {
    throw new ValidationError('invalid', `${field} is missing UUIDs: ${pyStr(missing)}. This is likely a frontend bug - please refresh and try again.`)
  }
}

/** No uuid twice across both lists (PostHog's defence once uuids are assigned). */
export function checkUniqueUuids(...lists: ReadonlyArray<readonly JsonObject[] | null>): void {
  const seen = new Set<string>()
  for (const metric of lists.flatMap((l) => l ?? [])) {
    const uuid = metric.uuid
    if (typeof uuid !== 'string') continue
    if (seen.has(uuid)) throw new ValidationError('invalid', `Duplicate metric UUID: '${uuid}'. Each metric must have a unique UUID.`)
    seen.add(uuid)
  }
}

/** Creation default: the team's stats method, which skylark's projects do not set, so PostHog's own (bayesian). */
export function statsConfigDefaults(stats: JsonObject | null | undefined): JsonObject {
  const result: JsonObject = { ...(stats ?? {}) }
  if (!result.method) result.method = 'bayesian'
  return result
}

/** Creation default: test accounts are filtered out unless the body says otherwise. */
export function exposureCriteriaDefaults(criteria: JsonObject | null | undefined): JsonObject {
  const result: JsonObject = { ...(criteria ?? {}) }
  if (result.filterTestAccounts === undefined || result.filterTestAccounts === null) result.filterTestAccounts = true
  return result
}
