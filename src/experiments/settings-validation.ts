/**
 * PostHog's checks of the new metrics engine's fields (products/experiments/backend/experiment_service.py,
 * presentation/serializers.py, hogql_queries/retention_validation.py), with its messages. Checks PostHog runs
 * as field validators name the field in `attr`; those its service runs have `attr: null`. Metrics are checked
 * for their shape (kind, metric_type and the nodes each type reads), not against PostHog's whole pydantic schema.
 */
import { ValidationError } from '../common/errors.js'
import { isPlainObject, type JsonObject } from '../common/json.js'
import { pyRepr, pyStr, pyTypeName as pyType } from '../common/python-format.js'

const fail = (detail: string, attr: string | null = null) => new ValidationError('invalid', detail, attr)

const LEGACY_METRIC_KINDS = new Set(['ExperimentTrendsQuery', 'ExperimentFunnelsQuery'])

/** The pydantic class of each metric_type and the source nodes it needs. */
const METRIC_TYPES: Readonly<Record<string, { cls: string; nodes: readonly string[] }>> = {
  mean: { cls: 'ExperimentMeanMetric', nodes: ['source'] },
  funnel: { cls: 'ExperimentFunnelMetric', nodes: [] },
  ratio: { cls: 'ExperimentRatioMetric', nodes: ['numerator', 'denominator'] },
  retention: { cls: 'ExperimentRetentionMetric', nodes: ['start_event', 'completion_event'] },
}
const NODE_KINDS: readonly string[] = ['EventsNode', 'ActionsNode', 'ExperimentDataWarehouseNode']
/** A retention metric's start may also be the experiment's exposure itself (PostHog's ExperimentExposureNode). */
const EXPOSURE_NODE = 'ExperimentExposureNode'
const RETENTION_START_KINDS: readonly string[] = [...NODE_KINDS, EXPOSURE_NODE]
const EVENTS_NODE_ID_HINT =
  "EventsNode does not accept an 'id' field. To reference an event, use {'kind': 'EventsNode', 'event': '<event_name>'} (omit 'id'). " +
  "To reference an action, switch to {'kind': 'ActionsNode', 'id': <integer_action_id>} (omit 'event')."

interface PydanticError {
  loc: readonly (string | number)[]
  type: string
  msg: string
}

/** A pydantic error list as PostHog puts it in its messages (Python reprs, loc a tuple). */
function pyErrors(errors: readonly PydanticError[]): string {
  const tuple = (loc: readonly (string | number)[]) => `(${loc.map((p) => pyRepr(p)).join(', ')}${loc.length === 1 ? ',' : ''})`
  return `[${errors.map((e) => `{'loc': ${tuple(e.loc)}, 'type': ${pyRepr(e.type)}, 'msg': ${pyRepr(e.msg)}}`).join(', ')}]`
}

/** The first structural problem of a source node (EventsNode, ActionsNode, data warehouse node, or one of `kinds`), if any. */
function nodeError(node: unknown, loc: readonly (string | number)[], kinds: readonly string[] = NODE_KINDS): PydanticError | null {
  if (!isPlainObject(node)) return { loc, type: 'model_type', msg: 'Input should be a valid dictionary or instance of a model' }
  const kind = node.kind
  if (typeof kind !== 'string' || !kinds.includes(kind)) {
    const tags = kinds.map((k) => `'${k}'`).join(', ')
    return { loc: [...loc, 'kind'], type: 'union_tag_invalid', msg: `Input tag '${pyStr(kind)}' found using 'kind' does not match any of the expected tags: ${tags}` }
  }
  if (kind === 'EventsNode' && 'id' in node) return { loc: [...loc, 'EventsNode', 'id'], type: 'extra_forbidden', msg: 'Extra inputs are not permitted' }
  if (kind === 'EventsNode' && node.event !== undefined && node.event !== null && typeof node.event !== 'string') {
    return { loc: [...loc, 'EventsNode', 'event'], type: 'string_type', msg: 'Input should be a valid string' }
  }
  if (kind === 'ActionsNode' && !Number.isInteger(node.id)) return { loc: [...loc, 'ActionsNode', 'id'], type: 'int_type', msg: 'Input should be a valid integer' }
  return null
}

/** The spec of a metric_type (own keys only: `constructor` is no metric type). */
function metricSpec(type: unknown): { cls: string; nodes: readonly string[] } | undefined {
  return typeof type === 'string' && Object.hasOwn(METRIC_TYPES, type) ? METRIC_TYPES[type] : undefined
}

/** The nodes of a metric, as PostHog's `_extract_entity_nodes` reads them. */
function metricNodes(metric: JsonObject): unknown[] {
  const type = metric.metric_type
  if (type === 'funnel') return Array.isArray(metric.series) ? metric.series : []
  return (metricSpec(type)?.nodes ?? []).map((field) => metric[field]).filter((n) => n !== undefined && n !== null)
}

/** The first problem of an ExperimentMetric, after `prefix` (which says where the metric is), if any. */
function metricError(metric: JsonObject, prefix: string): string | null {
  const spec = metricSpec(metric.metric_type)
  if (!spec) {
    return `${prefix}${pyErrors([
      metric.metric_type === undefined
        ? { loc: [], type: 'union_tag_not_found', msg: "Unable to extract tag using discriminator 'metric_type'" }
        : { loc: [], type: 'union_tag_invalid', msg: `Input tag '${pyStr(metric.metric_type)}' found using 'metric_type' does not match any of the expected tags: 'mean', 'funnel', 'ratio', 'retention'` },
    ])}.`
  }
  const errors: PydanticError[] = []
  if (metric.metric_type === 'funnel') {
    if (!Array.isArray(metric.series)) errors.push({ loc: [spec.cls, 'series'], type: metric.series === undefined ? 'missing' : 'list_type', msg: metric.series === undefined ? 'Field required' : 'Input should be a valid list' })
    else metric.series.forEach((step, n) => {
      const error = nodeError(step, [spec.cls, 'series', n])
      if (error) errors.push(error)
    })
  }
  for (const field of spec.nodes) {
    if (metric[field] === undefined) errors.push({ loc: [spec.cls, field], type: 'missing', msg: 'Field required' })
    else {
      const kinds = metric.metric_type === 'retention' && field === 'start_event' ? RETENTION_START_KINDS : NODE_KINDS
      const error = nodeError(metric[field], [spec.cls, field], kinds)
      if (error) errors.push(error)
    }
  }
  if (errors.length > 0) {
    const hint = errors.some((e) => e.type === 'extra_forbidden' && e.loc.at(-1) === 'id') ? ` ${EVENTS_NODE_ID_HINT}` : ''
    return `${prefix}${pyErrors(errors.slice(0, 15))}.${hint}`
  }
  if (metric.metric_type === 'funnel' && (metric.series as unknown[]).length === 0) {
    return `${prefix}funnel metrics require at least one step. The experiment exposure event is added as the initial step automatically.`
  }
  if (metric.metric_type === 'mean' && metric.threshold !== undefined && metric.threshold !== null) {
    // `is_threshold_supported_math`: sum or total only; no math (pydantic's None) is neither.
    const math = isPlainObject(metric.source) ? metric.source.math : undefined
    if (math !== 'total' && math !== 'sum') {
      return `${prefix}a threshold is only supported for sum or count (total) math types.`
    }
    if (typeof metric.threshold !== 'number' || metric.threshold <= 0) return `${prefix}threshold must be a positive number.`
    if ((metric.lower_bound_percentile ?? null) !== null || (metric.upper_bound_percentile ?? null) !== null) {
      return `${prefix}a threshold cannot be combined with outlier handling (winsorization).`
    }
  }
  if (metric.metric_type === 'retention' && isPlainObject(metric.start_event) && metric.start_event.kind === EXPOSURE_NODE) {
    // PostHog's retention_metric_error: the engine ignores both for an exposure start, so they are not stored.
    if ((metric.conversion_window ?? null) !== null || (metric.conversion_window_unit ?? null) !== null) {
      return `${prefix}a conversion window cannot be combined with an experiment exposure start. Retention already anchors on each user's first exposure.`
    }
    if (metric.start_handling === 'last_seen') {
      return `${prefix}start_handling 'last_seen' cannot be combined with an experiment exposure start. Retention always anchors on each user's first exposure.`
    }
  }
  return null
}

/**
 * One ExperimentMetric: a dict of kind ExperimentMetric (legacy kinds refused) with the shape its
 * `metric_type` needs. `prefix` says where it is (PostHog's `error_prefix`): "Invalid metric at index 2: "
 * in an experiment's list, "Invalid metric: " for a shared metric's query.
 */
export function checkMetric(metric: unknown, prefix: string, attr: string | null): void {
  if (!isPlainObject(metric)) throw fail(`${prefix}must be a dict`, attr)
  if (typeof metric.kind === 'string' && LEGACY_METRIC_KINDS.has(metric.kind)) {
    throw fail(`${prefix}legacy metric kind '${metric.kind}' is no longer supported for new experiments. Use 'ExperimentMetric' instead.`, attr)
  }
  if (metric.kind !== 'ExperimentMetric') throw fail(`${prefix}metric kind must be 'ExperimentMetric'`, attr)
  const error = metricError(metric, prefix)
  if (error) throw fail(error, attr)
}

/** The action ids the ActionsNodes of a checked metric list name (PostHog's `extract_entity_nodes`). */
export function metricActionIds(metrics: readonly unknown[] | null | undefined): number[] {
  const ids = new Set<number>()
  for (const metric of metrics ?? []) {
    if (!isPlainObject(metric)) continue
    for (const node of metricNodes(metric)) if (isPlainObject(node) && node.kind === 'ActionsNode' && Number.isInteger(node.id)) ids.add(node.id as number)
  }
  return [...ids].sort((a, b) => a - b)
}

/** Which of these ids name a live (not deleted) action of the project. */
export type LiveActionIds = (projectId: number, ids: readonly number[]) => ReadonlySet<number>

/**
 * PostHog's `validate_metric_action_ids`: every ActionsNode must name a live action of the project. Ids in
 * `known` (already stored on the experiment or shared metric) are not checked again, so deleting an action
 * an experiment uses does not block every later edit that sends its metrics back.
 */
export function checkMetricActions(metrics: readonly unknown[] | null | undefined, projectId: number, live: LiveActionIds, known: readonly number[] = []): void {
  const ids = metricActionIds(metrics).filter((id) => !known.includes(id))
  if (ids.length === 0) return
  const found = live(projectId, ids)
  const missing = ids.filter((id) => !found.has(id))
  if (missing.length > 0) {
    throw fail(`Action(s) with ID ${missing.join(', ')} not found or deleted. Each ActionsNode must reference an existing action belonging to this project.`)
  }
}

/** `metrics` / `metrics_secondary`: null, or a list of `ExperimentMetric`s. */
export function checkMetrics(metrics: unknown, attr: string): void {
  if (metrics === null || metrics === undefined) return
  if (!Array.isArray(metrics)) throw fail('Metrics must be a list', attr)
  metrics.forEach((metric, i) => checkMetric(metric, `Invalid metric at index ${i}: `, attr))
}

/** The event names a checked metric list's EventsNodes name; blank and absent ones are "all events". */
export function metricEventNames(metrics: readonly JsonObject[]): string[] {
  const names = new Set<string>()
  for (const metric of metrics) {
    for (const node of metricNodes(metric)) {
      if (isPlainObject(node) && node.kind === 'EventsNode' && typeof node.event === 'string' && node.event.trim() !== '') names.add(node.event)
    }
  }
  return [...names]
}

/** Which of the names the project has ingested (its event definitions). */
export type KnownEvents = (projectId: number, names: readonly string[]) => ReadonlySet<string>

/**
 * PostHog's `validate_metric_event_names`: a metric naming an event the project never ingested is
 * most likely a typo, refused unless the request sets `allow_unknown_events`.
 */
export function checkMetricEvents(metrics: unknown, projectId: number, known: KnownEvents): void {
  if (!Array.isArray(metrics)) return
  const names = metricEventNames(metrics as JsonObject[])
  if (names.length === 0) return
  const seen = known(projectId, names)
  const unknown = names.filter((n) => !seen.has(n)).sort()
  if (unknown.length === 0) return
  throw fail(
    `Event(s) ${unknown.map((n) => `'${n}'`).join(', ')} not found. No events with these names have been ingested by this project. ` +
      'If you meant a different event, please correct it. Only if the user has explicitly confirmed they want to proceed with ' +
      'the unknown event (e.g. they will instrument it shortly), call again with allow_unknown_events=True. ' +
      'Do not flip the flag silently to bypass this check.',
  )
}

const EXPOSURE_CONFIG_KINDS = ['ExperimentEventExposureConfig', 'ActionsNode']
const EXPOSURE_CONFIG_HINT =
  "Expected either an event-based config like {'kind': 'ExperimentEventExposureConfig', 'event': '<event_name>', 'properties': []} " +
  "or an action-based config like {'kind': 'ActionsNode', 'id': <action_id>}."

/** PostHog's `_safe_repr`: repr(), cut at 80 characters. */
function safeRepr(value: unknown): string {
  const text = pyRepr(value)
  return text.length > 80 ? `${text.slice(0, 80)}...(truncated)` : text
}

/** `exposure_criteria`: `{filterTestAccounts: bool, exposure_config: event or action config}`, all optional. */
export function checkExposureCriteria(criteria: unknown): void {
  const attr = 'exposure_criteria'
  if (criteria === null || criteria === undefined) return
  if (!isPlainObject(criteria)) {
    throw fail(`exposure_criteria must be an object, got ${pyType(criteria)}. Expected shape: {'filterTestAccounts': <bool>, 'exposure_config': <object>}.`, attr)
  }
  if ('filterTestAccounts' in criteria && typeof criteria.filterTestAccounts !== 'boolean') {
    const value = criteria.filterTestAccounts
    throw fail(`exposure_criteria.filterTestAccounts must be a boolean, got ${pyType(value)}: ${safeRepr(value)}.`, attr)
  }
  if (!('exposure_config' in criteria)) return
  const config = criteria.exposure_config
  if (!isPlainObject(config)) throw fail(`exposure_criteria.exposure_config must be an object, got ${pyType(config)}. ${EXPOSURE_CONFIG_HINT}`, attr)
  const kind = config.kind ?? 'ExperimentEventExposureConfig'
  if (typeof kind !== 'string' || !EXPOSURE_CONFIG_KINDS.includes(kind)) {
    throw fail(`exposure_criteria.exposure_config.kind must be one of ${pyStr(EXPOSURE_CONFIG_KINDS)}, got ${safeRepr(kind)}. ${EXPOSURE_CONFIG_HINT}`, attr)
  }
  const error: PydanticError | null =
    kind === 'ActionsNode'
      ? Number.isInteger(config.id) ? null : { loc: ['id'], type: config.id === undefined ? 'missing' : 'int_type', msg: config.id === undefined ? 'Field required' : 'Input should be a valid integer' }
      : typeof config.event !== 'string'
        ? { loc: ['event'], type: config.event === undefined ? 'missing' : 'string_type', msg: config.event === undefined ? 'Field required' : 'Input should be a valid string' }
        : config.properties !== undefined && !Array.isArray(config.properties)
          ? { loc: ['properties'], type: 'list_type', msg: 'Input should be a valid list' }
          : null
  if (error) throw fail(`Invalid exposure_criteria.exposure_config (kind=${safeRepr(kind)}): ${pyErrors([error])}. ${EXPOSURE_CONFIG_HINT}`, attr)
}

export const RUNNING_TIME_CALCULATION_KEYS = ['minimum_detectable_effect', 'recommended_running_time', 'recommended_sample_size', 'exposure_estimate_config']

/** `running_time_calculation`: the calculator's four keys; a falsy value passes, as in PostHog. */
export function checkRunningTimeCalculation(value: unknown): void {
  const attr = 'running_time_calculation'
  if (!value) return
  if (!isPlainObject(value)) throw fail('running_time_calculation must be an object', attr)
  const unknown = Object.keys(value).filter((k) => !RUNNING_TIME_CALCULATION_KEYS.includes(k)).sort()
  if (unknown.length > 0) throw fail(`running_time_calculation got unknown keys: ${pyStr(unknown)}`, attr)
  for (const key of RUNNING_TIME_CALCULATION_KEYS.slice(0, 3)) {
    const n = value[key]
    if (n !== undefined && n !== null && typeof n !== 'number') throw fail(`${key} must be a number`, attr)
  }
  const estimate = value.exposure_estimate_config
  if (estimate !== undefined && estimate !== null && !isPlainObject(estimate)) throw fail('exposure_estimate_config must be an object', attr)
}

/**
 * `saved_metrics_ids`: each `{id, metadata: {type}}` (the serializer's shape checks). Whether the ids name
 * shared metrics of the project is checked against the rows (saved-metrics/links.ts).
 */
export function checkSavedMetricsIds(value: unknown): void {
  const attr = 'saved_metrics_ids'
  if (value === null || value === undefined) return
  if (!Array.isArray(value)) throw fail('Saved metrics must be a list', attr)
  for (const item of value) {
    if (!isPlainObject(item)) throw fail('Saved metric must be an object', attr)
    if (!('id' in item)) throw fail('Saved metric must have an id', attr)
    if ('metadata' in item && !isPlainObject(item.metadata)) throw fail('Metadata must be an object', attr)
    if ('metadata' in item && !('type' in (item.metadata as JsonObject))) throw fail('Metadata must have a type key', attr)
  }
}

const STATS_METHODS = ['bayesian', 'frequentist']

/** `stats_config.method` and, when the variants are known, `baseline_variant_key`. */
export function checkStatsConfig(stats: JsonObject | null | undefined, variantKeys: readonly string[]): void {
  if (!stats || Object.keys(stats).length === 0) return
  const method = stats.method
  if (method !== undefined && method !== null && !STATS_METHODS.includes(method as string)) {
    throw fail(`Invalid stats method: '${pyStr(method)}'. Must be one of: ${STATS_METHODS.join(', ')}`)
  }
  const baseline = stats.baseline_variant_key
  if (baseline !== undefined && baseline !== null && variantKeys.length > 0 && !variantKeys.includes(baseline as string)) {
    throw fail(`Invalid baseline_variant_key: '${pyStr(baseline)}'. Must be one of: ${[...variantKeys].sort().join(', ')}`)
  }
}

/** The baseline variant: `stats_config.baseline_variant_key`, else control. */
export function baselineKey(stats: JsonObject | null | undefined): string {
  const key = stats?.baseline_variant_key
  return typeof key === 'string' ? key : 'control'
}

/** `excluded_variants` against the flag's variants: no holdouts, not the baseline, known keys, one test variant left. */
export function checkExcludedVariants(excluded: readonly string[] | null | undefined, variantKeys: readonly string[], baseline: string): void {
  if (!excluded || excluded.length === 0) return
  const holdouts = [...new Set(excluded.filter((k) => k.startsWith('holdout-')))].sort()
  if (holdouts.length > 0) throw fail(`cannot exclude holdout pseudo-variants: ${pyStr(holdouts)}`)
  if (excluded.includes(baseline)) throw fail(`baseline variant cannot be excluded ('${baseline}')`)
  const unknown = [...new Set(excluded.filter((k) => !variantKeys.includes(k)))].sort()
  if (unknown.length > 0) throw fail(`unknown variants for this experiment: ${pyStr(unknown)}`)
  if (!variantKeys.some((k) => !excluded.includes(k) && k !== baseline)) throw fail('at least one test variant must remain in analysis')
}
