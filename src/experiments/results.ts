/**
 * Experiment results in PostHog's legacy shapes (`GET …/results`, `…/secondary_results`), computed from
 * stored events through the event store's aggregate queries and the statistics module:
 *
 * - FUNNELS (ee/clickhouse/queries/experiments/funnel_experiment_result.py): persons who performed the
 *   first step with `$feature/<flag key>` set to a variant entered; those who then completed every step in
 *   order within the conversion window converted. No exposure events are involved, as in PostHog.
 * - TRENDS (trend_experiment_result.py): the count of the metric event per `$feature/<flag key>` value,
 *   against exposures = unique persons with `$feature_flag_called` for the flag, per `$feature_flag_response`;
 *   for the primary metric of an experiment with a custom exposure filter (custom-exposure.ts), that filter's
 *   entity per `$feature/<flag key>` value instead.
 *
 * The window is the experiment's: start_date to end_date, or to now while it runs.
 */
import { iso } from '../common/clock.js'
import { ValidationError } from '../common/errors.js'
import type { JsonObject } from '../common/json.js'
import type { FeatureFlagRecord } from '../management/index.js'
import type { BreakdownRow, EventPropertyFilter, EventStore } from '../storage/events/index.js'
import { customExposure, type CustomExposure } from './custom-exposure.js'
import { holdoutVariant } from './holdouts/index.js'
import { parseMetric, type ActionById, type MetricStep } from './metrics.js'
import type { ExperimentRecord } from './record.js'
import { CONTROL_VARIANT_KEY, type FunnelVariant, type TrendVariant, type VariantSplit } from './stats/index.js'
import type { StatsRunner } from './stats-runner.js'
import type { StatsResult } from './stats-task.js'
import { flagVariants } from './validation.js'

export interface ResultPackage {
  result: unknown
  last_refresh: string
  is_cached: boolean
}

interface Scope {
  experiment: ExperimentRecord
  flag: FeatureFlagRecord
  after: number
  before: number
  keys: string[]
  split: VariantSplit[]
}

interface MetricOutcome {
  /** PostHog's secondary-metric summary: conversion rate (funnels) or count (trends) per variant. */
  summary: Record<string, number>
  body: JsonObject
}

const invalid = (detail: string) => new ValidationError('invalid', detail)

/** PostHog's ExperimentNoResultsErrorKeys check on the variants the metric saw, as `json.dumps` prints it. */
function checkVariantsSeen(seen: readonly string[], keys: readonly string[]): void {
  const errors = {
    'no-events': seen.length === 0,
    'no-flag-info': true,
    'no-control-variant': true,
    'no-test-variant': true,
  }
  if (seen.includes(CONTROL_VARIANT_KEY)) errors['no-control-variant'] = errors['no-flag-info'] = false
  if (seen.some((key) => key !== CONTROL_VARIANT_KEY && keys.includes(key))) errors['no-test-variant'] = errors['no-flag-info'] = false
  if (!Object.values(errors).some(Boolean)) return
  const detail = `{${Object.entries(errors)
    .map(([k, v]) => `"${k}": ${v}`)
    .join(', ')}}`
  throw new ValidationError(seen.length === 0 ? 'no-results' : 'invalid', detail)
}

function statsFields(stats: StatsResult): JsonObject {
  const { probability, significant, significance_code, credible_intervals, srm, variants } = stats
  const measure = 'expected_loss' in stats ? { expected_loss: stats.expected_loss } : { p_value: stats.p_value }
  return { probability, significant, significance_code, ...measure, variants, credible_intervals, srm }
}

export class ExperimentResults {
  readonly #events: EventStore
  readonly #actionById: (teamId: number, id: number) => ReturnType<ActionById>
  readonly #stats: StatsRunner

  constructor(events: EventStore, stats: StatsRunner, actionById: (teamId: number, id: number) => ReturnType<ActionById>) {
    this.#events = events
    this.#actionById = actionById
    this.#stats = stats
  }

  /** `GET …/results`: the primary metric in `filters`, validated (missing variants are 400s, as in PostHog). */
  async primary(experiment: ExperimentRecord, flag: FeatureFlagRecord, nowMs: number): Promise<ResultPackage> {
    if (Object.keys(experiment.filters).length === 0) throw invalid('Experiment has no target metric')
    const scope = this.#scope(experiment, flag, nowMs, true)
    const outcome = await this.#metric(scope, experiment.filters, `${experiment.id}:primary`, false, true)
    return { result: outcome.body, last_refresh: iso(nowMs), is_cached: false }
  }

  /**
   * `GET …/secondary_results`: with `id`, that secondary metric as PostHog answers it; without, every
   * secondary metric in order (a list). Metrics without data answer their summary without statistics,
   * as PostHog's secondary results do.
   */
  async secondary(experiment: ExperimentRecord, flag: FeatureFlagRecord, rawId: string | null, nowMs: number): Promise<ResultPackage> {
    const metrics = experiment.secondary_metrics
    if (metrics.length === 0) throw invalid('Experiment has no secondary metrics')
    let indexes = metrics.map((_, i) => i)
    if (rawId !== null) {
      if (rawId === '') throw invalid('Secondary metric id is required')
      if (!/^-?\d+$/.test(rawId.trim())) throw invalid('Secondary metric id must be an integer')
      const index = Number(rawId)
      if (index < 0 || index >= metrics.length) throw invalid('Invalid metric ID')
      indexes = [index]
    }
    const scope = this.#scope(experiment, flag, nowMs)
    const results: JsonObject[] = []
    for (const index of indexes) {
      const metric = metrics[index]
      const filters = (metric.filters ?? {}) as JsonObject
      const outcome = await this.#metric(scope, filters, `${experiment.id}:secondary:${index}`, true, false)
      results.push({ name: typeof metric.name === 'string' ? metric.name : null, result: outcome.summary, ...outcome.body })
    }
    return { result: rawId === null ? results : results[0], last_refresh: iso(nowMs), is_cached: false }
  }

  /**
   * The primary metric counts the holdout's people as one more variant (`holdout-<id>`), as PostHog's legacy
   * trend and funnel results do; secondary metrics do not (PostHog passes them no holdout). The split, which
   * the sample ratio check reads, stays the flag's variants.
   */
  #scope(experiment: ExperimentRecord, flag: FeatureFlagRecord, nowMs: number, withHoldout = false): Scope {
    if (experiment.start_date === null) throw invalid('Experiment has not been launched yet')
    const variants = flagVariants(flag.filters)
    return {
      experiment,
      flag,
      after: Date.parse(experiment.start_date),
      before: experiment.end_date === null ? nowMs : Date.parse(experiment.end_date),
      keys: [...variants.map((v) => v.key), ...(withHoldout && experiment.holdout_id !== null ? [holdoutVariant(experiment.holdout_id)] : [])],
      split: variants.map(({ key, rollout_percentage }) => ({ key, rollout_percentage })),
    }
  }

  /** Only the primary metric (not `secondary`) reads the experiment's custom exposure, as in PostHog. */
  async #metric(scope: Scope, filters: JsonObject, seed: string, secondary: boolean, validate: boolean): Promise<MetricOutcome> {
    const actionById = (id: number) => this.#actionById(scope.experiment.team_id, id)
    const metric = parseMetric(filters, secondary, actionById)
    const echo: JsonObject = {
      ...filters,
      date_from: scope.experiment.start_date,
      date_to: scope.experiment.end_date,
      explicit_date: true,
      breakdown: `$feature/${scope.flag.key}`,
      breakdown_type: 'event',
      properties: [],
    }
    return metric.insight === 'FUNNELS'
      ? this.#funnel(scope, metric.steps, metric.windowMs, { ...echo, insight: 'FUNNELS' }, seed, validate)
      : this.#trend(scope, metric.series, { ...echo, insight: 'TRENDS', display: 'ActionsLineGraphCumulative' }, seed, validate,
          secondary ? null : customExposure(scope.experiment, actionById, false))
  }

  async #funnel(scope: Scope, steps: MetricStep[], windowMs: number, filters: JsonObject, seed: string, validate: boolean): Promise<MetricOutcome> {
    const rows = await this.#events.funnel({
      teamId: scope.experiment.team_id,
      steps: steps.map((s) => ({ event: s.event, properties: s.properties })),
      after: scope.after,
      before: scope.before,
      windowMs,
      breakdown: `$feature/${scope.flag.key}`,
      breakdownValues: scope.keys,
    })
    const counts = new Map(rows.map((r) => [r.value, r.counts]))
    const seen = scope.keys.filter((k) => counts.has(k))
    const insight = seen.map((key) =>
      steps.map((step, order) => ({
        action_id: step.id,
        name: step.name,
        custom_name: step.custom_name,
        order,
        count: counts.get(key)![order],
        type: step.type,
        breakdown: [key],
        breakdown_value: [key],
      })),
    )
    const variants: FunnelVariant[] = seen.map((key) => {
      const c = counts.get(key)!
      return { key, success_count: c[c.length - 1], failure_count: c[0] - c[c.length - 1] }
    })
    const summary = Object.fromEntries(
      variants.map((v) => [v.key, Math.round((v.success_count / (v.success_count + v.failure_count)) * 1000) / 1000]),
    )
    const body: JsonObject = { insight, filters }
    const stats = await this.#statsOrNull(() => {
      checkVariantsSeen(seen, scope.keys)
      return this.#stats.run({ kind: 'funnel', seed, variants, split: scope.split })
    }, validate)
    return { summary, body: stats ? { ...body, ...statsFields(stats) } : body }
  }

  async #trend(scope: Scope, series: MetricStep, filters: JsonObject, seed: string, validate: boolean, custom: CustomExposure | null): Promise<MetricOutcome> {
    const teamId = scope.experiment.team_id
    const breakdown = `$feature/${scope.flag.key}`
    const variantFilter: EventPropertyFilter = { key: breakdown, operator: 'exact', value: scope.keys }
    const window = { teamId, after: scope.after, before: scope.before }
    const exposureProperties: EventPropertyFilter[] = custom
      ? [variantFilter]
      : [
          { key: '$feature_flag_response', operator: 'exact', value: scope.keys },
          { key: '$feature_flag', operator: 'exact', value: scope.flag.key },
        ]
    const [countRows, exposureRows] = await Promise.all([
      this.#events.breakdown({ ...window, event: series.event ?? undefined, properties: [...series.properties, variantFilter], breakdown, math: 'events' }),
      custom
        ? this.#events.breakdown({ ...window, event: custom.step.event ?? undefined, properties: [...custom.step.properties, variantFilter], breakdown, math: custom.math })
        : this.#events.breakdown({ ...window, event: '$feature_flag_called', properties: exposureProperties, breakdown: '$feature_flag_response', math: 'persons' }),
    ])
    const count = byValue(countRows)
    const exposure = byValue(exposureRows)
    const seen = scope.keys.filter((k) => (count.get(k) ?? 0) > 0)
    const action = { id: series.id, type: series.type, order: series.order, name: series.name, custom_name: series.custom_name, math: 'total' }
    const insight = seen.map((key) => ({ action, label: series.name, breakdown_value: key, count: count.get(key)! }))
    const exposureFilters: JsonObject = {
      ...(custom ? { ...custom.filter } : {
        events: [{ id: '$feature_flag_called', name: '$feature_flag_called', order: 0, type: 'events', math: 'dau' }],
        actions: [],
      }),
      insight: 'TRENDS',
      display: 'ActionsLineGraphCumulative',
      date_from: scope.experiment.start_date,
      date_to: scope.experiment.end_date,
      explicit_date: true,
      breakdown: custom ? breakdown : '$feature_flag_response',
      breakdown_type: 'event',
      properties: exposureProperties.map((p) => ({ ...p, type: 'event' })),
    }
    const controlExposure = exposure.get(CONTROL_VARIANT_KEY) ?? 0
    const variants: TrendVariant[] = seen.map((key) => ({
      key,
      count: count.get(key)!,
      exposure: key === CONTROL_VARIANT_KEY ? 1 : controlExposure > 0 && exposure.has(key) ? exposure.get(key)! / controlExposure : 1,
      absolute_exposure: exposure.get(key) ?? 1,
    }))
    const summary = Object.fromEntries(variants.map((v) => [v.key, v.count]))
    const body: JsonObject = { insight, filters, exposure_filters: exposureFilters }
    const stats = await this.#statsOrNull(() => {
      checkVariantsSeen(seen, scope.keys)
      return this.#stats.run({ kind: 'trend', seed, variants, split: scope.split })
    }, validate)
    return { summary, body: stats ? { ...body, ...statsFields(stats) } : body }
  }

  /** Validated metrics throw PostHog's 400s; unvalidated ones (secondary) answer without statistics instead. */
  async #statsOrNull(compute: () => Promise<StatsResult>, validate: boolean): Promise<StatsResult | null> {
    try {
      return await compute()
    } catch (error) {
      if (!validate && error instanceof ValidationError) return null
      throw error
    }
  }
}

function byValue(rows: readonly BreakdownRow[]): Map<string, number> {
  const map = new Map<string, number>()
  for (const row of rows) if (row.value !== null) map.set(row.value, (map.get(row.value) ?? 0) + row.count)
  return map
}
