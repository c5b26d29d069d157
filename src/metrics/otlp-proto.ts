/** The protobuf form of an OTLP metrics request (opentelemetry/proto/collector/metrics/v1), on the shared reader. */
import { I64, keyValue, LEN, Reader, resourceAttributes, scope, VARINT } from '../common/otlp-proto.js'
import type { ExponentialBuckets, MetricType, OtlpDataPoint, OtlpMetric, OtlpResourceMetrics, OtlpScopeMetrics } from './otlp.js'

/** A repeated scalar, packed (one LEN field) or not (one field per element), as protobuf readers must take both. */
function repeated(r: Reader, wire: number, unpacked: number, read: (r: Reader) => number, into: number[]): boolean {
  if (wire === unpacked) into.push(read(r))
  else if (wire === LEN) {
    const packed = r.sub()
    while (!packed.done) into.push(read(packed))
  } else return false
  return true
}

const fixed64 = (r: Reader) => Number(r.fixed64())
const double = (r: Reader) => r.double()
const uvarint = (r: Reader) => Number(r.varint())
/** sint32: zigzag-encoded. */
const sint32 = (r: Reader) => {
  const n = Number(BigInt.asUintN(32, r.varint()))
  return (n >>> 1) ^ -(n & 1)
}

function exemplar(r: Reader): { traceId: Buffer; spanId: Buffer } {
  const out = { traceId: Buffer.alloc(0), spanId: Buffer.alloc(0) }
  r.fields((f, w) => {
    if (f === 4 && w === LEN) out.spanId = Buffer.from(r.bytes())
    else if (f === 5 && w === LEN) out.traceId = Buffer.from(r.bytes())
    else return false
    return true
  })
  return out
}

function buckets(r: Reader): ExponentialBuckets {
  const out: ExponentialBuckets = { offset: 0, counts: [] }
  r.fields((f, w) => {
    if (f === 1 && w === VARINT) out.offset = sint32(r)
    else if (f === 2) return repeated(r, w, VARINT, uvarint, out.counts)
    else return false
    return true
  })
  return out
}

/** Each point type numbers its fields its own way: where attributes, flags and exemplars are, per type. */
const LAYOUT: Record<MetricType, { attributes: number; flags: number; exemplars: number }> = {
  gauge: { attributes: 7, flags: 8, exemplars: 5 },
  sum: { attributes: 7, flags: 8, exemplars: 5 },
  histogram: { attributes: 9, flags: 10, exemplars: 8 },
  exponential_histogram: { attributes: 1, flags: 10, exemplars: 11 },
  summary: { attributes: 7, flags: 8, exemplars: -1 },
}

function dataPoint(r: Reader, type: MetricType): OtlpDataPoint {
  const layout = LAYOUT[type]
  const distribution = type !== 'gauge' && type !== 'sum'
  const point: OtlpDataPoint = { attributes: [], timeUnixNano: '0', flags: 0, value: 0, exemplars: [] }
  if (distribution) point.count = 0
  if (type === 'histogram') Object.assign(point, { bounds: [], counts: [] })
  if (type === 'exponential_histogram') point.exponential = { scale: 0, zeroCount: 0, positive: null, negative: null }
  if (type === 'summary') point.quantiles = []
  r.fields((f, w) => {
    if (f === layout.attributes && w === LEN) point.attributes.push(keyValue(r.sub()))
    else if (f === 3 && w === I64) point.timeUnixNano = r.fixed64().toString()
    else if (f === layout.flags && w === VARINT) point.flags = Number(BigInt.asUintN(32, r.varint()))
    else if (f === layout.exemplars && w === LEN) point.exemplars.push(exemplar(r.sub()))
    else if (!distribution && f === 4 && w === I64) point.value = r.double()
    else if (!distribution && f === 6 && w === I64) point.value = Number(BigInt.asIntN(64, r.fixed64()))
    else if (distribution && f === 4 && w === I64) point.count = fixed64(r)
    else if (distribution && f === 5 && w === I64) point.value = r.double()
    else if (type === 'histogram' && f === 6) return repeated(r, w, I64, fixed64, point.counts!)
    else if (type === 'histogram' && f === 7) return repeated(r, w, I64, double, point.bounds!)
    else if (type === 'exponential_histogram' && f === 6 && w === VARINT) point.exponential!.scale = sint32(r)
    else if (type === 'exponential_histogram' && f === 7 && w === I64) point.exponential!.zeroCount = fixed64(r)
    else if (type === 'exponential_histogram' && f === 8 && w === LEN) point.exponential!.positive = buckets(r.sub())
    else if (type === 'exponential_histogram' && f === 9 && w === LEN) point.exponential!.negative = buckets(r.sub())
    else if (type === 'summary' && f === 6 && w === LEN) {
      const q = r.sub()
      const pair: [number, number] = [0, 0]
      q.fields((qf, qw) => {
        if (qf === 1 && qw === I64) pair[0] = q.double()
        else if (qf === 2 && qw === I64) pair[1] = q.double()
        else return false
        return true
      })
      point.quantiles!.push(pair)
    } else return false
    return true
  })
  return point
}

/** Metric's data fields: gauge 5, sum 7, histogram 9, exponential_histogram 10, summary 11. */
const DATA: Record<number, MetricType> = { 5: 'gauge', 7: 'sum', 9: 'histogram', 10: 'exponential_histogram', 11: 'summary' }

function metric(r: Reader): OtlpMetric {
  const out: OtlpMetric = { name: '', unit: '', type: null, temporality: 0, monotonic: false, points: [] }
  r.fields((f, w) => {
    if (f === 1 && w === LEN) out.name = r.string()
    else if (f === 3 && w === LEN) out.unit = r.string()
    else if (DATA[f] && w === LEN) {
      const type = DATA[f]
      const d = r.sub()
      out.type = type
      out.points = []
      d.fields((df, dw) => {
        if (df === 1 && dw === LEN) out.points.push(dataPoint(d.sub(), type))
        else if (df === 2 && dw === VARINT && type !== 'gauge' && type !== 'summary') out.temporality = d.small()
        else if (df === 3 && dw === VARINT && type === 'sum') out.monotonic = d.varint() !== 0n
        else return false
        return true
      })
    } else return false
    return true
  })
  return out
}

function scopeMetrics(r: Reader): OtlpScopeMetrics {
  const out: OtlpScopeMetrics = { scope: null, metrics: [] }
  r.fields((f, w) => {
    if (f === 1 && w === LEN) out.scope = scope(r.sub())
    else if (f === 2 && w === LEN) out.metrics.push(metric(r.sub()))
    else return false
    return true
  })
  return out
}

function resourceMetrics(r: Reader): OtlpResourceMetrics {
  const out: OtlpResourceMetrics = { resourceAttributes: null, scopeMetrics: [] }
  r.fields((f, w) => {
    if (f === 1 && w === LEN) out.resourceAttributes = resourceAttributes(r.sub())
    else if (f === 2 && w === LEN) out.scopeMetrics.push(scopeMetrics(r.sub()))
    else return false
    return true
  })
  return out
}

/** ExportMetricsServiceRequest's resource metrics (field 1). */
export function readMetricsProto(body: Buffer): OtlpResourceMetrics[] {
  const out: OtlpResourceMetrics[] = []
  const r = new Reader(body)
  r.fields((f, w) => f === 1 && w === LEN && out.push(resourceMetrics(r.sub())) > 0)
  return out
}
