/**
 * OTLP metrics made into stored rows, one per data point, as PostHog's capture-logs flattens them
 * (rust/capture-logs, metric_record.rs): a gauge or sum point's value (an int as a number), a distribution's sum
 * and count with its buckets (an exponential histogram's flattened into explicit bounds), the temporality of
 * sums and histograms, the first exemplar with a 16-byte trace id as the row's trace, and the time rule of logs
 * (a point more than a day off is stamped now, the sent time kept as `$originalTimestamp`). The series identity
 * is taken before that attribute is added, so a skewed exporter's points stay one series. Pure: the clock and
 * the uuid maker are inputs.
 *
 * One difference, on purpose: a summary's quantile values are kept as numbers in `histogram_counts`, where
 * PostHog keeps the bits of each double as an Int64.
 */
import { createHash } from 'node:crypto'
import { attributesOf, recordTime } from '../common/otlp.js'
import type { OtlpRowContext } from '../storage/otlp-ingest.js'
import type { ExponentialBuckets, OtlpDataPoint, OtlpMetric, OtlpResourceMetrics } from './otlp.js'
import type { MetricRow } from './types.js'

const TEMPORALITY = ['unspecified', 'delta', 'cumulative']

/** An exponential histogram's buckets as explicit ones: the zero bucket, then the negative, then the positive. */
export function flattenExponential(e: NonNullable<OtlpDataPoint['exponential']>): { bounds: number[]; counts: number[] } {
  const bounds: number[] = []
  const counts: number[] = []
  if (e.zeroCount > 0) {
    bounds.push(0)
    counts.push(e.zeroCount)
  }
  const base = 2 ** (2 ** -e.scale)
  const add = (b: ExponentialBuckets | null, sign: number) =>
    b?.counts.forEach((c, i) => {
      bounds.push(sign * base ** (b.offset + i))
      counts.push(c)
    })
  add(e.negative, -1)
  add(e.positive, 1)
  return { bounds, counts }
}

const clamp = (v: number) => (v === Infinity ? Number.MAX_VALUE : v === -Infinity ? -Number.MAX_VALUE : v)

/**
 * A point's buckets as both stores can hold them. JSON has no infinities, so ±Infinity (an explicit bound sent so,
 * or an exponential bound past the doubles, as scale −10 makes) is kept as the largest finite double of its sign;
 * a NaN leaves the buckets unreadable, so they are dropped and the point keeps its sum and count.
 */
function buckets(point: OtlpDataPoint): { bounds: number[]; counts: number[] } {
  const raw =
    point.exponential ? flattenExponential(point.exponential)
    : point.quantiles ? { bounds: point.quantiles.map(([q]) => q), counts: point.quantiles.map(([, v]) => v) }
    : { bounds: point.bounds ?? [], counts: point.counts ?? [] }
  if (raw.bounds.some(Number.isNaN) || raw.counts.some(Number.isNaN)) return { bounds: [], counts: [] }
  return { bounds: raw.bounds.map(clamp), counts: raw.counts.map(clamp) }
}

function sorted(map: Record<string, string>): Array<[string, string]> {
  return Object.keys(map)
    .sort()
    .map((k) => [k, map[k]!])
}

function seriesId(metric: OtlpMetric, service: string, resource: Record<string, string>, attributes: Record<string, string>): string {
  return createHash('sha1')
    .update(JSON.stringify([metric.name, metric.type, service, sorted(resource), sorted(attributes)]))
    .digest('hex')
}

/** The stored rows of a request, in its order. */
export function metricRows(request: readonly OtlpResourceMetrics[], ctx: OtlpRowContext): MetricRow[] {
  const rows: MetricRow[] = []
  const nowNs = BigInt(ctx.nowMs) * 1_000_000n
  for (const resource of request) {
    const resourceAttributes = attributesOf(resource.resourceAttributes ?? [])
    const serviceName = resourceAttributes['service.name'] ?? ''
    for (const scopeMetrics of resource.scopeMetrics) {
      const scope = scopeMetrics.scope ? `${scopeMetrics.scope.name}@${scopeMetrics.scope.version}` : ''
      for (const metric of scopeMetrics.metrics) {
        const type = metric.type
        if (type === null) continue
        const temporality = type === 'sum' || type === 'histogram' || type === 'exponential_histogram' ? (TEMPORALITY[metric.temporality] ?? 'unspecified') : ''
        for (const point of metric.points) {
          const attributes = attributesOf(point.attributes)
          const series = seriesId(metric, serviceName, resourceAttributes, attributes)
          const ns = recordTime(point.timeUnixNano, nowNs, attributes)
          const exemplar = point.exemplars.find((e) => e.traceId.length === 16)
          const { bounds, counts } = buckets(point)
          rows.push({
            uuid: ctx.uuid(ctx.nowMs),
            team_id: ctx.teamId,
            trace_id: exemplar ? exemplar.traceId.toString('hex') : '',
            span_id: exemplar ? (exemplar.spanId.length === 8 ? exemplar.spanId.toString('hex') : '0'.repeat(16)) : '',
            trace_flags: point.flags,
            timestamp: Number(ns / 1000n),
            observed_timestamp: ctx.nowMs * 1000,
            service_name: serviceName,
            metric_name: metric.name,
            metric_type: type,
            value: Number.isFinite(point.value) ? point.value : null,
            count: point.count ?? 1,
            histogram_bounds: bounds,
            histogram_counts: counts,
            unit: metric.unit,
            aggregation_temporality: temporality,
            is_monotonic: type === 'sum' && metric.monotonic,
            resource_attributes: resourceAttributes,
            instrumentation_scope: scope,
            attributes,
            series,
          })
        }
      }
    }
  }
  return rows
}
