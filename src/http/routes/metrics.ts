/**
 * OTLP metrics. POST /i/v1/metrics is PostHog's capture-logs route for metrics (./otlp.ts), where posthog-js's
 * `posthog.metrics` and OpenTelemetry's exporters send. The management API reads them as PostHog's
 * MetricsViewSet does, under /api/projects/:id/metrics/ (and /api/environments/:id/metrics/): `query` (series
 * per clause, or a formula's), `samples` (raw points), `values` (metric names), `attributes`,
 * `attribute_values`, `overview`, `has_metrics`. Scope `metrics:read`.
 */
import { drfDict } from '../../common/drf-fields.js'
import { ValidationError } from '../../common/errors.js'
import { isoformat } from '../../common/time-zones.js'
import type { ProjectResolver } from '../../management/index.js'
import type { MetricRow, MetricService } from '../../metrics/index.js'
import { limitParam, parseMetricQuery, parseSamplesQuery, servicesParam, windowParams } from '../../metrics/input.js'
import { attributeKeysJson, checkServices, namesFrom, namesJson, rankNames, SPARKLINE_POINTS, SPARKLINE_WINDOW_MS } from '../../metrics/pickers.js'
import { bucketer, clausePoints, scanFrom, type ClausePoint } from '../../metrics/query.js'
import { metricSeries } from '../../metrics/series.js'
import type { OperationDoc } from '../../schemas/openapi.js'
import { projectRoute, type ApiContext } from '../api.js'
import type { Router } from '../router.js'
import { registerOtlpIngest } from './otlp.js'

const METRICS = '/api/projects/:project_id/metrics'
const TAG = 'metrics'
const text = (name: string, description: string) => ({ name, description, schema: { type: 'string' } })
const window = [text('dateFrom', 'Start of the window (ISO 8601, moved back to its hour); seven days before `dateTo` by default.'), text('dateTo', 'End of the window; now by default.')]

export const METRIC_OPERATIONS = [
  {
    operationId: 'metrics_query_create',
    method: 'post',
    path: `${METRICS}/query/`,
    summary:
      'A metric over a range as series on one bucket grid: `metricName` with an aggregation (sum, avg, count, min, max, p95, rate, increase, histogram_quantile), filters and groupBy, or up to ten `clauses` combined by a `formula`.',
    tag: TAG,
    scope: 'metrics:read',
    requestBody: 'MetricsQueryRequest',
    responses: { 200: 'MetricsResultsResponse' },
  },
  {
    operationId: 'metrics_samples_create',
    method: 'post',
    path: `${METRICS}/samples/`,
    summary: "A metric's raw data points, newest first, or every metric's on one trace (`traceId`).",
    tag: TAG,
    scope: 'metrics:read',
    requestBody: 'MetricsQueryRequest',
    responses: { 200: 'MetricsResultsResponse' },
  },
  {
    operationId: 'metrics_values_retrieve',
    method: 'get',
    path: `${METRICS}/values/`,
    summary: 'Metric names reported in the last day, those of the most services first (a search: the equal name, then those starting and ending with it), each with its type, unit, newest point and a six-hour sparkline.',
    tag: TAG,
    scope: 'metrics:read',
    query: [text('value', 'Only names holding this, case aside.'), text('limit', 'At most this many (100 by default, 1,000 at most).'), text('service', 'Comma-separated services; empty: the senders without a service name.')],
    responses: { 200: 'MetricsResultsResponse' },
  },
  {
    operationId: 'metrics_attributes_retrieve',
    method: 'get',
    path: `${METRICS}/attributes/`,
    summary: 'Attribute keys of the metrics in a window (the last seven days by default; data point and resource attributes merged): service_name first, then those the most data points carry.',
    tag: TAG,
    scope: 'metrics:read',
    query: [text('search', 'Only keys holding this, case aside.'), text('limit', 'At most this many.'), ...window],
    responses: { 200: 'MetricsResultsResponse' },
  },
  {
    operationId: 'metrics_attribute_values_retrieve',
    method: 'get',
    path: `${METRICS}/attribute_values/`,
    summary: "An attribute's values in a window (the last seven days by default): the one equal to the search first, then the most frequent.",
    tag: TAG,
    scope: 'metrics:read',
    query: [text('key', 'The attribute (`service_name` lists services).'), text('value', 'Only values holding this, case aside.'), text('limit', 'At most this many.'), ...window],
    responses: { 200: 'MetricsResultsResponse' },
  },
  {
    operationId: 'metrics_overview_retrieve',
    method: 'get',
    path: `${METRICS}/overview/`,
    summary: 'What arrived in the last day: distinct metric names and series, per service (the 500 with the most series), and the newest data point ever.',
    tag: TAG,
    scope: 'metrics:read',
    responses: { 200: null },
  },
  {
    operationId: 'metrics_has_metrics_retrieve',
    method: 'get',
    path: `${METRICS}/has_metrics/`,
    summary: 'Whether the project has received any metric.',
    tag: TAG,
    scope: 'metrics:read',
    responses: { 200: null },
  },
] as const satisfies readonly OperationDoc[]

const freeForm = { type: 'object', additionalProperties: true }
export const METRIC_COMPONENTS = {
  MetricsQueryRequest: { type: 'object', properties: { query: freeForm }, required: ['query'] },
  MetricsResultsResponse: { type: 'object', properties: { results: { type: 'array', items: freeForm } } },
}

/** The overview's window, and the services it lists at most. */
const OVERVIEW_LOOKBACK_MS = 86_400_000
const OVERVIEW_SERVICES = 500

/** Samples a clause may read: beyond them the query is refused rather than answered from part of the range. */
const MAX_SAMPLES = 200_000
/** (bucket, label set) rows a clause may make, as PostHog's runner caps them. */
const MAX_ROWS = 10_000

export interface MetricRouteDeps {
  store: MetricService
  resolveProject: ProjectResolver
  maxBytes: number
  now?: () => number
}

function sampleJson(row: MetricRow, zone: string): Record<string, unknown> {
  return {
    timestamp: isoformat(row.timestamp, zone),
    metric_name: row.metric_name,
    metric_type: row.metric_type,
    value: row.value,
    count: row.count,
    unit: row.unit,
    aggregation_temporality: row.aggregation_temporality,
    is_monotonic: row.is_monotonic,
    service_name: row.service_name,
    trace_id: row.trace_id,
    span_id: row.span_id,
    attributes: row.attributes,
    resource_attributes: row.resource_attributes,
  }
}

export function registerMetricRoutes(router: Router, api: ApiContext, deps: MetricRouteDeps, apiMax: number): void {
  const now = deps.now ?? Date.now
  const store = deps.store
  registerOtlpIngest(router, { path: '/i/v1/metrics', what: 'metrics', store }, deps)

  const read = { scope: 'metrics:read' } as const
  router.add(
    'post',
    `${METRICS}/query/`,
    projectRoute(api, read, async (req) => {
      const zone = req.project.timezone
      const q = parseMetricQuery(req.body, now(), (ms, interval) => bucketer(interval, zone)(ms))
      const points = new Map<string, ClausePoint[]>()
      for (const clause of q.clauses) {
        const rows = await store.samples({
          teamId: req.project.id,
          metricName: clause.metricName,
          metricType: clause.metricType,
          from: scanFrom(clause, q.fromMs, q.interval) * 1000,
          to: q.toMs * 1000,
          filters: clause.filters,
          limit: MAX_SAMPLES + 1,
        })
        if (rows.length > MAX_SAMPLES) throw new ValidationError('parse_error', `query reads more than ${MAX_SAMPLES.toLocaleString('en')} samples; use a narrower range or filters`)
        const found = clausePoints(rows, clause, { fromMs: q.fromMs, interval: q.interval, zone })
        if (found.length >= MAX_ROWS) {
          throw new ValidationError('parse_error', 'query produced too many (time bucket, group) rows; use a coarser interval, a narrower range, or a lower-cardinality group_by')
        }
        points.set(clause.name, found)
      }
      return { results: metricSeries(q.clauses, points, q.formula, zone) }
    }),
    { maxBodyBytes: apiMax },
  )
  router.add(
    'post',
    `${METRICS}/samples/`,
    projectRoute(api, read, async (req) => {
      const q = parseSamplesQuery(drfDict(req.body), now())
      const rows = await store.samples({ teamId: req.project.id, metricName: q.metricName, metricType: q.metricType, from: q.fromMs * 1000, to: q.toMs * 1000, filters: q.filters, traceId: q.traceId, spanId: q.spanId, limit: q.limit })
      return { results: rows.map((row) => sampleJson(row, req.project.timezone)) }
    }),
    { maxBodyBytes: apiMax },
  )
  router.add(
    'get',
    `${METRICS}/values/`,
    projectRoute(api, read, async (req) => {
      const nowMs = now()
      const services = checkServices(servicesParam(req.query.get('service')))
      const search = (req.query.get('value') ?? '').trim()
      const limit = limitParam(req.query.get('limit'))
      const names = rankNames(await store.names({ teamId: req.project.id, from: namesFrom(nowMs) * 1000, search, services }), search, limit)
      const from = (nowMs - SPARKLINE_WINDOW_MS) * 1000
      const sparklines = names.length
        ? await store.nameSparklines({ teamId: req.project.id, names: names.map((n) => n.name), services, from, to: nowMs * 1000, bucket: (SPARKLINE_WINDOW_MS / SPARKLINE_POINTS) * 1000 })
        : []
      return { results: namesJson(names, sparklines, req.project.timezone) }
    }),
    { maxBodyBytes: 0 },
  )
  router.add(
    'get',
    `${METRICS}/attributes/`,
    projectRoute(api, read, async (req) => {
      const search = (req.query.get('search') ?? '').trim()
      const limit = limitParam(req.query.get('limit'))
      const results = attributeKeysJson(await store.attributeKeys({ teamId: req.project.id, ...windowParams(req.query, now()), search }), search, limit)
      return { results, count: results.length }
    }),
    { maxBodyBytes: 0 },
  )
  router.add(
    'get',
    `${METRICS}/attribute_values/`,
    projectRoute(api, read, async (req) => {
      const key = req.query.get('key')
      if (key === null || key === '') throw new ValidationError(key === null ? 'required' : 'blank', key === null ? 'This field is required.' : 'This field may not be blank.', 'key')
      const values = await store.attributeValues({ teamId: req.project.id, ...windowParams(req.query, now()), key, search: (req.query.get('value') ?? '').trim(), limit: limitParam(req.query.get('limit')) })
      return { results: values.map((v) => ({ id: v.name, name: v.name, count: v.count })) }
    }),
    { maxBodyBytes: 0 },
  )
  router.add(
    'get',
    `${METRICS}/overview/`,
    projectRoute(api, read, async (req) => {
      const zone = req.project.timezone
      const since = now() - OVERVIEW_LOOKBACK_MS
      // PostHog counts names by the hour they arrived in, so its window starts at the hour.
      const o = await store.overview(req.project.id, since * 1000, Math.floor(since / 3_600_000) * 3_600_000_000)
      return {
        last_seen: o.lastSeen === null ? null : isoformat(o.lastSeen, zone),
        metric_names: o.metricNames,
        series: o.services.reduce((n, s) => n + s.series, 0),
        lookback_seconds: OVERVIEW_LOOKBACK_MS / 1000,
        services: o.services.slice(0, OVERVIEW_SERVICES).map((s) => ({ ...s, last_seen: isoformat(s.last_seen, zone) })),
      }
    }),
    { maxBodyBytes: 0 },
  )
  router.add(
    'get',
    `${METRICS}/has_metrics/`,
    projectRoute(api, read, async (req) => ({ hasMetrics: await store.hasMetrics(req.project.id) })),
    { maxBodyBytes: 0 },
  )
}
