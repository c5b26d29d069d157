/**
 * OTLP metrics requests (ExportMetricsServiceRequest) as PostHog's capture-logs reads them at /i/v1/metrics:
 * protobuf or JSON (src/common/otlp.ts). Both decoders give `OtlpResourceMetrics[]`, each metric with its type
 * and its data points in one shape: a number point's value, or a distribution's sum, count and buckets.
 */
import { bad, digits, double, field, hexId, int32, keyValues, list, object, otlpDocuments, text, type AnyValue } from '../common/otlp.js'
import { readMetricsProto } from './otlp-proto.js'

/** PostHog's names of OTLP's metric types, as stored in `metric_type`. */
export const METRIC_TYPES = ['gauge', 'sum', 'histogram', 'exponential_histogram', 'summary'] as const
export type MetricType = (typeof METRIC_TYPES)[number]

export interface ExponentialBuckets {
  offset: number
  counts: number[]
}

export interface OtlpDataPoint {
  attributes: Array<[string, AnyValue]>
  /** Nanoseconds since the epoch as digits ('0' when absent). */
  timeUnixNano: string
  flags: number
  /** A number point's value, or a distribution's sum (0 when absent). */
  value: number
  /** A distribution's count of observations. */
  count?: number
  /** A histogram's explicit bounds and bucket counts. */
  bounds?: number[]
  counts?: number[]
  exponential?: { scale: number; zeroCount: number; positive: ExponentialBuckets | null; negative: ExponentialBuckets | null }
  /** A summary's (quantile, value) pairs. */
  quantiles?: Array<[number, number]>
  exemplars: Array<{ traceId: Buffer; spanId: Buffer }>
}

export interface OtlpMetric {
  name: string
  unit: string
  /** null: the metric carried no data. */
  type: MetricType | null
  /** OTLP's AggregationTemporality: 1 delta, 2 cumulative, 0 unspecified. */
  temporality: number
  monotonic: boolean
  points: OtlpDataPoint[]
}

export interface OtlpScopeMetrics {
  scope: { name: string; version: string } | null
  metrics: OtlpMetric[]
}

export interface OtlpResourceMetrics {
  resourceAttributes: Array<[string, AnyValue]> | null
  scopeMetrics: OtlpScopeMetrics[]
}

/** The request's resource metrics. */
export function decodeMetricsRequest(body: Buffer): OtlpResourceMetrics[] {
  return otlpDocuments(body, readMetricsProto, (doc) =>
    list(field(object(doc, 'the request'), 'resourceMetrics', 'resource_metrics'), 'resourceMetrics').map(resourceMetrics),
  )
}

const TEMPORALITIES: Record<string, number> = { AGGREGATION_TEMPORALITY_UNSPECIFIED: 0, AGGREGATION_TEMPORALITY_DELTA: 1, AGGREGATION_TEMPORALITY_CUMULATIVE: 2 }

/** An enum field: its number, or (as some JSON writers send) its name. */
function temporality(v: unknown): number {
  if (typeof v === 'string' && v in TEMPORALITIES) return TEMPORALITIES[v]!
  return int32(v, 'aggregationTemporality')
}

function count(v: unknown, what: string): number {
  return Number(digits(v, what))
}

function optionalDouble(v: unknown, what: string): number {
  return v === undefined || v === null ? 0 : double(v, what)
}

function exemplars(v: unknown): OtlpDataPoint['exemplars'] {
  return list(v, 'exemplars').map((e) => {
    const o = object(e, 'an exemplar')
    return { traceId: hexId(field(o, 'traceId', 'trace_id'), 'traceId'), spanId: hexId(field(o, 'spanId', 'span_id'), 'spanId') }
  })
}

function buckets(v: unknown): ExponentialBuckets | null {
  if (v === undefined || v === null) return null
  const o = object(v, 'buckets')
  return { offset: int32(o.offset, 'offset'), counts: list(field(o, 'bucketCounts', 'bucket_counts'), 'bucketCounts').map((c) => count(c, 'a bucket count')) }
}

function dataPoint(v: unknown, type: MetricType): OtlpDataPoint {
  const o = object(v, 'a data point')
  const point: OtlpDataPoint = {
    attributes: keyValues(o.attributes),
    timeUnixNano: digits(field(o, 'timeUnixNano', 'time_unix_nano'), 'timeUnixNano'),
    flags: int32(o.flags, 'flags'),
    value: 0,
    exemplars: exemplars(o.exemplars),
  }
  if (type === 'gauge' || type === 'sum') {
    const d = field(o, 'asDouble', 'as_double')
    const i = field(o, 'asInt', 'as_int')
    point.value = d !== undefined && d !== null ? double(d, 'asDouble') : i !== undefined && i !== null ? count(i, 'asInt') : 0
    return point
  }
  point.value = optionalDouble(o.sum, 'sum')
  point.count = count(o.count, 'count')
  if (type === 'histogram') {
    point.bounds = list(field(o, 'explicitBounds', 'explicit_bounds'), 'explicitBounds').map((b) => double(b, 'a bound'))
    point.counts = list(field(o, 'bucketCounts', 'bucket_counts'), 'bucketCounts').map((c) => count(c, 'a bucket count'))
  } else if (type === 'exponential_histogram') {
    point.exponential = {
      scale: int32(o.scale, 'scale'),
      zeroCount: count(field(o, 'zeroCount', 'zero_count'), 'zeroCount'),
      positive: buckets(o.positive),
      negative: buckets(o.negative),
    }
  } else {
    point.quantiles = list(field(o, 'quantileValues', 'quantile_values'), 'quantileValues').map((q) => {
      const qo = object(q, 'a quantile value')
      return [optionalDouble(qo.quantile, 'quantile'), optionalDouble(qo.value, 'value')]
    })
  }
  return point
}

const DATA_FIELDS: Array<[MetricType, string, string]> = [
  ['gauge', 'gauge', 'gauge'],
  ['sum', 'sum', 'sum'],
  ['histogram', 'histogram', 'histogram'],
  ['exponential_histogram', 'exponentialHistogram', 'exponential_histogram'],
  ['summary', 'summary', 'summary'],
]

function metric(v: unknown): OtlpMetric {
  const o = object(v, 'a metric')
  const out: OtlpMetric = { name: text(o.name, 'name'), unit: text(o.unit, 'unit'), type: null, temporality: 0, monotonic: false, points: [] }
  for (const [type, camel, snake] of DATA_FIELDS) {
    const data = field(o, camel, snake)
    if (data === undefined || data === null) continue
    const d = object(data, camel)
    out.type = type
    out.temporality = temporality(field(d, 'aggregationTemporality', 'aggregation_temporality'))
    const monotonic = field(d, 'isMonotonic', 'is_monotonic')
    if (monotonic !== undefined && monotonic !== null && typeof monotonic !== 'boolean') throw bad('isMonotonic is not a boolean')
    out.monotonic = monotonic === true
    out.points = list(field(d, 'dataPoints', 'data_points'), 'dataPoints').map((p) => dataPoint(p, type))
    break
  }
  return out
}

function resourceMetrics(v: unknown): OtlpResourceMetrics {
  const o = object(v, 'a resourceMetrics entry')
  const resource = o.resource === undefined || o.resource === null ? null : object(o.resource, 'resource')
  return {
    resourceAttributes: resource ? keyValues(resource.attributes) : null,
    scopeMetrics: list(field(o, 'scopeMetrics', 'scope_metrics'), 'scopeMetrics').map((s) => {
      const so = object(s, 'a scopeMetrics entry')
      const scope = so.scope === undefined || so.scope === null ? null : object(so.scope, 'scope')
      return {
        scope: scope ? { name: text(scope.name, 'scope.name'), version: text(scope.version, 'scope.version') } : null,
        metrics: list(so.metrics, 'metrics').map(metric),
      }
    }),
  }
}
