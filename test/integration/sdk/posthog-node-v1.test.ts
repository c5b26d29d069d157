/**
 * posthog-node 5.74.0, unmodified, in capture v1 mode (`POSTHOG_CAPTURE_MODE=v1`, read when the client is
 * made): it posts `{created_at, batch}` to `/i/v1/analytics/events` with the key in `Authorization: Bearer`,
 * gzip with `Content-Encoding`, and reads per-event results from the answer. On both event stores the events
 * must land in the events API with their properties (the `$lib` v1 takes from PostHog-Sdk-Info, the session id
 * it moves out of the properties and back), `$set` must reach the person, and an event v1 drops must come back
 * to the app as the SDK's CaptureV1Error. Then the route's own answers, request by request (SQLite store).
 */
import { gzipSync } from 'node:zlib'
import t, { type Test } from 'tap'
import { PostHog } from 'posthog-node'
import { serverFor, type TestServer } from '../../helpers/server.js'
import { assertClean, eachStore, groupOf, personOf, recordingFetch, storedEvents, summarise, type Exchange, type StoreRun } from './harness.js'

const V1_PATH = '/i/v1/analytics/events'
const BURST = 500

/** A posthog-node client made while POSTHOG_CAPTURE_MODE=v1, as an app started with it set would make it. */
function v1Client(key: string, options: Record<string, unknown>): PostHog {
  const before = process.env.POSTHOG_CAPTURE_MODE
  process.env.POSTHOG_CAPTURE_MODE = 'v1'
  try {
    return new PostHog(key, options)
  } finally {
    if (before === undefined) delete process.env.POSTHOG_CAPTURE_MODE
    else process.env.POSTHOG_CAPTURE_MODE = before
  }
}

async function scenario(t: Test, { store, server }: StoreRun): Promise<void> {
  const p = `${store}-v1`
  const user = `${p}-user`
  const alias = `${p}-alias`
  const company = `${p}-acme`
  const token = server.boot.project_api_key
  const log: Exchange[] = []
  const errors: unknown[] = []
  const client = v1Client(token, { host: server.baseUrl, flushAt: 20, flushInterval: 200, maxQueueSize: BURST * 2, fetch: recordingFetch(log) })
  client.on('error', (e: unknown) => errors.push(e))

  client.capture({ distinctId: user, event: 'signed up', properties: { plan: 'free', n: 1, nested: { a: [1, 2] }, $session_id: `${p}-session` }, groups: { company } })
  client.identify({ distinctId: user, properties: { $set: { email: `${p}@example.com`, plan: 'pro' }, $set_once: { first_mode: 'v1' } } })
  client.alias({ distinctId: user, alias })
  client.groupIdentify({ groupType: 'company', groupKey: company, properties: { name: 'Acme', tier: 'gold' } })
  client.capture({ distinctId: user, event: 'back then', timestamp: new Date('2024-01-02T03:04:05.678Z') })
  // $ai_* events stay on the v0 route in v1 mode (posthog-node's isLegacyOnlyEvent)
  client.capture({ distinctId: user, event: '$ai_generation', properties: { $ai_model: 'gpt-test' } })
  for (let i = 0; i < BURST; i++) client.capture({ distinctId: `${p}-burst-${i % 10}`, event: `burst ${p}`, properties: { i } })
  await client.flush()

  t.test('events land with their properties', async (t) => {
    const [signup] = await storedEvents(server, { distinct_id: user, event: 'signed up' }, 1)
    t.match(signup.properties, {
      plan: 'free',
      n: 1,
      nested: { a: [1, 2] },
      $groups: { company },
      $session_id: `${p}-session`,
      $lib: 'posthog-node',
      $lib_version: '5.74.0',
      $geoip_disable: true,
    })
    const [old] = await storedEvents(server, { distinct_id: user, event: 'back then' }, 1)
    t.equal(old.timestamp.slice(0, 19), '2024-01-02T03:04:05', 'the event’s own time (the request clock agrees with the server’s)')
    const [ai] = await storedEvents(server, { distinct_id: user, event: '$ai_generation' }, 1)
    t.equal(ai.properties.$ai_model, 'gpt-test')
    const burst = await storedEvents(server, { event: `burst ${p}` }, BURST)
    t.equal(new Set(burst.map((e) => e.properties.i)).size, BURST, `all ${BURST} burst events, each once`)
  })

  t.test('$set reaches the person; alias and group as on /batch/', async (t) => {
    const person = await personOf(server, user, (x) => x.properties.plan === 'pro' && x.distinct_ids.includes(alias))
    t.match(person.properties, { email: `${p}@example.com`, plan: 'pro', first_mode: 'v1' })
    const [signup] = await storedEvents(server, { distinct_id: user, event: 'signed up' }, 1)
    t.equal(signup.person_id, person.uuid, 'the event belongs to the identified person')
    t.match((await groupOf(server, company, (g) => g.group_properties.tier === 'gold')).group_properties, { name: 'Acme' })
  })

  t.test('the wire: gzip v1 batches answered 200, nothing retried, no error', async (t) => {
    const v1 = log.filter((e) => e.path === V1_PATH)
    t.ok(v1.length >= BURST / 100, `${v1.length} v1 batches`)
    t.ok(v1.every((e) => e.bodyKind === 'gzip' && e.contentEncoding === 'gzip' && e.status === 200), 'gzip bodies with Content-Encoding, each 200')
    t.same(log.filter((e) => e.path === '/batch/').length, 1, 'only the $ai_ event went to /batch/')
    assertClean(t, log, 'posthog-node v1 client')
    t.same(errors.map(String), [], 'no error event')
    t.comment(`posthog-node 5 (v1) on ${store}:\n  ${summarise(log).join('\n  ')}`)
  })

  t.test('uncompressed bodies, and an event v1 drops comes back to the app', async (t) => {
    const plainLog: Exchange[] = []
    const dropped: any[] = []
    const plain = v1Client(token, { host: server.baseUrl, flushAt: 100, flushInterval: 0, disableCompression: true, fetch: recordingFetch(plainLog) })
    plain.on('error', (e: unknown) => dropped.push(e))
    plain.capture({ distinctId: `${p}-plain`, event: 'plain one', properties: { ok: true } })
    plain.capture({ distinctId: `${p}-plain`, event: 'x'.repeat(201), uuid: '019cf0a2-0000-7000-8000-00000000d209' })
    await plain.shutdown()
    const [kept] = await storedEvents(server, { distinct_id: `${p}-plain`, event: 'plain one' }, 1)
    t.equal(kept.properties.ok, true)
    t.same(plainLog.map((e) => [e.path, e.bodyKind, e.status]), [[V1_PATH, 'json', 200]], 'one JSON request, answered 200, not resent')
    t.equal(dropped.length, 1, 'one error event')
    t.match(dropped[0], { name: 'CaptureV1Error', drops: [{ uuid: '019cf0a2-0000-7000-8000-00000000d209', details: 'event_name_too_long' }], retryExhausted: [] })
  })

  await client.shutdown()
}

t.test('posthog-node 5 in capture v1 mode against skylark', async (t) => {
  eachStore(t, scenario)
})

// ---------------------------------------------------------------------------------------------------
// The route's answers, request by request.

const HEADERS = {
  'content-type': 'application/json',
  'user-agent': 'posthog-node/5.74.0',
  'posthog-sdk-info': 'posthog-node/5.74.0',
  'posthog-attempt': '1',
  'posthog-request-id': '019cf0a2-7b1c-7d3e-9f00-123456789abc',
}

let seq = 0
const uuid = () => `019cf0a2-1111-7000-8000-${String(++seq).padStart(12, '0')}`
const event = (over: Record<string, unknown> = {}) => ({ event: 'wire', uuid: uuid(), distinct_id: 'wire-user', timestamp: new Date().toISOString(), properties: {}, ...over })
const batch = (events: unknown[], over: Record<string, unknown> = {}) => ({ created_at: new Date().toISOString(), batch: events, ...over })

t.test('capture v1 answers', async (t) => {
  const server: TestServer = await serverFor(t, { env: { SINK_FLUSH_INTERVAL_MS: '50' } })
  const token = server.boot.project_api_key
  const post = (body: unknown, headers: Record<string, string | undefined> = {}, path = V1_PATH) => {
    const all: Record<string, string> = { authorization: `Bearer ${token}`, 'posthog-request-timestamp': new Date().toISOString(), ...HEADERS }
    for (const [name, value] of Object.entries(headers)) if (value === undefined) delete all[name]
    else all[name] = value
    return server.request('POST', path, { rawBody: Buffer.isBuffer(body) ? body : JSON.stringify(body), headers: all })
  }

  t.test('per-event results keyed by uuid; dropped events are not stored', async (t) => {
    const kept = event({ distinct_id: 'wire-a', properties: { k: 1 } })
    const nameless = event({ event: '' })
    const placeholder = event({ distinct_id: 'anonymous' })
    const res = await post(batch([kept, nameless, placeholder]))
    t.equal(res.status, 200)
    t.equal(res.headers.get('content-type'), 'application/json')
    t.same(res.body, {
      results: {
        [kept.uuid]: { result: 'ok' },
        [nameless.uuid]: { result: 'drop', details: 'missing_event_name' },
        [placeholder.uuid]: { result: 'warning', details: 'person_processing_disabled' },
      },
    })
    const [stored] = await storedEvents(server, { distinct_id: 'wire-a' }, 1)
    t.match(stored, { uuid: kept.uuid, event: 'wire', properties: { k: 1, $lib: 'posthog-node', $lib_version: '5.74.0' } })
    const [personless] = await storedEvents(server, { distinct_id: 'anonymous' }, 1)
    t.equal(personless.properties.$process_person_profile, false, 'a placeholder id is stored without person processing')
    t.equal((await server.api('GET', `/api/projects/${server.boot.project_id}/persons/?distinct_id=anonymous`)).body.results.length, 0, 'no person for it')
  })

  t.test('gzip, a trailing slash, and a batch big enough for the pool', async (t) => {
    const pad = 'p'.repeat(200)
    const events = Array.from({ length: 2000 }, (_, i) => event({ event: 'wire big', distinct_id: `wire-big-${i % 7}`, properties: { i, pad } }))
    const res = await post(gzipSync(JSON.stringify(batch(events))), { 'content-encoding': 'gzip' }, `${V1_PATH}/`)
    t.equal(res.status, 200)
    t.equal(Object.values(res.body.results).filter((r: any) => r.result === 'ok').length, 2000, 'every event ok')
    const stored = await storedEvents(server, { event: 'wire big' }, 2000)
    t.equal(new Set(stored.map((e) => e.properties.i)).size, 2000)
    const historical = event({ event: 'wire old', timestamp: '2020-01-01T00:00:00Z' })
    t.equal((await post(batch([historical], { historical_migration: true }))).status, 200)
    t.equal((await storedEvents(server, { event: 'wire old' }, 1))[0].timestamp.slice(0, 10), '2020-01-01', 'a historical migration is stored with its time')
  })

  t.test('refusals in the contract’s envelope, with v1’s statuses', async (t) => {
    const ok = batch([event()])
    const cases: Array<[string, Promise<any>, number, Record<string, unknown>]> = [
      ['no Authorization', post(ok, { authorization: undefined }), 401, { type: 'authentication_error', code: 'invalid_api_key' }],
      ['an unknown key', post(ok, { authorization: 'Bearer phc_nobody' }), 401, { type: 'authentication_error', code: 'invalid_api_key' }],
      ['a missing PostHog-* header', post(ok, { 'posthog-sdk-info': undefined }), 400, { type: 'validation_error', code: 'invalid_payload', attr: null, detail: /PostHog-Sdk-Info/ }],
      ['text/plain', post(ok, { 'content-type': 'text/plain' }), 415, { type: 'invalid_request', code: 'unsupported_media_type' }],
      ['an unknown encoding', post(ok, { 'content-encoding': 'lz4' }), 415, { code: 'unsupported_media_type' }],
      ['an empty batch', post(batch([])), 400, { code: 'invalid_payload', detail: /no events/ }],
      ['a missing uuid', post(batch([{ ...event(), uuid: undefined }])), 400, { code: 'invalid_payload', detail: /uuid is missing/ }],
      ['a v0 body', post({ api_key: token, batch: [{ event: 'e', distinct_id: 'd' }] }), 400, { code: 'invalid_payload', detail: /created_at/ }],
      ['broken gzip', post(Buffer.from('not gzip'), { 'content-encoding': 'gzip' }), 400, { code: 'invalid_payload' }],
    ]
    for (const [what, pending, status, envelope] of cases) {
      const res = await pending
      t.equal(res.status, status, `${what}: ${status}`)
      t.match(res.body, envelope, `${what}: envelope`)
    }
  })

  t.test('POST only, with CORS for browsers', async (t) => {
    const origin = 'http://shop.example:3000'
    const preflight = await server.request('OPTIONS', V1_PATH, { headers: { origin, 'access-control-request-headers': 'authorization, content-type, posthog-sdk-info' } })
    t.equal(preflight.status, 200)
    t.equal(preflight.headers.get('access-control-allow-origin'), origin)
    t.equal(preflight.headers.get('access-control-allow-headers'), 'authorization, content-type, posthog-sdk-info')
    const res = await post(batch([event()]), { origin })
    t.equal(res.headers.get('access-control-allow-origin'), origin)
    t.equal((await server.request('GET', V1_PATH)).status, 405)
  })
})
