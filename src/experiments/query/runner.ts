/**
 * PostHog's ExperimentQueryRunner (products/experiments/backend/hogql_queries/experiment_query_runner.py) for
 * `POST …/query/` with `{"query": {"kind": "ExperimentQuery", "experiment_id", "metric"}}`: the experiment's
 * exposures and the metric's events aggregated per entity and variant by the event store where it reads them
 * (src/storage/events/experiment-aggregate.ts; SQLite on its read thread, ClickHouse in SQL), and the new
 * engine's statistics (statistics.ts) over those per-variant sums, answered in PostHog's
 * ExperimentQueryResponse shape (`baseline`, `variant_results`, and with the metric's breakdowns
 * `breakdown_results`: each group's `breakdown_value`, `baseline` and `variants`) with the query API's cache fields.
 *
 * The variants are the flag's, less the experiment's `excluded_variants`; a holdout's `holdout-<id>` is none of
 * them (its people were never exposed to the experiment), so its calls are no exposures. The baseline is
 * `stats_config.baseline_variant_key` (control by default), the others the test variants in the flag's order.
 * A variant whose statistics fail keeps its sums without statistics (statistics.ts), in each breakdown group
 * too; a flag without the baseline variant is PostHog's ExperimentDataError, a 400.
 *
 * Exposure is `exposure_criteria`'s (exposure.ts: the flag's `$feature_flag_called`, an event or action of
 * `exposure_config`, activation mode), with one of those variants; from `start_date` (a draft: from the
 * project's midnight 7 days back, PostHog's default range) to `end_date` or now. The flag's
 * `aggregation_group_type_index` makes the entity a group. With `filterTestAccounts` the project's
 * `test_account_filters` narrow the exposure events and the metric's. Person, group and cohort filters (of the
 * metric, the exposure or the test accounts) match the persons' current properties (person-filters.ts).
 *
 * `{"kind": "ExperimentExposureQuery", "experiment_id"}` answers the exposures tab instead (exposures.ts).
 */
import { AppError, ValidationError } from '../../common/errors.js'
import { isPlainObject, type JsonObject } from '../../common/json.js'
import { parseRelativeDate } from '../../common/relative-dates.js'
import { bounceRule, type ActionRecord, type FeatureFlagRecord, type Project } from '../../management/index.js'
import { offsetChanges } from '../../common/time-zones.js'
import { RETENTION_UNIT_MS as UNIT_MS, type EventStore, type PropertyNode, type RetentionWindow } from '../../storage/events/index.js'
import type { HoldoutRecord } from '../holdouts/index.js'
import { propertyFilters, type PersonLookup } from '../metrics.js'
import type { ExperimentRecord } from '../record.js'
import { checkMetric } from '../settings-validation.js'
import { distinctKeys, metricSteps, planMetric, valueFields, valueProperties, type MetricPlan } from './metric.js'
import { cupedLookbackDays } from './cuped.js'
import { answerHogqlQuery, hogqlCohorts } from './hogql.js'
import { exposureOf, type ExposurePlan } from './exposure.js'
import { exposureVariants, exposureWindow, exposuresAnswer, holdoutPercentage } from './exposures.js'
import { exposureMaturedBy, maturedBy } from './maturity.js'
import { performedReader, type CohortById } from '../../management/index.js'
import { personFilterLookup, type PersonMatcher } from './person-filters.js'
import { experimentResult, StatisticError, statsMethod, type ResultOptions, type VariantStats } from './statistics.js'

/** The query kinds `/query/` answers. */
export const SERVED_QUERY_KINDS = ['ExperimentQuery', 'ExperimentExposureQuery', 'HogQLQuery'] as const

const CONTROL = 'control'
const DAY_MS = 86_400_000

// PostHog's experiment_error_handler messages (StatisticError, ExperimentDataError), and skylark's for an
// experiment whose flag is gone, which PostHog's required foreign key rules out.
const STATISTICS_FAILED = 'Unable to calculate experiment statistics. Please ensure your experiment has sufficient data and try again.'
const DATA_UNUSABLE = 'Unable to calculate experiment results from the collected data. This usually resolves once more exposures are recorded.'
const INVALID_SETUP = 'Invalid experiment configuration detected. Please check your experiment setup.'

const invalid = (detail: string, attr: string | null = null) => new ValidationError('invalid', detail, attr)

export interface ExperimentSource {
  /** The live experiment of the project; throws AppError not_found otherwise. */
  record(project: Project, id: number): ExperimentRecord
  flagOf(experiment: ExperimentRecord): FeatureFlagRecord | null
  /** The experiment's holdout, if any. */
  holdoutOf(experiment: ExperimentRecord): Pick<HoldoutRecord, 'filters'> | null
}

export type ProjectActionById = (teamId: number, id: number) => Pick<ActionRecord, 'steps'> | null

function experimentOf(source: ExperimentSource, project: Project, id: number): ExperimentRecord {
  try {
    return source.record(project, id)
  } catch (error) {
    if (error instanceof AppError && error.code === 'not_found') throw invalid(`Experiment with id ${id} not found`)
    throw error
  }
}

/** The request's query object of a served kind, or PostHog's refusals of what is not one. */
function queryOf(body: unknown): JsonObject {
  if (!isPlainObject(body) || body.query === undefined || body.query === null) throw new ValidationError('required', 'This field is required.', 'query')
  const query = body.query
  if (!isPlainObject(query)) throw invalid('The query must be an object.', 'query')
  if (!(SERVED_QUERY_KINDS as readonly unknown[]).includes(query.kind)) {
    throw new ValidationError('unsupported_query_kind', `Query kind ${JSON.stringify(query.kind ?? null)} is not served here: skylark serves ${SERVED_QUERY_KINDS.join(', ')}.`, 'kind')
  }
  return query
}

function experimentIdOf(query: JsonObject): number {
  const id = query.experiment_id
  if (id === undefined || id === null || id === 0) throw invalid('experiment_id is required')
  if (typeof id !== 'number' || !Number.isSafeInteger(id)) throw invalid('experiment_id must be an integer', 'experiment_id')
  return id
}

/**
 * The baseline's key: `stats_config.baseline_variant_key` when set (Python's `.get(key, "control")`, so a null
 * one names no variant), else control.
 */
function baselineOf(stats: Record<string, unknown> | null): unknown {
  return stats !== null && 'baseline_variant_key' in stats ? stats.baseline_variant_key : CONTROL
}

/** The engine's statistics of the baseline against the other variants, or PostHog's error handler's 400s. */
function statisticsOf(plan: MetricPlan, options: ResultOptions, experiment: ExperimentRecord, perVariant: readonly VariantStats[]) {
  const baseline = baselineOf(experiment.stats_config)
  const control = perVariant.filter((v) => v.key === baseline)
  // `split_baseline_and_test_variants`' ExperimentDataError ("No control variant found").
  if (control.length !== 1) throw invalid(DATA_UNUSABLE)
  try {
    return experimentResult(
      plan.type,
      statsMethod(experiment.stats_config),
      experiment.stats_config,
      control[0],
      perVariant.filter((v) => v.key !== baseline),
      options,
    )
  } catch (error) {
    // Only a stats config PostHog's methods refuse gets here: a variant's failure leaves that variant without statistics.
    if (error instanceof StatisticError) throw invalid(STATISTICS_FAILED)
    throw error
  }
}

/** The latest instant a JS Date holds: a window past it reads every later event. */
const MAX_MS = 8.64e15
/** The zone's offsets are listed this far past the range at most (later events keep the last one). */
const MAX_OFFSET_SPAN_MS = 20 * 366 * DAY_MS

/**
 * A retention metric's window with the experiment's bounds (`build_start_event_predicate`,
 * `build_completion_event_predicate`), its maturity as of `maturedAt` (with `only_count_matured_users`) and the
 * project zone's offsets over them, else null.
 */
function retentionOf(plan: MetricPlan, after: number, to: number, zone: string, maturedAt: number | null): RetentionWindow | null {
  if (plan.type !== 'retention' || !plan.retentionWindow) return null
  const w = plan.retentionWindow
  const startBefore = Math.min(to + 1 + (plan.windowMs ?? 0), MAX_MS)
  const completionBefore = Math.min(Math.max(startBefore + w.end * UNIT_MS[w.unit], after), MAX_MS)
  // `build_retention_maturity_having_clause`: start + end units <= now, read to the second; none for a 0 window.
  const maturity = w.end * UNIT_MS[w.unit]
  const startMaturedBy = maturedAt === null || maturity === 0 ? null : maturedBy(maturedAt, maturity)
  // A day either side: a wall time is read at an instant up to a day from the events'.
  const from = after - DAY_MS
  const until = Math.min(Math.max(startBefore, completionBefore) + 32 * DAY_MS, from + MAX_OFFSET_SPAN_MS)
  return { ...w, startBefore, completionBefore, maturedBy: startMaturedBy, offsets: offsetChanges(zone, from, until) }
}

/** The flag's group type, making the entity a group; null (persons) for none or one out of range. */
function groupIndex(flag: FeatureFlagRecord): number | null {
  const group = flag.filters.aggregation_group_type_index
  return typeof group === 'number' && Number.isInteger(group) && group >= 0 && group <= 4 ? group : null
}

const handlingOf = (experiment: ExperimentRecord) => (experiment.exposure_criteria?.multiple_variant_handling === 'first_seen' ? 'first_seen' : 'exclude')

/**
 * The project's test account filters when the experiment's `exposure_criteria.filterTestAccounts` is true
 * (PostHog's `get_exposure_config_params_for_builder`: unset is false), else none.
 */
function testAccountFilters(project: Project, experiment: ExperimentRecord): JsonObject[] {
  return experiment.exposure_criteria?.filterTestAccounts === true ? (JSON.parse(project.test_account_filters) as JsonObject[]) : []
}

/** The exposure events (not activation mode's) narrowed by the test account filters, as PostHog's exposure predicate. */
function withoutTestAccounts(plan: ExposurePlan, realUsers: readonly PropertyNode[]): ExposurePlan {
  return realUsers.length === 0 ? plan : { ...plan, filter: { ...plan.filter, properties: [...(plan.filter.properties ?? []), ...realUsers] } }
}

/** What the store reads of an exposure plan (activation mode aside). */
const exposureRead = (plan: ExposurePlan) => ({ exposure: plan.filter, variantProperty: plan.variantProperty })

export interface ExperimentQueryDeps {
  events: EventStore
  experiments: ExperimentSource
  actionById: ProjectActionById
  /** persons.db's distinct ids of a person or cohort filter's persons; absent: such filters are refused. */
  persons?: PersonMatcher | null
  /** The project's cohorts, for cohort filters (and by name, for HogQL's `IN COHORT 'name'`). */
  cohortById?: CohortById | null
  cohortIdsNamed?: (teamId: number, name: string) => number[]
}

export class ExperimentQueryRunner {
  readonly #deps: ExperimentQueryDeps

  constructor(deps: ExperimentQueryDeps) {
    this.#deps = deps
  }

  async run(project: Project, body: unknown, nowMs: number): Promise<JsonObject> {
    const query = queryOf(body)
    if (query.kind === 'HogQLQuery') {
      const { events, actionById, cohortById, cohortIdsNamed } = this.#deps
      const cohorts = cohortById && cohortIdsNamed ? hogqlCohorts(events, actionById, cohortById, cohortIdsNamed, nowMs) : undefined
      return answerHogqlQuery({ events, persons: this.#deps.persons ?? null, cohorts }, project, query, nowMs)
    }
    const experimentId = experimentIdOf(query)
    // The metric is checked before the experiment is looked up, as PostHog's request schema checks it first.
    if (query.kind === 'ExperimentQuery') checkMetric(query.metric, 'Invalid metric: ', 'metric')
    const experiment = experimentOf(this.#deps.experiments, project, experimentId)
    const flag = this.#deps.experiments.flagOf(experiment)
    if (!flag) throw invalid(INVALID_SETUP)
    const testAccounts = testAccountFilters(project, experiment)
    const performed = { read: performedReader(this.#deps.events, { byId: this.#deps.actionById }), now: nowMs }
    const nodes = [query.metric, experiment.exposure_criteria, testAccounts]
    const person = await personFilterLookup(this.#deps.persons ?? null, this.#deps.cohortById ?? null, project.id, nodes, undefined, performed)
    // The test account filters: what the events of real users meet.
    const realUsers = propertyFilters(testAccounts, person)
    if (query.kind === 'ExperimentExposureQuery') return this.#exposures(project, query, experiment, flag, person, realUsers, nowMs)
    const metric = query.metric as JsonObject
    const actionById = (id: number) => this.#deps.actionById(project.id, id)
    const plan = planMetric(metric, actionById, person)
    const cupedDays = cupedLookbackDays(experiment.stats_config, metric)
    const lookback = cupedDays === null ? 0 : cupedDays * DAY_MS

    // No `holdout-<id>`: PostHog's runner leaves the holdout out of the scorecard, its people never having been exposed.
    const { variants } = exposureVariants(flag, experiment)
    // A draft's window is QueryDateRange's default, from the project's midnight seven days back.
    const after = experiment.start_date === null ? parseRelativeDate('-7dStart', nowMs, project.timezone)! : Date.parse(experiment.start_date)
    const to = experiment.end_date === null ? nowMs : Date.parse(experiment.end_date)
    const exposure = withoutTestAccounts(exposureOf(experiment.exposure_criteria, flag.key, variants, { teamId: project.id, after, before: to + 1 }, actionById, person), realUsers)
    const handling = handlingOf(experiment)
    // `only_count_matured_users`: retention gates each start event, the other metrics each first exposure (maturity.ts).
    const maturedAt = experiment.only_count_matured_users ? nowMs : null
    const retention = retentionOf(plan, after, to, project.timezone, maturedAt)
    const sums = await this.#deps.events.experimentVariants({
      teamId: project.id,
      groupTypeIndex: groupIndex(flag),
      ...exposureRead(exposure),
      activation: exposure.activation,
      breakdowns: plan.breakdowns,
      bounce: bounceRule(project),
      metric: {
        // With CUPED the events of each entity's lookback before its first exposure too (`build_metric_predicate`).
        after: after - lookback,
        // With a conversion window the metric's events run to first exposure + window, past the end too; a
        // retention metric's completions to the end + window + its window's end.
        before: Math.max(to + 1 + (plan.windowMs ?? 0), retention?.completionBefore ?? 0),
        // A retention start at the exposure starts at the activation in activation mode, its exposure time.
        // The test account filters narrow the metric's steps; an exposure step has them already.
        steps: metricSteps({ ...plan, steps: plan.steps.map((step) => ({ ...step, properties: [...(step.properties ?? []), ...realUsers] })) }, exposure.activation ?? exposure.filter),
        valueProperties: valueProperties(plan),
        valueFields: valueFields(plan),
        distinctKeys: distinctKeys(plan),
      },
      variants,
      multipleVariantHandling: handling,
      aggregation: { ...plan, cupedLookbackMs: cupedDays === null ? null : lookback, retention, maturedBy: exposureMaturedBy(plan.type, plan.windowMs, maturedAt) },
    })
    const options = { threshold: plan.threshold !== null && plan.threshold !== undefined, cuped: cupedDays !== null }
    const result = statisticsOf(plan, options, experiment, sums.variants)
    // `_process_breakdown_results`: each group's statistics, `variants` being its variant_results.
    const breakdownResults =
      sums.breakdowns?.map((g) => {
        const r = statisticsOf(plan, options, experiment, g.variants)
        return { breakdown_value: g.values, baseline: r.baseline, variants: r.variant_results }
      }) ?? null
    return {
      // The legacy fields of ExperimentQueryResponse, unset by the new engine.
      kind: null,
      insight: null,
      metric: null,
      variants: null,
      probability: null,
      significant: null,
      significance_code: null,
      stats_version: null,
      p_value: null,
      credible_intervals: null,
      ...result,
      breakdown_results: breakdownResults,
      // The cache fields (cache_key, last_refresh…) are the query cache's (cached-runner.ts).
      timezone: project.timezone,
    }
  }

  /** ExperimentExposureQuery (exposures.ts): the exposures per variant and day, read where the events are. */
  async #exposures(
    project: Project,
    query: JsonObject,
    experiment: ExperimentRecord,
    flag: FeatureFlagRecord,
    person: PersonLookup | null,
    realUsers: readonly PropertyNode[],
    nowMs: number,
  ): Promise<JsonObject> {
    const { start, end } = exposureWindow(query, experiment)
    const { split, variants, excluded } = exposureVariants(flag, experiment)
    const actionById = (id: number) => this.#deps.actionById(project.id, id)
    const handling = handlingOf(experiment)
    const counts =
      start === null
        ? []
        : await this.#deps.events.experimentExposures({
            teamId: project.id,
            groupTypeIndex: groupIndex(flag),
            ...exposureRead(withoutTestAccounts(exposureOf(experiment.exposure_criteria, flag.key, variants, { teamId: project.id, after: start, before: (end ?? nowMs) + 1 }, actionById, person), realUsers)),
            variants,
            multipleVariantHandling: handling,
          })
    const holdout = this.#deps.experiments.holdoutOf(experiment)
    const answer = exposuresAnswer({ counts, split, variants, excluded, holdoutPercentage: holdoutPercentage(holdout?.filters ?? null), handling, start, end, zone: project.timezone, nowMs })
    return { kind: 'ExperimentExposureQuery', ...answer, timezone: project.timezone }
  }
}
