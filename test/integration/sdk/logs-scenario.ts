/**
 * OTLP logs from real clients, on both stores: posthog-node 5.74.0's logs API (`logger`, `captureLog`: gzip OTLP
 * JSON to /i/v1/logs?token=) and OpenTelemetry's own exporter (@opentelemetry/exporter-logs-otlp-proto: protobuf,
 * the key in `Authorization: Bearer`). What they send must come back from the logs API as PostHog's answers it:
 * severities, attributes, resource, trace ids, filters, the cursor, attribute keys and values, the sparkline.
 */
import type { Test } from 'tap'
import { PostHog } from 'posthog-node'
import { context, trace, TraceFlags } from '@opentelemetry/api'
import { SeverityNumber } from '@opentelemetry/api-logs'
import { OTLPLogExporter } from '@opentelemetry/exporter-logs-otlp-proto'
import { resourceFromAttributes } from '@opentelemetry/resources'
import { LoggerProvider, SimpleLogRecordProcessor } from '@opentelemetry/sdk-logs'
import { recordingFetch, until, type Exchange, type StoreRun } from './harness.js'

const TRACE_ID = '0af7651916cd43dd8448eb211c80319c'
const SPAN_ID = 'b7ad6b7169203331'

export async function logsScenario(t: Test, { store, server }: StoreRun): Promise<void> {
  const token = server.boot.project_api_key
  const logs = `/api/projects/${server.boot.project_id}/logs`
  const query = (q: Record<string, unknown>) => server.api('POST', `${logs}/query/`, { query: { dateRange: { date_from: '-1h' }, ...q } })

  const wire: Exchange[] = []
  const client = new PostHog(token, { host: server.baseUrl, logs: { serviceName: 'checkout-api', environment: 'test' }, fetch: recordingFetch(wire) })
  client.logger.info('order placed', { order_id: 'ord_1', items: 3 })
  client.logger.warn('stock low', { sku: 'SKU-9' })
  client.captureLog({ body: 'payment failed', level: 'error', attributes: { code: 'E001', retry: true } })
  await client.shutdown()

  const exporter = new OTLPLogExporter({ url: `${server.baseUrl}/i/v1/logs`, headers: { Authorization: `Bearer ${token}` } })
  const provider = new LoggerProvider({ resource: resourceFromAttributes({ 'service.name': 'otel-worker', 'host.name': 'box-1' }), processors: [new SimpleLogRecordProcessor({ exporter })] })
  const spanContext = trace.setSpanContext(context.active(), { traceId: TRACE_ID, spanId: SPAN_ID, traceFlags: TraceFlags.SAMPLED })
  provider.getLogger('jobs', '1.2.3').emit({
    severityNumber: SeverityNumber.WARN2,
    severityText: 'WARNING',
    body: { msg: 'disk almost full', pct: 93.5 },
    attributes: { disk: '/dev/sda', ratio: 0.935, ok: false, tags: ['a', 'b'] },
    context: spanContext,
  })
  await provider.forceFlush()
  await provider.shutdown()

  t.test('posthog-node sends gzip OTLP JSON and is answered 200', async (t) => {
    const sent = wire.filter((e) => e.path === '/i/v1/logs')
    t.equal(sent.length, 1, 'one batch')
    t.equal(sent[0]!.status, 200)
  })

  const all = await until('all four logs', async () => {
    const r = await query({})
    return r.body.results?.length === 4 ? r.body : undefined
  })

  t.test("posthog-node's logs come back as PostHog's logs query answers them", async (t) => {
    const failed = all.results.find((l: any) => l.body === 'payment failed')
    t.match(failed, {
      severity_text: 'error',
      severity_number: 17,
      level: 'error',
      attributes: { code: 'E001', retry: 'true' },
      resource_attributes: { 'service.name': 'checkout-api', 'deployment.environment': 'test', 'telemetry.sdk.name': 'posthog-node' },
      instrumentation_scope: 'posthog-node@5.74.0',
      trace_id: '0'.repeat(32),
      span_id: '0'.repeat(16),
    })
    t.equal(failed.live_logs_checkpoint, all.results[0].live_logs_checkpoint, 'one checkpoint for the answer')
    t.equal(Date.parse(failed.live_logs_checkpoint), Math.max(...all.results.map((l: any) => Date.parse(l.observed_timestamp))), 'when the newest log was received')
    t.match(failed.timestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{3})?Z$/)
    t.equal(all.results.find((l: any) => l.body === 'order placed').attributes.items, '3', 'a number attribute keeps its JSON text')
    t.equal(all.hasMore, false)
    t.equal(all.nextCursor, null)
    // By time, not by text: a whole second is written without its fraction ('…:03Z' sorts after '…:03.359Z' as text).
    const times = all.results.map((l: any) => Date.parse(l.timestamp))
    t.same(times, [...times].sort((a, b) => b - a), 'newest first')
  })

  t.test("OpenTelemetry's protobuf exporter: severity number, JSON body, typed attributes, trace ids", async (t) => {
    const otel = all.results.find((l: any) => l.resource_attributes['service.name'] === 'otel-worker')
    t.match(otel, {
      body: '{"msg":"disk almost full","pct":93.5}',
      severity_text: 'warn',
      severity_number: 14,
      attributes: { disk: '/dev/sda', ratio: '0.935', ok: 'false', tags: '["a","b"]' },
      resource_attributes: { 'host.name': 'box-1' },
      instrumentation_scope: 'jobs@1.2.3',
      trace_id: TRACE_ID.toUpperCase(),
      span_id: SPAN_ID.toUpperCase(),
    })
  })

  t.test('filters: severity, service, search, attributes, resource attributes, columns', async (t) => {
    const bodies = async (q: Record<string, unknown>) => {
      const r = await query(q)
      t.equal(r.status, 200, JSON.stringify(q))
      return r.body.results.map((l: any) => l.body).sort()
    }
    const group = (...values: unknown[]) => ({ filterGroup: { type: 'AND', values: [{ type: 'AND', values }] } })
    t.same(await bodies({ severityLevels: ['warn'] }), ['stock low', '{"msg":"disk almost full","pct":93.5}'])
    t.same(await bodies({ serviceNames: ['checkout-api'], severityLevels: ['error', 'info'] }), ['order placed', 'payment failed'])
    t.same(await bodies({ searchTerm: 'PAYMENT' }), ['payment failed'], 'the search folds case')
    t.same(await bodies(group({ key: 'sku', type: 'log_attribute', operator: 'exact', value: ['SKU-9'] })), ['stock low'])
    t.same(await bodies(group({ key: 'code', type: 'log_attribute', operator: 'is_set' })), ['payment failed'])
    t.same(await bodies(group({ key: 'code', type: 'log_attribute', operator: 'is_not', value: 'E001' })).then((b) => b.length), 3)
    t.same(await bodies(group({ key: 'host.name', type: 'log_resource_attribute', operator: 'icontains', value: 'BOX' })), ['{"msg":"disk almost full","pct":93.5}'])
    t.same(await bodies(group({ key: 'message', type: 'log', operator: 'regex', value: '^(order|stock)' })), ['order placed', 'stock low'])
    t.same(await bodies(group({ key: 'order_id', type: 'log_attribute', operator: 'not_icontains', value: 'ORD' })).then((b) => b.length), 3)
    t.same(await bodies({ dateRange: { date_from: '-1h', date_to: '-30M' } }), [], 'a range before the logs')
    const otel = ['{"msg":"disk almost full","pct":93.5}']
    t.same(await bodies(group({ key: 'trace_id', type: 'log', operator: 'exact', value: TRACE_ID })), otel, 'a trace id in hex, as trace UIs show it')
    t.same(await bodies(group({ key: 'span_id', type: 'log', operator: 'exact', value: Buffer.from(SPAN_ID, 'hex').toString('base64') })), otel, 'or in base64')
  })

  t.test('pages: limit, the cursor, oldest first', async (t) => {
    const seen: string[] = []
    let after: string | undefined
    for (let page = 0; page < 4; page++) {
      const r = await query({ limit: 1, orderBy: 'earliest', ...(after ? { after } : {}) })
      t.equal(r.body.results.length, 1)
      seen.push(r.body.results[0].uuid)
      t.equal(r.body.hasMore, page < 3, `page ${page}: another follows`)
      after = r.body.nextCursor ?? undefined
    }
    t.same(seen, all.results.map((l: any) => l.uuid).reverse(), 'every log once, oldest first')
    t.equal((await query({ after: 'not a cursor' })).status, 400)
  })

  t.test('attribute keys and values', async (t) => {
    const keys = await server.api('GET', `${logs}/attributes/?search=o`)
    t.equal(keys.status, 200)
    t.same(keys.body.results.map((r: any) => r.name), ['code', 'ok', 'order_id', 'ratio'], 'each used once: by name')
    t.match(keys.body.results[0], { propertyFilterType: 'log_attribute', matchedOn: 'key' })
    t.equal(keys.body.count, 4)
    const paged = await server.api('GET', `${logs}/attributes/?search=o&limit=2&offset=1`)
    t.same(paged.body, { results: [{ name: 'ok', propertyFilterType: 'log_attribute', matchedOn: 'key' }, { name: 'order_id', propertyFilterType: 'log_attribute', matchedOn: 'key' }], count: 4 })
    const word = await server.api('GET', `${logs}/attributes/?search=ID`)
    t.same(word.body.results.map((r: any) => r.name), ['order_id'], 'case aside')
    const resource = await server.api('GET', `${logs}/attributes/?attribute_type=resource&search=service.name`)
    t.match(resource.body.results[0], { name: 'service.name', propertyFilterType: 'log_resource_attribute' })
    const values = await server.api('GET', `/api/environments/${server.boot.project_id}/logs/values/?key=service.name&attribute_type=resource`)
    t.same(values.body, [{ id: 'checkout-api', name: 'checkout-api' }, { id: 'otel-worker', name: 'otel-worker' }], 'most used first')
  })

  t.test('sparkline: each bucket of the range, by severity', async (t) => {
    const r = await server.api('POST', `${logs}/sparkline/`, { query: { dateRange: { date_from: '-50M' } } })
    t.equal(r.status, 200)
    t.equal(r.body.filter((b: any) => b.count > 0).reduce((n: number, b: any) => n + b.count, 0), 4, 'every log counted once')
    t.ok(r.body.length >= 50, 'one-minute buckets, empty ones too')
    t.same(new Set(r.body.filter((b: any) => b.count > 0).map((b: any) => b.level)), new Set(['info', 'warn', 'error']))
    const years = await server.api('POST', `${logs}/sparkline/`, { query: { dateRange: { date_from: '2000-01-01', date_to: '9999-12-31' } } })
    t.equal(years.status, 200)
    t.equal(years.body.length, 1000, 'a range of millennia: the first 1,000 buckets, as PostHog limits them')
  })

  t.test('live tail: from the checkpoint, only the logs received since', async (t) => {
    const checkpoint = all.results[0].live_logs_checkpoint
    const before = await query({ liveLogsCheckpoint: checkpoint })
    t.ok(before.body.results.length >= 1, 'the newest batch')
    t.ok(before.body.results.every((l: any) => Date.parse(l.observed_timestamp) >= Date.parse(checkpoint)), 'none received before the checkpoint')
    await new Promise((r) => setTimeout(r, 5))
    const late = new PostHog(token, { host: server.baseUrl, logs: { serviceName: 'checkout-api' }, fetch: recordingFetch([]) })
    late.logger.error('late failure')
    await late.shutdown()
    const tail = await query({ liveLogsCheckpoint: new Date(Date.parse(checkpoint) + 1).toISOString() })
    t.same(tail.body.results.map((l: any) => l.body), ['late failure'], 'what arrived after the checkpoint')
    t.ok(Date.parse(tail.body.results[0].live_logs_checkpoint) > Date.parse(checkpoint), 'and the checkpoint moved on')
    const bad = await query({ liveLogsCheckpoint: 'now-ish' })
    t.match(bad, { status: 400, body: { attr: 'liveLogsCheckpoint' } })
  })

  t.test(`the store (${store}) takes no log of a bad request`, async (t) => {
    const post = (path: string, body: string, headers: Record<string, string> = {}) =>
      server.request('POST', path, { rawBody: body, headers: { 'content-type': 'application/json', ...headers } })
    const unknown = await post('/i/v1/logs?token=phc_nope', '{"resourceLogs":[]}')
    t.equal(unknown.status, 401)
    t.equal(unknown.body.code, 'invalid_api_key')
    t.equal((await post('/i/v1/logs', '{"resourceLogs":[]}')).status, 401, 'no key')
    const broken = await post(`/i/v1/logs?token=${token}`, '{"resourceLogs": [{"scopeLogs": 5}]}')
    t.match(broken, { status: 400, body: { type: 'validation_error', code: 'invalid_payload' } })
    t.equal((await query({})).body.results.length, 5, 'nothing more stored (the four, and the live tail one)')
  })
}
