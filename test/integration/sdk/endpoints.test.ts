/**
 * The wire details the SDK tests rely on, request by request (SQLite store): remote config in both
 * forms, the remote-config payload posthog-node reads, Mixpanel-style `/engage/` updates, the query
 * parameters old posthog-js adds, CORS on every public route (answers skylark makes itself included), and
 * GET / HEAD / OPTIONS as PostHog answers them.
 */
import { runInNewContext } from 'node:vm'
import { gzipSync } from 'node:zlib'
import t from 'tap'
import LZString from 'lz-string'
import { runCli, serverFor, type TestServer } from '../../helpers/server.js'
import { PAYLOAD_REMOTE, personOf, storedEvents } from './harness.js'

const ORIGIN = 'http://shop.example:3000'

t.test('SDK endpoints', async (t) => {
  const server: TestServer = await serverFor(t, { env: { SINK_FLUSH_INTERVAL_MS: '50' } })
  const token = server.boot.project_api_key
  const project = server.boot.project_id
  const createFlag = async (body: Record<string, unknown>) => {
    const res = await server.api('POST', `/api/projects/${project}/feature_flags/`, body)
    if (res.status !== 201) throw new Error(res.text)
    return res.body
  }

  t.test('remote config: JSON and script, hasFeatureFlags from the active flags', async (t) => {
    const before = await server.request('GET', `/array/${token}/config`)
    t.equal(before.status, 200)
    t.equal(before.headers.get('content-type'), 'application/json')
    t.equal(before.headers.get('cache-control'), 'public, max-age=300')
    t.match(before.body, {
      token,
      hasFeatureFlags: false,
      supportedCompression: ['gzip', 'gzip-js', 'base64'],
      analytics: { endpoint: '/i/v0/e/' },
      sessionRecording: false,
      surveys: false,
      heatmaps: false,
      siteApps: [],
      defaultIdentifiedOnly: true,
    })
    await createFlag({ key: 'inactive', active: false })
    t.equal((await server.request('GET', `/array/${token}/config/`)).body.hasFeatureFlags, false, 'inactive flags do not count (trailing slash works)')
    await createFlag({ key: 'live' })
    const json = await server.request('GET', `/array/${token}/config`)
    t.equal(json.body.hasFeatureFlags, true)

    const js = await server.request('GET', `/array/${token}/config.js`, { headers: { origin: ORIGIN } })
    t.equal(js.status, 200)
    t.equal(js.headers.get('content-type'), 'application/javascript')
    t.equal(js.headers.get('access-control-allow-origin'), ORIGIN, 'posthog-js loads it with crossorigin=anonymous')
    const window: Record<string, any> = {}
    runInNewContext(js.text, { window })
    t.same(window._POSTHOG_REMOTE_CONFIG[token], { config: json.body, siteApps: [] }, 'the script sets the same config for the token')

    t.equal((await server.request('GET', '/array/phc_unknown/config.js')).status, 404, 'unknown token: 404')
    t.equal((await server.request('GET', '/array/bad.token/config')).status, 400, 'malformed token: 400')
    const head = await server.request('HEAD', `/array/${token}/config`)
    t.equal(head.status, 200)
    t.equal(head.text, '')
    const options = await server.request('OPTIONS', `/array/${token}/config.js`, { headers: { origin: ORIGIN, 'access-control-request-method': 'GET' } })
    t.equal(options.status, 204)
    t.equal(options.headers.get('allow'), 'GET, OPTIONS, HEAD')
    t.equal(options.headers.get('access-control-allow-origin'), ORIGIN)
  })

  t.test('remote_config answers the "true" payload of remote-configuration flags', async (t) => {
    const remote = await createFlag({ key: 'remote-cfg', is_remote_configuration: true, filters: { groups: [{ rollout_percentage: 100 }], payloads: { true: JSON.stringify(PAYLOAD_REMOTE) } } })
    await createFlag({ key: 'remote-empty', is_remote_configuration: true })
    await createFlag({ key: 'plain', filters: { groups: [{ rollout_percentage: 100 }], payloads: { true: '{"a": 1}' } } })
    const get = (path: string, key?: string) => server.api('GET', path, undefined, key)
    const byKey = await get(`/api/projects/@current/feature_flags/remote-cfg/remote_config?token=${token}`)
    t.equal(byKey.status, 200)
    t.equal(byKey.body, JSON.stringify(PAYLOAD_REMOTE), 'the stored JSON text, as PostHog answers it (posthog-node parses it)')
    t.same((await get(`/api/projects/${project}/feature_flags/${remote.id}/remote_config/`)).body, byKey.body, 'by id, with the project in the path')
    const empty = await get(`/api/projects/@current/feature_flags/remote-empty/remote_config/`)
    t.equal(empty.status, 200)
    t.equal(empty.text, 'null', 'no payload: null')
    t.equal((await get(`/api/projects/@current/feature_flags/plain/remote_config/`)).status, 404, 'not a remote-configuration flag: 404')
    t.equal((await get(`/api/projects/@current/feature_flags/missing/remote_config/`)).status, 404)
    t.equal((await server.request('GET', `/api/projects/@current/feature_flags/remote-cfg/remote_config/`)).status, 401, 'needs a personal key')
    const limited = await runCli(['keys', 'create', '--scopes', 'query:read', '--json', '--data-dir', server.dataDir])
    const key = JSON.parse(limited.stdout).personal_api_key
    t.equal((await get(`/api/projects/@current/feature_flags/remote-cfg/remote_config/`, key)).status, 403, 'and feature_flag:read')
  })

  t.test('Mixpanel-style engage updates become $identify', async (t) => {
    const update = { $distinct_id: 'engage-user', $token: token, $set: { plan: 'team' }, $set_once: { source: 'engage' } }
    const form = `data=${encodeURIComponent(LZString.compressToBase64(JSON.stringify(update)))}&compression=lz64`
    const res = await server.request('POST', '/engage/?ip=1&_=1700000000000', { rawBody: form, headers: { 'content-type': 'application/x-www-form-urlencoded' } })
    t.equal(res.status, 200)
    const b64 = Buffer.from(JSON.stringify({ ...update, $set: { seats: 5 } })).toString('base64')
    t.equal((await server.request('POST', '/engage', { rawBody: `data=${encodeURIComponent(b64)}`, headers: { 'content-type': 'application/x-www-form-urlencoded' } })).status, 200)
    const events = await storedEvents(server, { distinct_id: 'engage-user', event: '$identify' }, 2)
    t.equal(events.length, 2)
    const person = await personOf(server, 'engage-user', (p) => p.properties.seats === 5)
    t.match(person.properties, { plan: 'team', source: 'engage', seats: 5 })
  })

  t.test('old posthog-js capture: ip, _, ver and offset timestamps', async (t) => {
    const sentAt = Date.now() - 60_000
    const body = gzipSync(JSON.stringify([{ event: 'old-js', offset: 5000, properties: { distinct_id: 'old-js-user', token, $lib: 'web' } }]))
    const res = await server.request('POST', `/e/?ip=1&_=${sentAt}&ver=1.220.0&compression=gzip-js`, { rawBody: body, headers: { 'content-type': 'text/plain' } })
    t.equal(res.status, 200)
    const [event] = await storedEvents(server, { distinct_id: 'old-js-user' }, 1)
    // The client's clock (`_`) is trusted for the offset only; the server's receive time anchors it.
    t.ok(Math.abs(Date.parse(event.timestamp) - (Date.now() - 5000)) < 5000, `timestamp ${event.timestamp} is now − offset`)
    // `_` is the client's send time: a client an hour behind gets its timestamps corrected (sent_at skew).
    const clientNow = Date.now() - 3_600_000
    const skewed = { event: 'skewed', timestamp: new Date(clientNow - 10_000).toISOString(), properties: { distinct_id: 'old-js-user', token } }
    t.equal((await server.request('POST', `/e/?_=${clientNow}&ver=1.220.0`, { body: skewed })).status, 200)
    const [corrected] = await storedEvents(server, { distinct_id: 'old-js-user', event: 'skewed' }, 1)
    t.ok(Math.abs(Date.parse(corrected.timestamp) - (Date.now() - 10_000)) < 5000, `timestamp ${corrected.timestamp} is corrected by _`)
    const beacon = await server.request('POST', '/i/v0/e/?compression=base64&beacon=1', {
      rawBody: `data=${encodeURIComponent(Buffer.from(JSON.stringify({ event: 'bye', properties: { distinct_id: 'old-js-user', token } })).toString('base64'))}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    })
    t.equal(beacon.status, 204, 'sendBeacon gets 204')
    const get = await server.request('GET', `/capture/?data=${encodeURIComponent(Buffer.from(JSON.stringify({ event: 'pixel', distinct_id: 'old-js-user', token })).toString('base64'))}`)
    t.equal(get.status, 200, 'GET with ?data= captures')
    await storedEvents(server, { distinct_id: 'old-js-user', event: 'pixel' }, 1)
  })

  t.test('CORS on every public route', async (t) => {
    const routes = ['/e/', '/i/v0/e/', '/batch/', '/capture/', '/track/', '/engage/', '/flags/?v=2', '/decide/?v=3', `/array/${token}/config`, `/array/${token}/config.js`]
    for (const path of routes) {
      const preflight = await server.request('OPTIONS', path, {
        headers: { origin: ORIGIN, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type,x-custom' },
      })
      t.ok(preflight.status === 200 || preflight.status === 204, `${path}: preflight ${preflight.status}`)
      t.equal(preflight.headers.get('access-control-allow-origin'), ORIGIN, `${path}: origin echoed`)
      t.equal(preflight.headers.get('access-control-allow-credentials'), 'true', `${path}: credentials`)
      t.equal(preflight.headers.get('access-control-allow-headers'), 'content-type,x-custom', `${path}: requested headers allowed`)
      t.match(preflight.headers.get('access-control-allow-methods'), /POST/, `${path}: methods`)
    }
    const ok = await server.request('POST', '/i/v0/e/', { body: { event: 'cors', distinct_id: 'c', token }, headers: { origin: ORIGIN } })
    t.equal(ok.headers.get('access-control-allow-origin'), ORIGIN, 'answers carry the origin')
    const refused = await server.request('POST', '/e/', { body: { event: 'cors', distinct_id: 'c', token: 'phc_nope' }, headers: { origin: ORIGIN } })
    t.equal(refused.status, 401)
    t.equal(refused.headers.get('access-control-allow-origin'), ORIGIN, 'so do refusals, or the browser would see a network error and retry')
    const tooLarge = await server.request('POST', '/e/', { rawBody: Buffer.alloc(3 * 1024 * 1024, 0x20), headers: { origin: ORIGIN, 'content-type': 'text/plain' } })
    t.equal(tooLarge.status, 413)
    t.equal(tooLarge.headers.get('access-control-allow-origin'), ORIGIN, 'and the 413 skylark sends before reading the body')
    const plain = await server.request('POST', '/e/', { body: { event: 'cors', distinct_id: 'c', token } })
    t.equal(plain.headers.get('access-control-allow-origin'), null, 'no Origin, no CORS headers')
  })

  t.test('GET, HEAD and OPTIONS as PostHog answers them', async (t) => {
    const flagsGet = await server.request('GET', '/flags/?v=2')
    t.equal(flagsGet.status, 200)
    t.same(flagsGet.body.flags, {}, 'GET /flags: no flags')
    const head = await server.request('HEAD', '/flags/?v=2')
    t.equal(head.status, 200)
    t.equal(head.text, '')
    const options = await server.request('OPTIONS', '/flags/')
    t.equal(options.status, 204)
    t.equal(options.headers.get('allow'), 'GET, POST, OPTIONS, HEAD')
    const captureOptions = await server.request('OPTIONS', '/e/')
    t.equal(captureOptions.status, 200)
    t.same(captureOptions.body, { status: 1 })
    const captureGet = await server.request('GET', '/e/')
    t.equal(captureGet.status, 400, 'GET without data')
    t.equal(captureGet.body.code, 'invalid_payload')
    t.equal((await server.request('PUT', '/e/')).status, 405)
  })

  t.test("/flags reads v, version and config as PostHog's flag service does", async (t) => {
    const shape = async (query: string): Promise<[string, boolean]> => {
      const body = (await server.request('POST', `/flags/${query}`, { body: { token, distinct_id: 'x' } })).body
      const kind = 'featureFlags' in body ? 'legacy' : 'enabled' in body.flags.live ? 'details' : 'typed'
      return [kind, 'supportedCompression' in body]
    }
    t.same(await shape(''), ['details', true], 'neither given: the details shape with the config')
    t.same(await shape('?v=&config='), ['legacy', true], 'an empty v is missing (read as 1), an empty config is true')
    t.same(await shape('?version=2'), ['details', false], '`version` names v')
    t.same(await shape('?config'), ['legacy', true])
    t.same(await shape('?v=2&config=yes'), ['details', true])
    t.same(await shape('?v=2&config=OFF'), ['details', false])
    t.same(await shape('?v=2&config=0'), ['details', false])
    t.same(await shape('?v=2.0'), ['legacy', false], 'what is not an integer reads as 1')
    t.same(await shape('?v=3x'), ['legacy', false])
    t.same(await shape('?v=%2B3'), ['typed', false], '+3 is 3')
    t.same(await shape('?v=4294967298'), ['legacy', false], 'past 32 bits reads as 1')
    const get = await server.request('GET', '/flags/?v=2')
    t.same(Object.keys(get.body).sort(), ['errorsWhileComputingFlags', 'evaluatedAt', 'flags', 'requestId', 'supportedCompression'], 'GET: of the config, the compression list alone')
    const data = encodeURIComponent(JSON.stringify({ token, distinct_id: 'x' }))
    const legacy = await server.request('GET', `/flags/?data=${data}`)
    t.same([legacy.body.featureFlags, legacy.body.supportedCompression], [{}, ['gzip', 'gzip-js']], 'GET evaluates nothing, data or not; without v, the legacy shape')
  })

  t.test('/decide keeps the contract’s compression list, /flags gives posthog-js its own', async (t) => {
    const decide = await server.request('POST', '/decide/?v=3', { body: { token, distinct_id: 'x' } })
    t.same(decide.body.supportedCompression, ['gzip', 'lz64'])
    t.match(decide.body.featureFlags, { live: true })
    const flags = await server.request('POST', '/flags/?v=2&config=true', { body: { api_key: token, distinct_id: 'x' } })
    t.same(flags.body.supportedCompression, ['gzip', 'gzip-js'])
    t.equal(flags.body.flags.live.enabled, true, '`api_key` works where SDKs send `token`')
    const noConfig = await server.request('POST', '/flags/?v=2', { body: { token, distinct_id: 'x' } })
    t.notOk('supportedCompression' in noConfig.body, 'v=2 without config=true: flags only')
  })
})
