/**
 * OTLP metrics made into stored rows, and metric queries computed from rows, as PostHog's capture-logs and
 * metrics product do: both wire forms of every metric type, the series identity, the per-series aggregations,
 * counter resets, histogram quantiles, time-zone buckets, formulas, and refusals.
 */
import t from 'tap'
import { AppError } from '../../src/common/errors.js'
import { decodeMetricsRequest, metricRows, type MetricRow } from '../../src/metrics/index.js'
import { parseMetricQuery } from '../../src/metrics/input.js'
import { isoformat } from '../../src/common/time-zones.js'
import { bucketer, clausePoints, histogramQuantile, pickInterval, quantile, scanFrom, type MetricClause } from '../../src/metrics/query.js'
import { attributeKeysJson, checkServices, namesFrom, namesJson, rankNames } from '../../src/metrics/pickers.js'
import { evaluate, metricSeries, parseFormula } from '../../src/metrics/series.js'

const NOW = Date.UTC(2026, 11, 4, 12, 0, 0)
let n = 0
const ctx = { teamId: 7, nowMs: NOW, uuid: () => `uuid-${++n}` }
const rowsOf = (body: unknown) => metricRows(decodeMetricsRequest(Buffer.from(typeof body === 'string' ? body : JSON.stringify(body))), ctx)
const ns = (ms: number) => `${ms}000000`
const request = (metrics: unknown[]) => ({
  resourceMetrics: [{ resource: { attributes: [{ key: 'service.name', value: { stringValue: 'api' } }] }, scopeMetrics: [{ scope: { name: 'm', version: '1' }, metrics }] }],
})

t.test('JSON: each metric type becomes one row per data point', async (t) => {
  const rows = rowsOf(
    request([
      { name: 'g', unit: 'By', gauge: { dataPoints: [{ asInt: '42', timeUnixNano: ns(NOW), attributes: [{ key: 'k', value: { intValue: 3 } }] }] } },
      { name: 's', sum: { aggregationTemporality: 2, isMonotonic: true, dataPoints: [{ asDouble: 1.5, timeUnixNano: ns(NOW) }, { asDouble: 'NaN', timeUnixNano: ns(NOW) }] } },
      { name: 'h', histogram: { aggregationTemporality: 'AGGREGATION_TEMPORALITY_DELTA', dataPoints: [{ count: '3', sum: 30, bucketCounts: ['1', 2, 0], explicitBounds: [5, 10], timeUnixNano: ns(NOW) }] } },
      { name: 'e', exponentialHistogram: { aggregationTemporality: 1, dataPoints: [{ count: 4, sum: 9, scale: 0, zeroCount: 1, positive: { offset: 1, bucketCounts: [2, 1] }, negative: { offset: 0, bucketCounts: [0] } }] } },
      { name: 'q', summary: { dataPoints: [{ count: 2, sum: 4, quantileValues: [{ quantile: 0.5, value: 1.5 }, { quantile: 1, value: 2.5 }] }] } },
      { name: 'empty' },
    ]),
  )
  t.same(
    rows.map((r) => [r.metric_name, r.metric_type, r.value, r.count, r.aggregation_temporality, r.is_monotonic]),
    [
      ['g', 'gauge', 42, 1, '', false],
      ['s', 'sum', 1.5, 1, 'cumulative', true],
      ['s', 'sum', null, 1, 'cumulative', true],
      ['h', 'histogram', 30, 3, 'delta', false],
      ['e', 'exponential_histogram', 9, 4, 'delta', false],
      ['q', 'summary', 4, 2, '', false],
    ],
    'a metric without data makes no row; NaN is kept as no value',
  )
  t.match(rows[0], { unit: 'By', service_name: 'api', instrumentation_scope: 'm@1', attributes: { k: '3' }, trace_id: '', span_id: '', timestamp: NOW * 1000 })
  t.same([rows[3]!.histogram_bounds, rows[3]!.histogram_counts], [[5, 10], [1, 2, 0]])
  t.same([rows[4]!.histogram_bounds, rows[4]!.histogram_counts], [[0, -1, 2, 4], [1, 0, 2, 1]], 'zero bucket, then negative, then positive (base 2 at scale 0)')
  t.same([rows[5]!.histogram_bounds, rows[5]!.histogram_counts], [[0.5, 1], [1.5, 2.5]], 'a summary keeps its quantiles and their values')
  t.equal(rows[4]!.timestamp, NOW * 1000, 'no time: now')
})

t.test('buckets both stores can hold: infinities as the largest doubles, a NaN drops the buckets', async (t) => {
  const rows = rowsOf(
    request([
      { name: 'h', histogram: { dataPoints: [{ count: 2, sum: 3, bucketCounts: [1, 1, 0], explicitBounds: [1, 'Infinity'] }] } },
      { name: 'h', histogram: { dataPoints: [{ count: 2, sum: 3, bucketCounts: [1, 1], explicitBounds: ['NaN'] }] } },
      { name: 'e', exponentialHistogram: { dataPoints: [{ count: 2, scale: -10, positive: { offset: 0, bucketCounts: [1, 1] } }] } },
    ]),
  )
  t.same(rows.map((r) => [r.histogram_bounds, r.histogram_counts, r.count]), [
    [[1, Number.MAX_VALUE], [1, 1, 0], 2],
    [[], [], 2],
    [[1, Number.MAX_VALUE], [1, 1], 2],
  ])
})

t.test('series identity: the same labels in any order are one series, a skewed time does not split it', async (t) => {
  const point = (attributes: unknown[], time: number) => ({ name: 'g', gauge: { dataPoints: [{ asDouble: 1, timeUnixNano: ns(time), attributes }] } })
  const a = { key: 'a', value: { stringValue: '1' } }
  const b = { key: 'b', value: { stringValue: '2' } }
  const rows = rowsOf(request([point([a, b], NOW), point([b, a], NOW - 3 * 86_400_000), point([a], NOW)]))
  t.equal(rows[0]!.series, rows[1]!.series)
  t.not(rows[0]!.series, rows[2]!.series)
  t.equal(rows[1]!.attributes.$originalTimestamp, '2026-12-01T12:00:00+00:00')
  t.equal(rows[1]!.timestamp, NOW * 1000, 'stamped now')
})

t.test('exemplars: the first with a 16-byte trace id gives the row its trace', async (t) => {
  const [row] = rowsOf(request([{ name: 'g', gauge: { dataPoints: [{ asDouble: 1, exemplars: [{ traceId: 'abcd' }, { traceId: '0AF7651916CD43DD8448EB211C80319C', spanId: 'B7AD6B7169203331' }] }] } }]))
  t.equal(row!.trace_id, '0af7651916cd43dd8448eb211c80319c')
  t.equal(row!.span_id, 'b7ad6b7169203331')
})

t.test('protobuf: a hand-made ExportMetricsServiceRequest', async (t) => {
  const varint = (v: number) => {
    const out: number[] = []
    while (v > 0x7f) {
      out.push((v & 0x7f) | 0x80)
      v >>>= 7
    }
    out.push(v)
    return Buffer.from(out)
  }
  const len = (field: number, bytes: Buffer) => Buffer.concat([varint((field << 3) | 2), varint(bytes.length), bytes])
  const fixed64 = (field: number, v: number) => {
    const b = Buffer.alloc(9)
    b[0] = (field << 3) | 1
    b.writeBigUInt64LE(BigInt(v), 1)
    return b
  }
  const double = (field: number, v: number) => {
    const b = Buffer.alloc(9)
    b[0] = (field << 3) | 1
    b.writeDoubleLE(v, 1)
    return b
  }
  const packedDoubles = (field: number, vs: number[]) => len(field, Buffer.concat(vs.map((v) => double(0, v).subarray(1))))
  const time = fixed64(3, NOW * 1_000_000)
  const sumMetric = len(2, Buffer.concat([
    len(1, Buffer.from('requests')),
    len(7, Buffer.concat([len(1, Buffer.concat([time, fixed64(6, 5), len(7, Buffer.concat([len(1, Buffer.from('route')), len(2, len(1, Buffer.from('/a')))]))])), Buffer.from([2 << 3, 1]), Buffer.from([3 << 3, 1])])),
  ]))
  const histogramMetric = len(2, Buffer.concat([
    len(1, Buffer.from('latency')),
    len(3, Buffer.from('ms')),
    // bucket counts unpacked (one fixed64 field each), bounds packed: readers take both forms
    len(9, Buffer.concat([len(1, Buffer.concat([time, fixed64(4, 3), double(5, 12.5), fixed64(6, 1), fixed64(6, 2), packedDoubles(7, [10])])), Buffer.from([2 << 3, 2])])),
  ]))
  // scale -1 (sint32 zigzag 1), positive offset -2 (zigzag 3), packed varint counts
  const expMetric = len(2, Buffer.concat([
    len(1, Buffer.from('sizes')),
    len(10, len(1, Buffer.concat([time, fixed64(4, 2), Buffer.from([6 << 3, 1]), len(8, Buffer.concat([Buffer.from([1 << 3, 3]), len(2, Buffer.from([1, 1]))]))]))),
  ]))
  const body = len(1, Buffer.concat([len(1, len(1, Buffer.concat([len(1, Buffer.from('service.name')), len(2, len(1, Buffer.from('svc')))]))), len(2, Buffer.concat([len(1, len(1, Buffer.from('scope'))), sumMetric, histogramMetric, expMetric]))]))
  const rows = metricRows(decodeMetricsRequest(body), ctx)
  t.same(
    rows.map((r) => [r.metric_name, r.metric_type, r.value, r.count, r.aggregation_temporality, r.is_monotonic, r.histogram_bounds, r.histogram_counts]),
    [
      ['requests', 'sum', 5, 1, 'delta', true, [], []],
      ['latency', 'histogram', 12.5, 3, 'cumulative', false, [10], [1, 2]],
      ['sizes', 'exponential_histogram', 0, 2, 'unspecified', false, [1 / 16, 1 / 4], [1, 1]],
    ],
  )
  t.match(rows[0], { service_name: 'svc', attributes: { route: '/a' }, instrumentation_scope: 'scope@', unit: '' })
  t.throws(() => decodeMetricsRequest(Buffer.from([0x0a, 0x05, 0x01])), AppError, 'a truncated message')
})

t.test('malformed JSON requests are invalid_payload', async (t) => {
  for (const body of ['{"resourceMetrics": 5}', '{"resourceMetrics":[{"scopeMetrics":[{"metrics":[{"name":"x","sum":{"dataPoints":[{"asDouble":"many"}]}}]}]}]}', '{"resourceMetrics":[{"scopeMetrics":[{"metrics":[{"name":"x","sum":{"isMonotonic":"yes"}}]}]}]}']) {
    t.throws(() => rowsOf(body), { code: 'invalid_payload' }, body)
  }
})

const MIN = 60_000
const T0 = Date.UTC(2026, 11, 4, 10, 0, 0)
let u = 0
function row(series: string, minute: number, value: number | null, extra: Partial<MetricRow> = {}): MetricRow {
  return {
    uuid: `r${++u}`, team_id: 1, trace_id: '', span_id: '', trace_flags: 0, timestamp: (T0 + minute * MIN) * 1000, observed_timestamp: 0,
    service_name: 'api', metric_name: 'm', metric_type: 'gauge', value, count: 1, histogram_bounds: [], histogram_counts: [], unit: 'ms',
    aggregation_temporality: '', is_monotonic: false, resource_attributes: {}, instrumentation_scope: '', attributes: { s: series }, series, ...extra,
  }
}
const clause = (aggregation: MetricClause['aggregation'], extra: Partial<MetricClause> = {}): MetricClause => ({ name: 'a', metricName: 'm', metricType: null, aggregation, quantile: null, filters: [], groupBy: [], ...extra })
const values = (rows: MetricRow[], c: MetricClause, interval: 'minute_5' | 'hour' = 'hour') =>
  clausePoints(rows, c, { fromMs: T0, interval, zone: 'UTC' }).map((p) => [new Date(p.time).toISOString().slice(11, 16), p.value])

t.test('instant aggregations: each series its last reading in the bucket (avg: its mean), then across series', async (t) => {
  const rows = [row('x', 1, 10), row('x', 2, 20), row('y', 3, 5), row('x', 61, 1), row('y', 62, null)]
  t.same(values(rows, clause('sum')), [['10:00', 25], ['11:00', 1]], 'x sampled twice counts once')
  t.same(values(rows, clause('avg')), [['10:00', 10], ['11:00', 1]], 'x: mean 15, y: 5')
  t.same(values(rows, clause('count')), [['10:00', 2], ['11:00', 1]], 'series, not samples; a NaN is no reading')
  t.same(values(rows, clause('min')), [['10:00', 5], ['11:00', 1]])
  t.same(values(rows, clause('max')), [['10:00', 20], ['11:00', 1]])
  t.same(values([row('x', -5, 7)], clause('sum')), [], 'before the range: left out')
  t.equal(quantile(0.95, [1, 2, 3, 4, 5]), 4.8, "ClickHouse's interpolated quantile")
})

t.test('counters: cumulative diffs with resets, delta as sent, the first sample has no increase', async (t) => {
  const cumulative = { aggregation_temporality: 'cumulative', metric_type: 'sum' as const }
  const rows = [row('c', -3, 100, cumulative), row('c', 1, 103, cumulative), row('c', 2, 103, cumulative), row('c', 6, 4, cumulative), row('d', 1, 7, { aggregation_temporality: 'delta' }), row('n', 7, 50, cumulative)]
  t.same(values(rows, clause('increase'), 'minute_5'), [['10:00', 3 + 0 + 7], ['10:05', 4 + 0]], 'the reading before the range is the first one’s predecessor; a reset counts its value; n has no increase yet')
  t.same(values(rows, clause('rate'), 'minute_5'), [['10:00', 10 / 300], ['10:05', 4 / 300]], 'per second of the bucket')
  t.same(values([row('c', 1, 5, cumulative), row('c', 1, 5, cumulative), row('c', 2, 8, cumulative)], clause('increase')), [['10:00', 3]], 'a reading delivered twice is one')
  t.same(values([row('c', 1, 5, cumulative)], clause('increase')), [], 'nothing computable: no bucket')
  t.same(
    [scanFrom(clause('increase'), T0, 'minute'), scanFrom(clause('rate'), T0, 'hour'), scanFrom(clause('sum'), T0, 'hour')],
    [T0 - 5 * MIN, T0 - 60 * MIN, T0],
    'counters read back max(interval, 5 minutes) for a predecessor; instant aggregations do not',
  )
})

t.test('histogram_quantile: summed bucket increases, interpolated', async (t) => {
  const h = (minute: number, counts: number[], extra: Partial<MetricRow> = {}) => row('h', minute, 0, { metric_type: 'histogram', aggregation_temporality: 'cumulative', histogram_bounds: [10, 50, 100], histogram_counts: counts, ...extra })
  const p50 = clause('histogram_quantile', { quantile: 0.5 })
  t.same(values([h(1, [1, 1, 1, 1]), h(2, [1, 3, 1, 1])], p50), [['10:00', 30]], 'two new in (10, 50]: 10 + 40 × 1/2')
  t.same(values([h(1, [1, 1, 1, 1])], p50), [], 'a first sample alone has no increase')
  t.same(values([h(1, [0, 0, 0, 4], { aggregation_temporality: 'delta' })], p50), [['10:00', 100]], 'the overflow bucket gives the highest bound')
  t.throws(() => values([h(1, [1, 1], { aggregation_temporality: 'delta', histogram_bounds: [1] }), h(2, [1, 1, 1, 1], { series: 'other', aggregation_temporality: 'delta' })], p50), { code: 'parse_error' }, 'bounds that differ are refused')
  t.equal(histogramQuantile(0.5, [-10, 0, 10], [2, 0, 2, 0]), -10 + 20 * 0.5 / 2 * 2 - 10, 'negative bounds start at the first bound')
})

t.test('buckets in the project time zone, times written with its offset', async (t) => {
  const at = Date.UTC(2026, 11, 4, 10, 50)
  t.equal(isoformat(bucketer('hour', 'Asia/Kolkata')(at) * 1000, 'Asia/Kolkata'), '2026-12-04T16:00:00+05:30', 'hours from local midnight')
  t.equal(isoformat(bucketer('day', 'America/New_York')(at) * 1000, 'America/New_York'), '2026-12-04T00:00:00-05:00')
  t.equal(isoformat(bucketer('week', 'UTC')(at) * 1000, 'UTC'), '2026-11-30T00:00:00+00:00', 'weeks start on Monday')
  t.equal(pickInterval(T0, T0 + 60 * MIN), 'minute')
  t.equal(pickInterval(T0, T0 + 24 * 60 * MIN), 'hour')
  t.equal(pickInterval(T0, T0 + 3 * 24 * 60 * MIN), 'hour_6')
})

t.test('series: one grid for every clause, zero-filled, largest first, at most 100; a formula matched by labels', async (t) => {
  const a = clause('sum', { groupBy: [{ key: 's', scope: 'auto' }] })
  const b = clause('sum', { name: 'b' })
  const points = new Map([
    ['a', [{ time: T0, labels: { s: 'x' }, value: 2, units: new Set(['ms']) }, { time: T0 + 60 * MIN, labels: { s: 'y' }, value: 5, units: new Set(['ms', 's']) }]],
    ['b', [{ time: T0, labels: {}, value: 4, units: new Set(['ms']) }]],
  ])
  const series = metricSeries([a, b], points, null, 'UTC')
  t.same(
    series.map((s) => [s.clause, s.labels, s.points.map((p) => p.value), s.unit]),
    [['a', { s: 'y' }, [0, 5], null], ['a', { s: 'x' }, [2, 0], 'ms'], ['b', {}, [4, 0], 'ms']],
  )
  const formula = metricSeries([a, b], points, 'a / b * 100', 'UTC')
  t.same(formula.map((s) => [s.labels, s.points.map((p) => p.value), s.clause, s.metric_name]), [[{ s: 'x' }, [50, 0], 'formula', null], [{ s: 'y' }, [0, 0], 'formula', null]], 'b broadcast; a missing point is 0, and dividing by 0 gives 0')
  t.same(metricSeries([a], new Map(), null, 'UTC'), [{ labels: {}, points: [], metric_name: 'm', clause: 'a', unit: null }], 'no data: one empty series')
  t.equal(evaluate(parseFormula('-(a - 2) * 3', new Set(['a'])), { a: 5 }), -9)
  for (const bad of ['a +', '(a', 'a $ b', 'c', '']) t.throws(() => parseFormula(bad, new Set(['a'])), { code: 'parse_error' }, bad)
})

t.test("names: the picker's order, and sparklines of finite means", async (t) => {
  const name = (n: string, services: number) => ({ name: n, metric_type: 'gauge', unit: '', last_seen: T0 * 1000, services })
  const rows = [name('b.latency', 1), name('latency', 1), name('a.latency.p99', 3), name('latency.max', 1), name('other', 5)]
  t.same(rankNames(rows, '', 10).map((r) => r.name), ['other', 'a.latency.p99', 'b.latency', 'latency', 'latency.max'], 'most services first, then by name')
  t.same(rankNames(rows, 'LATENCY', 3).map((r) => r.name), ['latency', 'latency.max', 'b.latency'], 'equal, then starting, then ending with the search')
  const json = namesJson([name('x', 1)], [{ name: 'x', value: 2 }, { name: 'x', value: null }, { name: 'x', value: 4 }], 'UTC')
  t.same(json, [{ name: 'x', metric_type: 'gauge', unit: '', last_seen: '2026-12-04T10:00:00+00:00', sparkline: [2, 4] }])
  t.equal(namesFrom(Date.UTC(2026, 11, 4, 10, 30)), Date.UTC(2026, 11, 3, 10), 'a day back, from the hour')
  t.throws(() => checkServices(Array.from({ length: 51 }, (_, i) => `s${i}`)), { code: 'parse_error' })
})

t.test('attribute keys: service_name first when the search fits it, with the service.name rows, then the most carried', async (t) => {
  const rows = [{ name: 'route', occurrences: 5 }, { name: 'service.name', occurrences: 7 }, { name: 'host', occurrences: 9 }, { name: 'region', occurrences: 5 }]
  t.same(attributeKeysJson(rows, '', 3), [{ name: 'service_name', attribute_count: 7 }, { name: 'host', attribute_count: 9 }, { name: 'region', attribute_count: 5 }])
  t.same(attributeKeysJson([], 'SERV', 5), [{ name: 'service_name', attribute_count: null }], 'no alias rows (the store gives the keys that fit the search): the count is unknown, not 0')
  t.same(attributeKeysJson([{ name: 'route', occurrences: 1 }, { name: 'service.name', occurrences: 2 }], 'ro', 5), [{ name: 'route', attribute_count: 1 }], 'a search that fits neither spelling')
})

t.test('query input: DRF rules and the runner limits', async (t) => {
  const parse = (query: unknown) => parseMetricQuery({ query }, NOW, (ms) => ms)
  t.match(parse({ metricName: 'm', dateFrom: '2026-12-04T11:00:00Z' }), { interval: 'minute', clauses: [{ name: 'a', aggregation: 'sum', filters: [], groupBy: [] }] })
  const refused: Array<[unknown, string]> = [
    [{ dateFrom: '2026-12-04T11:00:00Z' }, 'query__non_field_errors'],
    [{ metricName: 'm' }, 'query__dateFrom'],
    [{ metricName: 'm', dateFrom: 'yesterday' }, 'query__dateFrom'],
    [{ metricName: 'm', dateFrom: '2026-12-04T11:00:00Z', metricType: 'counter' }, 'query__metricType'],
    [{ metricName: 'm', dateFrom: '2026-12-04T11:00:00Z', filters: [{ key: 'k' }] }, 'query__filters__0__value'],
    [{ metricName: 'm', dateFrom: '2026-12-04T11:00:00Z', quantile: 2 }, 'query__quantile'],
    [{ metricName: 'm', dateFrom: '2026-12-04T11:00:00Z', formula: 'a' }, 'query__non_field_errors'],
    [{ clauses: [{ metricName: 'm' }], dateFrom: '2026-12-04T11:00:00Z' }, 'query__clauses__0__name'],
    [{ clauses: Array.from({ length: 11 }, (_, i) => ({ name: `c${i}`, metricName: 'm' })), dateFrom: '2026-12-04T11:00:00Z' }, 'query__clauses'],
  ]
  for (const [q, attr] of refused) t.equal((t.throws(() => parse(q), JSON.stringify(q)) as { attr?: string }).attr, attr, JSON.stringify(q))
  t.throws(() => parse({ metricName: 'm', dateFrom: '2026-12-04T11:00:00Z', interval: 'second', dateTo: '2026-12-05T11:00:00Z' }), { code: 'parse_error' }, 'more than 10,000 buckets')
  t.throws(() => parse({ metricName: 'm', dateFrom: '2026-12-04T13:00:00Z' }), { code: 'parse_error' }, 'dateTo defaults to now, before dateFrom')
})
