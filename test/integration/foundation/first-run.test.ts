import t from 'tap'
import { CATALOGUE } from '../../../src/common/errors.js'
import { serverFor, startServer, tempDir, type TestServer } from '../../helpers/server.js'
import { until } from '../../helpers/wait.js'

t.test('first start on an empty data folder', async (t) => {
  const dataDir = tempDir()
  const server = await startServer({ dataDir, fresh: true })
  t.teardown(() => server.cleanup())
  // The banner goes to stderr before `listening` goes to stdout, but two pipes keep no order between them.
  await until('the banner is printed whole', () => server.stderr.some((line) => line.startsWith('└')), 5000, 20)
  const banner = server.stderr.join('\n')
  const projectKey = /phc_[A-Za-z0-9]+/.exec(banner)?.[0]
  const personalKey = /phx_[A-Za-z0-9]+/.exec(banner)?.[0]
  const projectId = /Project id\s+(\d+)/.exec(banner)?.[1]

  t.test('prints the project id, both keys and copy-paste curl commands', async (t) => {
    t.ok(projectKey, 'project API key printed')
    t.ok(personalKey, 'personal API key printed')
    t.equal(projectId, '1')
    t.match(banner, `curl -X POST ${server.baseUrl}/capture/`)
    t.match(banner, `/api/projects/1/feature_flags/`)
  })

  t.test('the printed personal key lists projects', async (t) => {
    const res = await server.request('GET', '/api/projects/', { headers: { authorization: `Bearer ${personalKey}` } })
    t.equal(res.status, 200)
    t.equal(res.body.count, 1)
    t.equal(res.body.results[0].id, 1)
    t.equal(res.body.results[0].api_token, projectKey)
  })

  t.test('no secret reaches the logs', async (t) => {
    const logs = server.stdout.join('\n')
    t.notMatch(logs, personalKey!)
  })

  t.test('restart keeps the data and prints no new keys', async (t) => {
    t.equal(await server.stop(), 0, 'SIGTERM exits cleanly')
    const again = await startServer({ dataDir, fresh: true })
    t.teardown(() => again.stop())
    t.notMatch(again.stderr.join('\n'), /phx_/)
    const res = await again.request('GET', '/api/projects/1/', { headers: { authorization: `Bearer ${personalKey}` } })
    t.equal(res.status, 200)
    t.equal(res.body.api_token, projectKey)
  })
})

t.test('management API authentication and errors', async (t) => {
  const server: TestServer = await serverFor(t)

  t.test('no key gets 401 not_authenticated', async (t) => {
    const res = await server.request('GET', '/api/projects/')
    t.equal(res.status, 401)
    t.same(res.body, {
      type: 'authentication_error',
      code: 'not_authenticated',
      detail: 'Authentication credentials were not provided.',
      attr: null,
    })
  })

  t.test('an unknown key gets 401 invalid_personal_api_key', async (t) => {
    const res = await server.api('GET', '/api/projects/', undefined, 'phx_thisisnotarealkey')
    t.equal(res.status, 401)
    // The contract's error table: attr is "absent" on this 401.
    t.same(res.body, { type: 'authentication_error', code: 'invalid_personal_api_key', detail: CATALOGUE.invalid_personal_api_key.detail })
  })

  t.test('@current resolves to the key owner project', async (t) => {
    const res = await server.api('GET', '/api/projects/@current/')
    t.equal(res.status, 200)
    t.equal(res.body.id, server.boot.project_id)
  })

  t.test('a project that does not exist is 404', async (t) => {
    const res = await server.api('GET', '/api/projects/999/')
    t.equal(res.status, 404)
    t.equal(res.body.code, 'not_found')
  })

  t.test('unknown routes answer the 404 envelope, readable by a browser page', async (t) => {
    const res = await server.request('GET', '/no/such/route')
    t.equal(res.status, 404)
    t.same(Object.keys(res.body).sort(), ['attr', 'code', 'detail', 'type'])
    t.equal(res.body.code, 'not_found')
    t.equal(res.headers.get('access-control-allow-origin'), null, 'no CORS without an Origin')
    const fromPage = await server.request('GET', '/api/not_served/?token=x', { headers: { origin: 'https://app.example.com' } })
    t.equal(fromPage.status, 404)
    t.equal(fromPage.headers.get('access-control-allow-origin'), 'https://app.example.com', 'an SDK sees the 404, not a CORS failure')
  })

  t.test('a wrong method answers 405 method_not_allowed', async (t) => {
    const res = await server.api('DELETE', '/api/projects/1/')
    t.equal(res.status, 405)
    t.equal(res.body.code, 'method_not_allowed')
    t.equal(res.body.detail, 'Method "DELETE" not allowed.')
  })

  t.test('malformed JSON bodies get a validation error', async (t) => {
    const res = await server.request('POST', '/api/organizations/@current/roles/', {
      rawBody: '{"name": ',
      headers: { authorization: `Bearer ${server.boot.personal_api_key}`, 'content-type': 'application/json' },
    })
    t.equal(res.status, 400)
    t.equal(res.body.type, 'validation_error')
    t.equal(res.body.code, 'parse_error')
  })

  t.test('health, readiness and metrics answer without a key', async (t) => {
    t.equal((await server.request('GET', '/_health')).status, 200)
    const ready = await server.request('GET', '/_readiness')
    t.equal(ready.status, 200)
    t.equal(ready.body.status, 'ok')
    const metrics = await server.request('GET', '/metrics')
    t.equal(metrics.status, 200)
    t.match(metrics.text, /skylark_http_requests_total\{route="\/api\/projects\/:project_id\/",status="404"\} 1/)
    t.match(metrics.text, /skylark_http_request_duration_seconds_bucket/)
  })
})
