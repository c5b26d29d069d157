import { Registry } from 'prom-client'
import t from 'tap'
import { HttpStats } from '../../../src/observability/http-stats.js'

t.test('request counts and durations per route reach /metrics in the Prometheus text format', async (t) => {
  const registry = new Registry()
  const stats = new HttpStats()
  stats.register(registry)
  stats.route('/decide/').record(200, 0.0004)
  stats.route('/decide/').record(200, 0.001) // on a bound: counted in that bucket (le is inclusive)
  stats.route('/decide/').record(400, 7) // above every bound: only in +Inf
  stats.route('/capture/').record(200, 0.02)
  const lines = (await registry.metrics()).split('\n')
  const value = (prefix: string) => lines.find((l) => l.startsWith(prefix + ' '))?.slice(prefix.length + 1)

  t.equal(value('skylark_http_requests_total{route="/decide/",status="200"}'), '2')
  t.equal(value('skylark_http_requests_total{route="/decide/",status="400"}'), '1')
  t.equal(value('skylark_http_requests_total{route="/capture/",status="200"}'), '1')
  t.ok(lines.includes('# TYPE skylark_http_request_duration_seconds histogram'))
  const bucket = (route: string, le: string) => value(`skylark_http_request_duration_seconds_bucket{le="${le}",route="${route}"}`)
  t.equal(bucket('/decide/', '0.0005'), '1')
  t.equal(bucket('/decide/', '0.001'), '2')
  t.equal(bucket('/decide/', '5'), '2')
  t.equal(bucket('/decide/', '+Inf'), '3')
  t.equal(bucket('/capture/', '0.01'), '0')
  t.equal(bucket('/capture/', '0.025'), '1')
  t.equal(Number(value('skylark_http_request_duration_seconds_sum{route="/decide/"}')), 0.0004 + 0.001 + 7)
  t.equal(value('skylark_http_request_duration_seconds_count{route="/decide/"}'), '3')

  const json = await registry.getMetricsAsJSON()
  t.match(json.find((m) => m.name === 'skylark_http_requests_total'), { type: 'counter', values: [{ value: 2, labels: { route: '/decide/', status: 200 } }] })
  registry.resetMetrics()
  t.notOk((await registry.metrics()).includes('skylark_http_requests_total{'), 'a reset empties the tallies')
})
