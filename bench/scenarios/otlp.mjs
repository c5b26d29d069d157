// OTLP ingestion: POST /i/v1/logs with a batch of ten log records as posthog-node's logger sends them (OTLP
// JSON, the key as ?token=), and POST /i/v1/metrics with the window posthog-js's posthog.metrics flushes (a
// counter, a gauge and a histogram). Neither goes through the spool: each answers once its rows are committed
// (logs.db / metrics.db with synchronous=FULL on their threads, or ClickHouse), so these measure the stores'
// commit path, not the capture path's.
const now = () => `${Date.now()}000000`
const text = (s) => ({ stringValue: s })
const resource = { attributes: [{ key: 'service.name', value: text('bench-api') }, { key: 'deployment.environment', value: text('bench') }] }

function logsBody() {
  const logRecords = Array.from({ length: 10 }, (_, i) => ({
    timeUnixNano: now(),
    severityNumber: i % 3 === 0 ? 17 : 9,
    severityText: i % 3 === 0 ? 'ERROR' : 'INFO',
    body: text(`order ${i} placed for customer ${1000 + i}`),
    attributes: [{ key: 'order_id', value: text(`ord_${i}`) }, { key: 'items', value: { intValue: String(i + 1) } }],
  }))
  return JSON.stringify({ resourceLogs: [{ resource, scopeLogs: [{ scope: { name: 'posthog-node', version: '5.70.0' }, logRecords }] }] })
}

function metricsBody() {
  const attributes = [{ key: 'plan', value: text('pro') }]
  const point = { attributes, startTimeUnixNano: now(), timeUnixNano: now() }
  const metrics = [
    { name: 'orders_created', sum: { aggregationTemporality: 1, isMonotonic: true, dataPoints: [{ ...point, asDouble: 3 }] } },
    { name: 'active_connections', gauge: { dataPoints: [{ ...point, asDouble: 42 }] } },
    { name: 'api_latency', unit: 'ms', histogram: { aggregationTemporality: 1, dataPoints: [{ ...point, count: 4, sum: 620, bucketCounts: [0, 1, 2, 1, 0], explicitBounds: [10, 50, 100, 250] }] } },
  ]
  return JSON.stringify({ resourceMetrics: [{ resource, scopeMetrics: [{ scope: { name: 'posthog-js', version: '1.449.2' }, metrics }] }] })
}

const check = (res) => (res.status === 200 && res.text === '{}' ? null : `expected 200 {}, got ${res.status} ${res.text.slice(0, 200)}`)

const scenario = (name, title, path, body) => ({
  name,
  title,
  groups: ['otlp'],
  kind: 'load',
  server: 'fresh',
  sinks: ['sqlite', 'clickhouse'],
  loadgens: ['autocannon'],
  baseline: 'capture',
  eventsPerRequest: 0,
  e2e: false,
  requests: (ctx) => [{ method: 'POST', path: `${path}?token=${ctx.token}`, headers: { 'content-type': 'application/json' }, body: body() }],
  check,
})

export default [
  scenario('logs-ingest', '/i/v1/logs ten log records (OTLP JSON)', '/i/v1/logs', logsBody),
  scenario('metrics-ingest', '/i/v1/metrics a posthog-js window (3 metrics)', '/i/v1/metrics', metricsBody),
]
