/**
 * OTLP metrics from a real client, on both stores: OpenTelemetry's SDK (@opentelemetry/sdk-metrics) with its
 * protobuf exporter (@opentelemetry/exporter-metrics-otlp-proto, the key in `Authorization: Bearer`), sending a
 * cumulative counter twice, a gauge, an explicit-bucket histogram and an exponential one. What it sent must come
 * back from the metrics API as PostHog's MetricsViewSet answers it: names and types, per-series aggregations,
 * counter increases, histogram quantiles, groupBy, filters, a formula, samples, attribute keys and values.
 * (posthog-js's `posthog.metrics` is driven in Chromium by posthog-js.test.ts.)
 */
import type { Test } from 'tap'
import { OTLPMetricExporter } from '@opentelemetry/exporter-metrics-otlp-proto'
import { resourceFromAttributes } from '@opentelemetry/resources'
import { AggregationType, MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics'
import { until, type StoreRun } from './harness.js'

export async function metricsScenario(t: Test, { store, server }: StoreRun): Promise<void> {
  const token = server.boot.project_api_key
  const metrics = `/api/projects/${server.boot.project_id}/metrics`
  const started = new Date(Date.now() - 60_000).toISOString()
  const query = (q: Record<string, unknown>) => server.api('POST', `${metrics}/query/`, { query: { dateFrom: started, ...q } })

  const exporter = new OTLPMetricExporter({ url: `${server.baseUrl}/i/v1/metrics`, headers: { Authorization: `Bearer ${token}` } })
  const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 })
  const provider = new MeterProvider({
    resource: resourceFromAttributes({ 'service.name': 'checkout-api', 'host.name': 'box-1' }),
    readers: [reader],
    views: [{ instrumentName: 'payload.size', aggregation: { type: AggregationType.EXPONENTIAL_HISTOGRAM } }],
  })
  const meter = provider.getMeter('shop', '2.0.0')
  const requests = meter.createCounter('http.requests', { unit: '{request}' })
  const depth = meter.createGauge('queue.depth')
  const duration = meter.createHistogram('http.duration', { unit: 'ms', advice: { explicitBucketBoundaries: [10, 50, 100] } })
  const payload = meter.createHistogram('payload.size', { unit: 'By' })
  requests.add(3, { route: '/a' })
  requests.add(1, { route: '/b' })
  depth.record(7, { queue: 'emails' })
  depth.record(2, { queue: 'sms' })
  for (const ms of [5, 20, 70, 200]) duration.record(ms, { route: '/a' })
  for (const bytes of [100, 200, 400]) payload.record(bytes)
  await provider.forceFlush()
  // Cumulative export again (every instrument; shutdown exports a third time): /a is at 5 now, /b unchanged, and
  // two more durations fell in (10, 50].
  await new Promise((r) => setTimeout(r, 20))
  requests.add(2, { route: '/a' })
  duration.record(30, { route: '/a' })
  duration.record(40, { route: '/a' })
  await provider.forceFlush()
  await provider.shutdown()

  const names = await until('the metric names', async () => {
    const r = await server.api('GET', `${metrics}/values/`)
    return r.body.results?.length === 4 ? r.body.results : undefined
  })

  t.test('names come with their OTLP types, units, newest points and sparklines', async (t) => {
    t.same(
      names.map((n: any) => `${n.name}:${n.metric_type}:${n.unit}`),
      ['http.duration:histogram:ms', 'http.requests:sum:{request}', 'payload.size:exponential_histogram:By', 'queue.depth:gauge:'],
      'one service each: by name',
    )
    const depth = names.find((n: any) => n.name === 'queue.depth')
    t.ok(depth.sparkline.length >= 1 && depth.sparkline.every((v: number) => v === 4.5), 'the mean reading of its two series in each bucket')
    t.match(depth.last_seen, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?\+00:00$/)
    const searched = await server.api('GET', `${metrics}/values/?value=HTTP&limit=1`)
    t.equal(searched.body.results.length, 1)
    t.match(searched.body.results[0].name, /^http\./)
    t.same((await server.api('GET', `${metrics}/values/?service=other`)).body.results, [], 'another service reported nothing')
    t.same((await server.api('GET', `${metrics}/has_metrics/`)).body, { hasMetrics: true })
  })

  t.test('a gauge: each series once per bucket, combined across series', async (t) => {
    const sum = await query({ metricName: 'queue.depth', interval: 'hour' })
    t.equal(sum.status, 200)
    t.equal(sum.body.results.length, 1)
    const series = sum.body.results[0]
    t.match(series, { labels: {}, metric_name: 'queue.depth', clause: 'a', unit: null })
    t.equal(series.points.reduce((n: number, p: any) => n + p.value, 0), 9, '7 + 2')
    t.match(series.points[0].time, /^\d{4}-\d\d-\d\dT\d\d:00:00\+00:00$/)
    const max = await query({ metricName: 'queue.depth', aggregation: 'max', interval: 'hour' })
    t.equal(Math.max(...max.body.results[0].points.map((p: any) => p.value)), 7)
    const count = await query({ metricName: 'queue.depth', aggregation: 'count', interval: 'hour' })
    t.equal(count.body.results[0].points.reduce((n: number, p: any) => n + p.value, 0), 2, 'two series')
    const grouped = await query({ metricName: 'queue.depth', groupBy: [{ key: 'queue' }], interval: 'hour' })
    t.same(grouped.body.results.map((s: any) => s.labels.queue), ['emails', 'sms'], 'the largest series first')
    const filtered = await query({ metricName: 'queue.depth', filters: [{ key: 'queue', op: 'regex', value: '^sm' }], interval: 'hour' })
    t.equal(filtered.body.results[0].points.reduce((n: number, p: any) => n + p.value, 0), 2)
    const byService = await query({ metricName: 'queue.depth', filters: [{ key: 'service.name', value: 'checkout-api' }, { key: 'host.name', op: 'neq', value: 'box-2' }], interval: 'hour' })
    t.equal(byService.body.results[0].points.reduce((n: number, p: any) => n + p.value, 0), 9, 'service and resource attributes filter')
  })

  t.test('a cumulative counter: increase diffs each series, the first sample has none', async (t) => {
    const increase = await query({ metricName: 'http.requests', aggregation: 'increase', groupBy: [{ key: 'route' }], interval: 'hour' })
    t.equal(increase.status, 200)
    const byRoute = Object.fromEntries(increase.body.results.map((s: any) => [s.labels.route, s.points.reduce((n: number, p: any) => n + p.value, 0)]))
    t.same(byRoute, { '/a': 2, '/b': 0 })
    t.equal(increase.body.results[0].unit, '{request}', 'the unit its series share')
    const samples = await server.api('POST', `${metrics}/samples/`, { query: { metricName: 'http.requests', dateFrom: started } })
    t.equal(samples.status, 200)
    t.equal(samples.body.results.length, 6, 'three exports of two series')
    const times = samples.body.results.map((s: any) => s.timestamp)
    t.same(times, [...times].sort().reverse(), 'newest first')
    t.match(samples.body.results.find((s: any) => s.attributes.route === '/a'), {
      metric_name: 'http.requests',
      metric_type: 'sum',
      value: 5,
      count: 1,
      aggregation_temporality: 'cumulative',
      is_monotonic: true,
      service_name: 'checkout-api',
      attributes: { route: '/a' },
      resource_attributes: { 'service.name': 'checkout-api', 'host.name': 'box-1' },
    })
    t.match(samples.body.results[0].timestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?\+00:00$/)
  })

  t.test('histograms: quantiles from the buckets, exponential ones flattened', async (t) => {
    const p50 = await query({ metricName: 'http.duration', aggregation: 'histogram_quantile', quantile: 0.5, interval: 'hour' })
    t.equal(p50.status, 200)
    // The first export has no predecessor and the third no increase: the two new durations alone, in (10, 50].
    t.same(p50.body.results[0].points.filter((p: any) => p.value !== 0).map((p: any) => p.value), [30], '10 + 40 × 1/2')
    const [sample] = (await server.api('POST', `${metrics}/samples/`, { query: { metricName: 'http.duration', dateFrom: started } })).body.results
    t.match(sample, { metric_type: 'histogram', value: 365, count: 6, unit: 'ms' })
    const [exp] = (await server.api('POST', `${metrics}/samples/`, { query: { metricName: 'payload.size', dateFrom: started } })).body.results
    t.match(exp, { metric_type: 'exponential_histogram', value: 700, count: 3 })
  })

  t.test('a formula over clauses, matched by label set', async (t) => {
    const r = await query({
      clauses: [
        { name: 'a', metricName: 'queue.depth', groupBy: [{ key: 'queue' }] },
        { name: 'b', metricName: 'queue.depth' },
      ],
      formula: 'a / b * 100',
      interval: 'hour',
    })
    t.equal(r.status, 200)
    const shares = Object.fromEntries(r.body.results.map((s: any) => [s.labels.queue, s.points.find((p: any) => p.value > 0)?.value]))
    t.same(shares, { emails: (7 / 9) * 100, sms: (2 / 9) * 100 })
    t.ok(r.body.results.every((s: any) => s.clause === 'formula' && s.metric_name === null))
  })

  t.test('overview: what arrived in the last day, per service', async (t) => {
    const r = await server.api('GET', `${metrics}/overview/`)
    t.equal(r.status, 200)
    // Series: two counters, two gauges, one histogram, one exponential histogram.
    t.match(r.body, { metric_names: 4, series: 6, lookback_seconds: 86_400, services: [{ service_name: 'checkout-api', metric_names: 4, series: 6 }] })
    t.equal(r.body.last_seen, r.body.services[0].last_seen)
    t.ok(Date.parse(r.body.last_seen) > Date.parse(started), 'the newest point is recent')
  })

  t.test('attribute keys and values', async (t) => {
    const keys = await server.api('GET', `${metrics}/attributes/`)
    t.equal(keys.status, 200)
    const found = keys.body.results.map((k: any) => k.name)
    t.equal(found[0], 'service_name', 'the service first')
    for (const key of ['route', 'queue', 'host.name']) t.ok(found.includes(key), key)
    t.notOk(found.includes('service.name'), 'its resource attribute counted as service_name')
    t.ok(keys.body.results.every((k: any, i: number, all: any[]) => i < 2 || all[i - 1].attribute_count >= k.attribute_count), 'then the most carried first')
    t.equal(keys.body.count, found.length)
    const values = await server.api('GET', `${metrics}/attribute_values/?key=queue`)
    t.same(values.body.results.map((v: any) => v.name).sort(), ['emails', 'sms'])
    t.match(values.body.results[0], { id: values.body.results[0].name, count: 3 }, 'a data point of each of three exports')
    t.equal((await server.api('GET', `${metrics}/attribute_values/`)).status, 400, 'key is required')
  })

  t.test('wrong queries are 400s that say why', async (t) => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ metricName: 'queue.depth', aggregation: 'median' }, 'query__aggregation'],
      [{ metricName: 'queue.depth', filters: [{ key: 'queue', op: 'regex', value: '(' }] }, ''],
      [{ metricName: 'queue.depth', clauses: [{ name: 'a', metricName: 'x' }] }, 'query__non_field_errors'],
      [{ metricName: 'queue.depth', dateFrom: '2020-01-01T00:00:00Z', dateTo: '2020-03-01T00:00:00Z' }, ''],
      [{ metricName: 'http.duration', aggregation: 'histogram_quantile' }, ''],
      [{ clauses: [{ name: 'a', metricName: 'x' }], formula: 'a + c' }, ''],
    ]
    for (const [q, attr] of cases) {
      const r = await query(q)
      t.equal(r.status, 400, JSON.stringify(q))
      t.equal(r.body.type, 'validation_error')
      if (attr) t.equal(r.body.attr, attr)
    }
    const noDate = await server.api('POST', `${metrics}/query/`, { query: { metricName: 'x' } })
    t.match(noDate, { status: 400, body: { code: 'required', attr: 'query__dateFrom' } })
  })

  t.test(`the store (${store}) takes no metric of a bad request`, async (t) => {
    const post = (path: string, body: string) => server.request('POST', path, { rawBody: body, headers: { 'content-type': 'application/json' } })
    t.match(await post('/i/v1/metrics?token=phc_nope', '{"resourceMetrics":[]}'), { status: 401, body: { code: 'invalid_api_key' } })
    t.match(await post(`/i/v1/metrics?token=${token}`, '{"resourceMetrics":[{"scopeMetrics":[{"metrics":[{"name":"x","gauge":{"dataPoints":5}}]}]}]}'), {
      status: 400,
      body: { type: 'validation_error', code: 'invalid_payload' },
    })
    t.equal((await server.api('GET', `${metrics}/values/`)).body.results.length, 4, 'nothing more stored')
    const infinite = { resourceMetrics: [{ scopeMetrics: [{ metrics: [{ name: 'edge', histogram: { dataPoints: [{ count: 1, sum: 1, bucketCounts: [0, 1, 0], explicitBounds: [1, 'Infinity'] }] } }] }] }] }
    t.equal((await post(`/i/v1/metrics?token=${token}`, JSON.stringify(infinite))).status, 200, 'an infinite bound is stored')
    const [edge] = (await server.api('POST', `${metrics}/samples/`, { query: { metricName: 'edge', dateFrom: started } })).body.results
    t.match(edge, { metric_type: 'histogram', count: 1 }, 'and read back')
  })
}
