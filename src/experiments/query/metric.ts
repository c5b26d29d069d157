/**
 * An ExperimentMetric (the new engine's `metrics` entries and shared metrics' queries) read into what the
 * event store and the aggregation need, as PostHog's base_query_utils.py reads it:
 *
 * - a source (EventsNode by event name — none: every event —, ActionsNode by the project's action; a missing
 *   action matches nothing) with its event property filters becomes one step condition;
 * - its `math` (`get_source_value_expr`, `get_source_aggregation_expr`): `sum`, `avg`, `min`, `max` of
 *   `math_property` (the property's number, 0 when it is not one; without a property each event counts 1),
 *   `unique_session` (distinct `$session_id`s), `dau` (distinct persons), `unique_group` (distinct
 *   `$group_<math_group_type_index>` keys; 1 or 0 for type 0 or none, as PostHog's falsy test makes it),
 *   empty keys never counted; `hogql` (`math_hogql`: an aggregation of an expression on event properties and
 *   the person's, src/storage/events/hogql-math.ts); anything else the event count (`total`); a mean of a session property
 *   (`$session_duration`, `$pageview_count`, …) counts each session once (SessionMath, `_get_session_property_ctes`);
 * - `conversion_window` + `conversion_window_unit`: metric events before first exposure + window, else up to
 *   the experiment's end (a window of 0 or less is none); a funnel's window, as set (0 too, as its UDF takes
 *   it), runs from each exposure in its walk instead;
 * - mean metrics' `lower_bound_percentile` / `upper_bound_percentile` (winsorisation), `ignore_zeros`, and
 *   `threshold` (each entity's value a binary "reached it", whose statistics are a proportion's);
 * - funnel `series` and `funnel_order_type` (ordered, unordered or strict: src/storage/events/experiment-funnel.ts);
 * - retention `start_event` and `completion_event` (the steps, in that order), `retention_window_start` /
 *   `_end` / `_unit` and `start_handling` (experiment_retention_query_builder.py; the outcome is computed where
 *   the events are read, src/storage/events/experiment-retention.ts), the conversion window bounding the start;
 *   a `start_event` of kind ExperimentExposureNode starts the window at each entity's first exposure: the
 *   exposure's own filter is then the start step, first seen (`metricSteps`), whose first event at or after the
 *   first exposure is that exposure — its time and its event, what PostHog projects from its exposures CTE
 *   (`first_exposure_time`, `exposure_event_uuid`) —, so every exposed entity counts and its exposure event is
 *   never its own completion;
 * - `breakdownFilter.breakdowns` (at most 3, ExperimentQueryRunner's `_get_breakdowns_for_builder`): the event
 *   properties whose values at each entity's first exposure split the results (PostHog's BreakdownInjector), or
 *   person or group properties, their persons' (the exposure's groups') values now (person-filters.ts).
 *
 * Person property, group property and cohort filters read as the planner's caller resolved them
 * (person-filters.ts). What skylark can't compute is refused with a 400 naming it: data warehouse sources, HogQL
 * beyond the subset hogql-math.ts reads, other property filter types, breakdowns of other types than event,
 * person and group properties.
 */
import { ValidationError } from '../../common/errors.js'
import { isPlainObject, type JsonObject } from '../../common/json.js'
import { actionCondition, type ActionRecord } from '../../management/index.js'
import {
  MAX_EXPERIMENT_BREAKDOWNS,
  MAX_EXPERIMENT_STEPS,
  type DistinctKey,
  type EventFilter,
  type ExperimentAggregation,
  type ExperimentBreakdown,
  type FunnelStep,
  type HogqlField,
  type HogqlMath,
  HogqlMathError,
  hogqlProperties,
  parseHogqlMath,
  type PropertyNode,
  type PropertyPath,
  type RetentionUnit,
  type RetentionWindow,
  SESSION_PROPERTIES,
  type SessionMath,
  type SessionProperty,
  sourceFields,
  sourceProperties,
  type SourceMath,
} from '../../storage/events/index.js'
import { propertyFilters, type PersonLookup } from '../metrics.js'
import type { MetricType } from './statistics.js'

/** What the event store reads (`steps`) and how it aggregates them (ExperimentAggregation, in the store). */
export interface MetricPlan extends ExperimentAggregation {
  type: MetricType
  /**
   * Mean: the source; ratio: numerator then denominator; funnel: the series; retention: start then completion
   * (only the completion when it starts at the exposure: `metricSteps` puts the exposure's filter first).
   */
  steps: FunnelStep[]
  /** Mean: one; ratio: two; funnel: none. */
  sources: SourceMath[]
  /** The event properties broken down by, in order (none: no breakdown). */
  breakdowns: ExperimentBreakdown[]
  /** Retention: its window, to which the runner adds the experiment's bounds and the project's zone. */
  retentionWindow?: RetentionFields
  /** Retention started at the exposure (an ExperimentExposureNode `start_event`). */
  startsAtExposure?: boolean
}

export type RetentionFields = Pick<RetentionWindow, 'startHandling' | 'unit' | 'start' | 'end'>

export type ActionLookup = (id: number) => Pick<ActionRecord, 'steps'> | null

const refuse = (detail: string) => new ValidationError('invalid', detail)

/** A retention start that is the experiment's exposure itself. */
const EXPOSURE_NODE = 'ExperimentExposureNode'

const SECONDS: ReadonlyMap<string, number> = new Map([
  ['second', 1],
  ['minute', 60],
  ['hour', 3600],
  ['day', 86_400],
  ['week', 7 * 86_400],
  ['month', 30 * 86_400],
])

/** `conversion_window_to_seconds`, in ms; null when the metric sets no window. */
function windowMs(metric: JsonObject): number | null {
  const { conversion_window: n, conversion_window_unit: unit } = metric
  if (n === undefined || n === null || unit === undefined || unit === null) return null
  const seconds = typeof unit === 'string' ? SECONDS.get(unit) : undefined
  if (seconds === undefined) throw refuse(`Unsupported conversion window unit: ${String(unit)}`)
  if (typeof n !== 'number' || !Number.isInteger(n)) throw refuse('conversion_window must be an integer.')
  return n * seconds * 1000
}

/** An ActionsNode's `id` as an action id (a whole number, or its digits as text), else null. */
export function actionId(id: unknown): number | null {
  const n = typeof id === 'string' && /^\d+$/.test(id) ? Number(id) : id
  return typeof n === 'number' && Number.isSafeInteger(n) ? n : null
}

/** What an ActionsNode's `id` matches: its action's steps; PostHog's event_or_action_to_filter matches no events for an action that does not exist. */
export function actionMatch(id: unknown, actionById: ActionLookup): PropertyNode {
  const n = actionId(id)
  const action = n === null ? null : actionById(n)
  return action ? actionCondition(action.steps) : { distinctIds: [] }
}

function sourceOf(node: unknown, actionById: ActionLookup, person: PersonLookup | null): { step: FunnelStep; math: SourceMath } {
  if (!isPlainObject(node)) throw refuse('A metric source must be an object.')
  if (node.kind === 'ExperimentDataWarehouseNode') throw refuse('Data warehouse metrics are not supported: skylark has no data warehouse.')
  const properties = propertyFilters(node.properties, person)
  let step: FunnelStep
  if (node.kind === 'ActionsNode') {
    step = { event: null, properties: [...properties, actionMatch(node.id, actionById)] }
  } else if (node.kind === 'EventsNode') {
    if (node.event !== undefined && node.event !== null && typeof node.event !== 'string') throw refuse('An EventsNode event must be a string.')
    step = { event: typeof node.event === 'string' ? node.event : null, properties }
  } else throw refuse(`Unsupported metric source kind: ${String(node.kind)}`)
  const math = node.math
  const property = typeof node.math_property === 'string' && node.math_property !== '' ? node.math_property : null
  if (math === 'hogql') return { step, math: hogqlMath(node.math_hogql, person) }
  if (math === 'unique_session') return { step, math: { kind: 'distinct', key: '$session_id' } }
  if (math === 'dau') return { step, math: { kind: 'distinct', key: 'person' } }
  if (math === 'unique_group') return { step, math: uniqueGroup(node.math_group_type_index) }
  if ((math === 'sum' || math === 'avg' || math === 'min' || math === 'max') && property !== null) return { step, math: { kind: math, property } }
  return { step, math: { kind: 'count' } }
}

/**
 * Whether a metric source reads a session property (`is_session_property_metric`): `$session_duration` whatever
 * its `math_property_type`, or one of the others PostHog allows typed `session_properties`. Any other property
 * so typed is read from the events, as PostHog reads it.
 */
export function isSessionPropertySource(node: unknown): boolean {
  if (!isPlainObject(node)) return false
  const property = node.math_property
  return property === '$session_duration' || (isSessionProperty(property) && node.math_property_type === 'session_properties')
}

function isSessionProperty(property: unknown): property is SessionProperty {
  return (SESSION_PROPERTIES as readonly unknown[]).includes(property)
}

/**
 * A mean's session property math (SessionMath), null for a source that reads none: `_build_value_aggregation_expr`
 * over the sessions' values, `avg`, `min`, `max` as named, a distinct count for `unique_session`, `dau` and
 * `unique_group`, else a sum. HogQL math on one is refused.
 */
function sessionMath(node: unknown): SessionMath | null {
  if (!isSessionPropertySource(node)) return null
  const { math, math_property: property } = node as JsonObject
  if (math === 'hogql') throw refuse('HogQL math over a session property is not supported here.')
  const aggregation = math === 'avg' || math === 'min' || math === 'max' ? math : math === 'unique_session' || math === 'dau' || math === 'unique_group' ? 'distinct' : 'sum'
  return { kind: 'session', sessionProperty: property as SessionProperty, aggregation }
}

/**
 * `math: 'hogql'`: `math_hogql`'s aggregation and expression (src/storage/events/hogql-math.ts says what is
 * read), with the person properties it reads as `lookup` resolved them (none: refused). Without one PostHog's
 * value is the constant 1, summed: the event count.
 */
function hogqlMath(text: unknown, lookup: PersonLookup | null): SourceMath {
  if (text === undefined || text === null || text === '') return { kind: 'count' }
  if (typeof text !== 'string') throw refuse('math_hogql must be a string.')
  let hogql: HogqlMath
  try {
    hogql = parseHogqlMath(text)
  } catch (error) {
    if (error instanceof HogqlMathError) throw refuse(`math_hogql: ${error.message}`)
    throw error
  }
  const paths = hogqlProperties(hogql.expr, 'person')
  if (paths.length === 0) return { kind: 'hogql', hogql }
  if (lookup === null) throw refuse('math_hogql: Person properties are not read here.')
  return { kind: 'hogql', hogql, persons: paths.map((path) => lookup.personProperty(path)) }
}

/**
 * `unique_group`: the distinct `$group_<n>` keys of the events. PostHog reads the type only when it is truthy,
 * so with type 0 (or none) its value is the constant 1 and the distinct count says whether there was an event.
 */
function uniqueGroup(index: unknown): SourceMath {
  if (index === undefined || index === null) return { kind: 'any' }
  if (index !== 0 && index !== 1 && index !== 2 && index !== 3 && index !== 4) throw refuse('math_group_type_index must be one of 0, 1, 2, 3, 4.')
  return index === 0 ? { kind: 'any' } : { kind: 'distinct', key: `$group_${index}` }
}

function percentile(value: unknown, name: string): number | null {
  if (value === undefined || value === null) return null
  if (typeof value !== 'number' || !(value >= 0 && value <= 1)) throw refuse(`${name} must be a number between 0 and 1.`)
  // A bound of 0 is a bound, as in PostHog's mean query builder (`is not None`): quantileExact(0) is the least value.
  return value
}

/**
 * The breakdowns' event properties (PostHog reads `breakdownFilter.breakdowns` only, and `str()`s a numeric
 * property), and person and group properties as `lookup` resolved them. Other breakdown types read sessions,
 * cohorts or HogQL, which skylark can't.
 */
export function breakdownProperties(metric: JsonObject, lookup: PersonLookup | null = null): ExperimentBreakdown[] {
  const filter = metric.breakdownFilter
  if (filter === undefined || filter === null) return []
  if (!isPlainObject(filter)) throw refuse('breakdownFilter must be an object.')
  const breakdowns = filter.breakdowns
  if (breakdowns === undefined || breakdowns === null) return []
  if (!Array.isArray(breakdowns)) throw refuse('breakdownFilter.breakdowns must be a list.')
  if (breakdowns.length > MAX_EXPERIMENT_BREAKDOWNS) throw refuse(`Maximum of ${MAX_EXPERIMENT_BREAKDOWNS} breakdowns are supported for experiment metrics`)
  return breakdowns.map((b) => {
    if (!isPlainObject(b)) throw refuse('A breakdown must be an object.')
    const { property, type } = b
    const holder = (type === 'person' || type === 'group') && lookup !== null
    if (type !== undefined && type !== null && type !== 'event' && !holder) {
      throw refuse(`Breakdowns of type ${JSON.stringify(type)} are not supported in experiment metrics here; only event, person and group property breakdowns are.`)
    }
    const key = typeof property === 'string' ? property : typeof property === 'number' && Number.isInteger(property) ? String(property) : null
    if (key === null) throw refuse('A breakdown property must be a string or an integer.')
    if (!holder) return key
    if (type === 'person') return lookup.breakdown(key)
    const index = b.group_type_index
    if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index > 4) throw refuse('A group breakdown needs a group_type_index from 0 to 4.')
    return lookup.breakdown(key, index)
  })
}

/** A retention metric's window fields, checked as its pydantic model types them (all required). */
function retentionWindow(metric: JsonObject): RetentionFields {
  const integer = (name: string): number => {
    const v = metric[name]
    if (typeof v !== 'number' || !Number.isSafeInteger(v)) throw refuse(`${name} must be an integer.`)
    return v
  }
  const unit = metric.retention_window_unit
  if (typeof unit !== 'string' || !SECONDS.has(unit)) throw refuse(`retention_window_unit must be one of ${[...SECONDS.keys()].join(', ')}.`)
  const handling = metric.start_handling
  if (handling !== 'first_seen' && handling !== 'last_seen') throw refuse('start_handling must be first_seen or last_seen.')
  return { start: integer('retention_window_start'), end: integer('retention_window_end'), unit: unit as RetentionUnit, startHandling: handling }
}

/**
 * Reads a metric already checked by checkMetric (its kind, type and nodes); person property filters as
 * `person` reads them (none: refused).
 */
export function planMetric(metric: JsonObject, actionById: ActionLookup, person: PersonLookup | null = null): MetricPlan {
  const source = (node: unknown) => sourceOf(node, actionById, person)
  const window = windowMs(metric)
  // `_get_conversion_window_seconds` reads a window of 0 as none (falsy) and bounds events only when `> 0`, so a
  // mean's, ratio's or retention start's window of 0 or less is none; a funnel hands any set window to its UDF.
  const base = { windowMs: window !== null && window > 0 ? window : null, lowerPercentile: null, upperPercentile: null, ignoreZeros: false, breakdowns: breakdownProperties(metric, person) }
  if (metric.metric_type === 'mean') {
    const s = source(metric.source)
    return {
      ...base,
      type: 'mean',
      steps: [s.step],
      sources: [sessionMath(metric.source) ?? s.math],
      lowerPercentile: percentile(metric.lower_bound_percentile, 'lower_bound_percentile'),
      upperPercentile: percentile(metric.upper_bound_percentile, 'upper_bound_percentile'),
      ignoreZeros: metric.ignore_zeros === true,
      // Checked by checkMetric: positive, of a count or sum, without winsorisation (PostHog's _semantic_error).
      threshold: typeof metric.threshold === 'number' && Number.isFinite(metric.threshold) ? metric.threshold : null,
    }
  }
  if (metric.metric_type === 'ratio') {
    const numerator = source(metric.numerator)
    const denominator = source(metric.denominator)
    return { ...base, type: 'ratio', steps: [numerator.step, denominator.step], sources: [numerator.math, denominator.math] }
  }
  if (metric.metric_type === 'funnel') {
    const order = metric.funnel_order_type ?? 'ordered'
    if (order !== 'ordered' && order !== 'unordered' && order !== 'strict') throw refuse('funnel_order_type must be one of ordered, unordered, strict.')
    const series = metric.series as unknown[]
    if (series.length > MAX_EXPERIMENT_STEPS) throw refuse(`Funnel metrics take at most ${MAX_EXPERIMENT_STEPS} steps here.`)
    return { ...base, windowMs: window, type: 'funnel', funnelOrder: order, steps: series.map((node) => source(node).step), sources: [] }
  }
  if (metric.metric_type === 'retention') {
    const completion = source(metric.completion_event)
    if (isPlainObject(metric.start_event) && metric.start_event.kind === EXPOSURE_NODE) {
      // checkMetric refused a conversion window and `last_seen` with it (PostHog's retention_metric_error).
      const window: RetentionFields = { ...retentionWindow(metric), startHandling: 'first_seen' }
      return { ...base, type: 'retention', steps: [completion.step], sources: [], retentionWindow: window, startsAtExposure: true }
    }
    const start = source(metric.start_event)
    return { ...base, type: 'retention', steps: [start.step, completion.step], sources: [], retentionWindow: retentionWindow(metric) }
  }
  throw refuse(`Metric type '${String(metric.metric_type)}' is not supported here; mean, funnel, ratio and retention metrics are.`)
}

/**
 * The steps the event store reads: the plan's, and for retention started at the exposure the exposure's filter
 * (its event, flag and variants, the config's properties) first, so each entity's first exposure is its start.
 */
export function metricSteps(plan: MetricPlan, exposure: EventFilter): FunnelStep[] {
  if (plan.startsAtExposure !== true) return plan.steps
  return [{ event: exposure.event ?? null, properties: exposure.properties ?? [] }, ...plan.steps]
}

/** The event properties (paths, for HogQL's `properties.a.b`) the aggregation reads from each event, in order. */
export function valueProperties(plan: MetricPlan): PropertyPath[] {
  return sourceProperties(plan.sources)
}

/** The event fields HogQL math reads from each event (`event`, `distinct_id`), in order. */
export function valueFields(plan: MetricPlan): HogqlField[] {
  return sourceFields(plan.sources)
}

/** The keys whose distinct texts the aggregation counts from each event (a session metric's sessions too), in order. */
export function distinctKeys(plan: MetricPlan): DistinctKey[] {
  return [...new Set(plan.sources.flatMap((m): DistinctKey[] => (m.kind === 'distinct' ? [m.key] : m.kind === 'session' ? ['$session_id'] : [])))]
}
