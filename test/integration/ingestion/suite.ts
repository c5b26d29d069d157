/**
 * Capture and batch behaviour, run once against each event store (SQLite and a real ClickHouse): the
 * same requests must give the same answers and the same stored events.
 */
import type { Test } from 'tap'
import { gzipSync } from 'node:zlib'
import { randomUUID } from 'node:crypto'
import { CATALOGUE } from '../../../src/common/errors.js'
import { runCli, startServer, type TestServer } from '../../helpers/server.js'

export interface StoreSetup {
  name: string
  env: () => Record<string, string>
}

/** Polls the events API until `expected` events match the query, or fails after `timeoutMs`. */
export async function waitForEvents(server: TestServer, query: string, expected: number, timeoutMs = 15_000): Promise<any[]> {
  const deadline = Date.now() + timeoutMs
  let last: any = null
  while (Date.now() < deadline) {
    const res = await server.api('GET', `/api/projects/${server.boot.project_id}/events/?limit=1000&${query}`)
    last = res.body
    // The count and the page are separate reads (two queries on ClickHouse): rows stored between them can be
    // counted and not yet listed, so the page must hold them too (up to its limit of 1000).
    if (res.status === 200 && res.body.count >= expected && res.body.results.length >= Math.min(expected, 1000)) return res.body.results
    await new Promise((r) => setTimeout(r, 100))
  }
  throw new Error(`expected ${expected} events for ${query}, last answer: ${JSON.stringify(last)?.slice(0, 500)}`)
}

export function ingestionSuite(t: Test, setup: StoreSetup): void {
  let server: TestServer
  t.before(async () => {
    server = await startServer({ env: { ...setup.env(), SPIKE_BURST: '20', SPIKE_RATE_PER_SEC: '1' } })
  })
  t.teardown(async () => {
    await server?.stop()
    server?.cleanup()
  })
  const token = () => server.boot.project_api_key

  t.test('/capture/ stores one event with the fields the client sent', async (t) => {
    const uuid = randomUUID()
    const res = await server.request('POST', '/capture/', {
      body: { api_key: token(), event: 'signed up', distinct_id: 'cap-1', uuid, timestamp: '2024-03-01T10:00:00Z', properties: { plan: 'pro', n: 3 } },
      headers: { 'x-forwarded-for': '81.2.69.142, 10.0.0.1' },
    })
    t.equal(res.status, 200)
    t.same(res.body, { status: 1 })
    const [event] = await waitForEvents(server, 'distinct_id=cap-1', 1)
    t.equal(event.uuid, uuid, 'a valid client uuid is kept')
    t.equal(event.event, 'signed up')
    t.equal(event.timestamp, '2024-03-01T10:00:00.000Z')
    t.equal(event.properties.plan, 'pro')
    t.equal(event.properties.$ip, '81.2.69.142', '$ip is the first X-Forwarded-For address')
    t.equal(event.properties.$geoip_country_code, 'GB', "the consumer resolved $ip with the main thread's copy of the GeoIP database")
    t.match(event.person_id, /^[0-9a-f-]{36}$/)
  })

  t.test('autocapture elements are stored as the chain, not as properties', async (t) => {
    const chain = 'button.cta:nth-child="1"nth-of-type="1"text="Go"'
    const batch = [
      { event: '$autocapture', properties: { distinct_id: 'elements-user', $elements_chain: chain, $event_type: 'click' } },
      { event: '$autocapture', properties: { distinct_id: 'elements-user', $elements: [{ tag_name: 'div', nth_child: 1, nth_of_type: 2, $el_text: 'text' }] } },
    ]
    t.equal((await server.request('POST', '/batch/', { body: { api_key: token(), batch } })).status, 200)
    const events = await waitForEvents(server, 'distinct_id=elements-user', 2)
    t.same(events.map((e) => e.elements_chain).sort(), [chain, 'div:nth-child="1"nth-of-type="2"text="text"'].sort())
    for (const e of events) t.notOk('$elements' in e.properties || '$elements_chain' in e.properties, 'neither stays a property')
    t.equal(events.find((e) => e.elements_chain === chain).properties.$event_type, 'click')
    t.same(events.find((e) => e.elements_chain !== chain).elements, [
      { text: 'text', tag_name: 'div', attr_class: null, href: null, attr_id: null, nth_child: 1, nth_of_type: 2, attributes: {}, order: 0 },
    ], 'the events API reads the chain back as elements')
  })

  t.test('/batch/ stores every event with distinct_id inside properties', async (t) => {
    const batch = Array.from({ length: 150 }, (_, i) => ({ event: 'batch item', properties: { distinct_id: 'batch-user', i } }))
    const res = await server.request('POST', '/batch/', { body: { api_key: token(), batch } })
    t.equal(res.status, 200)
    const events = await waitForEvents(server, 'distinct_id=batch-user', 150)
    t.equal(events.length, 150)
    t.same(new Set(events.map((e) => e.properties.i)).size, 150)
    t.ok(events.every((e) => /^[0-9a-f]{8}-[0-9a-f]{4}-7/.test(e.uuid)), 'events without uuid get a UUIDv7')
  })

  t.test('a batch big enough for the worker pool is stored whole, gzip judged by its decoded size', async (t) => {
    const batch = Array.from({ length: 2500 }, (_, i) => ({ event: 'pooled', properties: { distinct_id: `pool-${i % 50}`, i, pad: 'p'.repeat(150) } }))
    const body = JSON.stringify({ api_key: token(), batch })
    t.ok(body.length > 256 * 1024, `${body.length} bytes: over the inline limit`)
    t.equal((await server.request('POST', '/batch/', { rawBody: body, headers: { 'content-type': 'application/json' } })).status, 200)
    const zipped = gzipSync(JSON.stringify({ api_key: token(), batch: batch.map((e) => ({ ...e, event: 'pooled gzip' })) }))
    t.ok(zipped.length < 256 * 1024, `${zipped.length} bytes compressed`)
    t.equal((await server.request('POST', '/batch/', { rawBody: zipped, headers: { 'content-encoding': 'gzip' } })).status, 200)
    await waitForEvents(server, 'event=pooled', 2500)
    await waitForEvents(server, 'event=pooled%20gzip', 2500)
    const metrics = (await server.request('GET', '/metrics')).text
    t.match(metrics, /skylark_http_requests_total\{route="\/batch\/",status="200"\}/)
  })

  t.test('the key may come from token, $token or properties.token', async (t) => {
    for (const [i, body] of [
      { token: token(), event: 'k', distinct_id: 'key-0' },
      { $token: token(), event: 'k', distinct_id: 'key-1' },
      { event: 'k', properties: { distinct_id: 'key-2', token: token() } },
    ].entries()) {
      const res = await server.request('POST', '/capture/', { body })
      t.equal(res.status, 200, `form ${i}`)
    }
    await waitForEvents(server, 'event=k', 3)
  })

  t.test('gzip bodies are read with Content-Encoding or by their magic bytes', async (t) => {
    const body = gzipSync(JSON.stringify({ api_key: token(), batch: [{ event: 'zipped', properties: { distinct_id: 'gz' } }] }))
    t.equal((await server.request('POST', '/batch/', { rawBody: body, headers: { 'content-encoding': 'gzip', 'content-type': 'application/json' } })).status, 200)
    t.equal((await server.request('POST', '/batch/', { rawBody: body, headers: { 'content-type': 'text/plain' } })).status, 200)
    await waitForEvents(server, 'event=zipped', 2)
  })

  t.test('unknown and missing keys are 401 invalid_api_key', async (t) => {
    const unknown = await server.request('POST', '/capture/', { body: { api_key: 'phc_nope', event: 'x', distinct_id: 'd' } })
    t.equal(unknown.status, 401)
    // The contract's error table: attr is "absent" on this 401.
    t.same(unknown.body, { type: 'authentication_error', code: 'invalid_api_key', detail: CATALOGUE.invalid_api_key.detail })
    const missing = await server.request('POST', '/capture/', { body: { event: 'x', distinct_id: 'd' } })
    t.equal(missing.status, 401)
    t.equal(missing.body.code, 'invalid_api_key')
  })

  t.test('a personal key needs a project_id it can see, else 400 invalid_project', async (t) => {
    const key = server.boot.personal_api_key!
    const ok = await server.request('POST', '/capture/', { body: { api_key: key, project_id: server.boot.project_id, event: 'pk', distinct_id: 'pk-user' } })
    t.equal(ok.status, 200)
    const bad = await server.request('POST', '/capture/', { body: { api_key: key, event: 'pk', distinct_id: 'pk-user' } })
    t.equal(bad.status, 400)
    t.same(bad.body, { type: 'validation_error', code: 'invalid_project', detail: bad.body.detail, attr: 'project_id' })
    await waitForEvents(server, 'event=pk', 1)
  })

  t.test('events without a name or distinct_id are dropped silently and recorded', async (t) => {
    const res = await server.request('POST', '/batch/', {
      body: {
        api_key: token(),
        batch: [
          { properties: { distinct_id: 'drop-1' } },
          { event: '', properties: { distinct_id: 'drop-2' } },
          { event: 'no id', properties: {} },
          { event: 'empty id', properties: { distinct_id: '' } },
          { event: 'kept', properties: { distinct_id: 'drop-ok' } },
        ],
      },
    })
    t.equal(res.status, 200)
    await waitForEvents(server, 'distinct_id=drop-ok', 1)
    t.equal((await server.api('GET', `/api/projects/${server.boot.project_id}/events/?event=no%20id`)).body.count, 0)
    const warnings = await server.api('GET', `/api/projects/${server.boot.project_id}/ingestion_warnings/`)
    const reasons = warnings.body.results.filter((w: any) => w.type === 'event_dropped').map((w: any) => w.details.reason)
    t.ok(reasons.includes('missing_event_name'))
    t.ok(reasons.includes('missing_distinct_id'))
    t.ok(reasons.includes('empty_distinct_id'))
    const metrics = (await server.request('GET', '/metrics')).text
    t.match(metrics, /skylark_events_dropped_total\{reason="missing_event_name"\} 2/)
    t.match(metrics, /skylark_events_dropped_total\{reason="empty_distinct_id"\} 1/)
  })

  t.test('an event without a name is dropped on /capture/ even with $set, and is $identify only on /engage/', async (t) => {
    const update = { $token: token(), $distinct_id: 'engage-path', $set: { plan: 'pro' } }
    t.same((await server.request('POST', '/capture/', { body: update })).body, { status: 1 }, 'still 200 on /capture/')
    t.equal((await server.request('POST', '/engage/', { body: { ...update, $set: { plan: 'team' } } })).status, 200)
    const stored = await waitForEvents(server, 'distinct_id=engage-path', 1)
    t.same(stored.map((e: any) => [e.event, e.properties.$set]), [['$identify', { plan: 'team' }]], 'only the /engage/ one was stored')
  })

  t.test('a request that holds no events is 400 invalid_payload, as in Rust capture', async (t) => {
    for (const body of [{ api_key: token(), batch: [] }, []]) {
      const res = await server.request('POST', '/batch/', { body })
      t.equal(res.status, 400, JSON.stringify(body))
      t.equal(res.body.code, 'invalid_payload')
    }
  })

  t.test('malformed payloads are 400 invalid_payload and store nothing', async (t) => {
    const before = (await server.api('GET', `/api/projects/${server.boot.project_id}/events/?limit=1`)).body.count
    const cases: Array<[string, string | Buffer, Record<string, string>?]> = [
      ['truncated JSON', `{"api_key":"${token()}","event":"x","distinct_`],
      ['a bare string', '"hello"'],
      ['a number', '42'],
      ['properties not an object', JSON.stringify({ api_key: token(), event: 'x', distinct_id: 'd', properties: [1, 2] })],
      ['an invalid uuid', JSON.stringify({ api_key: token(), event: 'x', distinct_id: 'd', uuid: 'not-a-uuid' })],
      ['a null event in a batch', JSON.stringify({ api_key: token(), batch: [null] })],
      ['batch not a list', JSON.stringify({ api_key: token(), batch: { event: 'x' } })],
      ['an event name that is not a string', JSON.stringify({ api_key: token(), event: 7, distinct_id: 'd' })],
      ['invalid gzip', Buffer.from([0x1f, 0x8b, 0x08, 0x00, 1, 2, 3, 4]), { 'content-encoding': 'gzip' }],
      ['nesting far too deep', `{"api_key":"${token()}","event":"x","distinct_id":"d","properties":{"a":${'['.repeat(5000)}${']'.repeat(5000)}}}`],
    ]
    for (const [name, body, headers] of cases) {
      const res = await server.request('POST', '/capture/', { rawBody: body, headers: { 'content-type': 'application/json', ...headers } })
      t.equal(res.status, 400, name)
      t.equal(res.body?.type, 'validation_error', name)
      t.equal(res.body?.code, 'invalid_payload', name)
    }
    const after = (await server.api('GET', `/api/projects/${server.boot.project_id}/events/?limit=1`)).body.count
    t.equal(after, before, 'nothing was stored')
  })

  t.test('bodies over the limit get 413', async (t) => {
    const big = Buffer.alloc(25 * 1024 * 1024, 0x20)
    const batch = await server.request('POST', '/batch/', { rawBody: big, headers: { 'content-type': 'application/json' } })
    t.equal(batch.status, 413)
    t.equal(batch.body.code, 'request_too_large')
    const capture = await server.request('POST', '/capture/', { rawBody: Buffer.alloc(3 * 1024 * 1024, 0x20), headers: { 'content-type': 'application/json' } })
    t.equal(capture.status, 413)
    const bomb = gzipSync(Buffer.alloc(30 * 1024 * 1024, 0x20))
    const zipped = await server.request('POST', '/batch/', { rawBody: bomb, headers: { 'content-encoding': 'gzip' } })
    t.equal(zipped.status, 413, 'a gzip body that inflates past the limit is refused')
    t.equal((await server.request('GET', '/_health')).status, 200, 'the server is still up')
  })

  t.test('odd but valid input is stored faithfully', async (t) => {
    const res = await server.request('POST', '/batch/', {
      body: {
        api_key: token(),
        batch: [
          { event: 'odd', distinct_id: 12345, properties: { kind: 'number id' } },
          { event: 'odd', distinct_id: 'nul\u0000id', properties: { kind: 'nul' } },
          { event: 'odd', distinct_id: 'emoji-😀', properties: { kind: 'unicode', text: 'עברית 中文 \u{1F600} \u200f' } },
          { event: 'odd', distinct_id: 'proto', properties: { kind: 'proto', constructor: 'c', prototype: 'p', hasOwnProperty: 1 } },
          { event: 'odd', distinct_id: 'sql', properties: { kind: 'sql', q: "'; DROP TABLE events; --", b: '\\\'"`' } },
        ],
      },
    })
    t.equal(res.status, 200)
    const events = await waitForEvents(server, 'event=odd', 5)
    const byKind = Object.fromEntries(events.map((e) => [e.properties.kind, e]))
    t.equal(byKind['number id'].distinct_id, '12345', 'numbers become their decimal text')
    t.equal(byKind.nul.distinct_id, 'nul\uFFFDid', 'NUL becomes U+FFFD')
    t.equal(byKind.unicode.properties.text, 'עברית 中文 \u{1F600} \u200f')
    t.equal(byKind.sql.properties.q, "'; DROP TABLE events; --")
    t.equal(byKind.sql.properties.b, '\\\'"`')
    t.same([byKind.proto.properties.constructor, byKind.proto.properties.prototype], ['c', 'p'], 'keys named like Object members are plain data')
  })

  t.test('__proto__ in a raw body is kept as data, never as a prototype', async (t) => {
    const raw = `{"api_key":"${token()}","event":"proto raw","distinct_id":"proto-raw","properties":{"__proto__":{"isAdmin":true},"$set":{"__proto__":{"x":1},"name":"p"}}}`
    const res = await server.request('POST', '/capture/', { rawBody: raw, headers: { 'content-type': 'application/json' } })
    t.equal(res.status, 200)
    const [event] = await waitForEvents(server, 'event=proto%20raw', 1)
    t.same(event.properties.__proto__, { isAdmin: true })
    t.equal((await server.request('POST', '/capture/', { body: { api_key: token(), event: 'after proto', distinct_id: 'proto-raw' } })).status, 200)
    await waitForEvents(server, 'event=after%20proto', 1)
  })

  t.test('timestamps are corrected for client clock skew', async (t) => {
    const now = Date.now()
    const sentAt = new Date(now + 3_600_000).toISOString() // the client's clock runs an hour fast
    const timestamp = new Date(now + 3_600_000 - 60_000).toISOString()
    await server.request('POST', '/batch/', {
      body: { api_key: token(), sent_at: sentAt, batch: [{ event: 'skew', timestamp, properties: { distinct_id: 'skew' } }] },
    })
    await server.request('POST', '/capture/', { body: { api_key: token(), event: 'offset', distinct_id: 'skew', offset: 120_000 } })
    const [skew] = await waitForEvents(server, 'event=skew', 1)
    const [offset] = await waitForEvents(server, 'event=offset', 1)
    t.ok(Math.abs(Date.parse(skew.timestamp) - (now - 60_000)) < 5_000, `skew-corrected: ${skew.timestamp}`)
    t.ok(Math.abs(Date.parse(offset.timestamp) - (now - 120_000)) < 5_000, `offset: ${offset.timestamp}`)
  })

  t.test('historical migrations are stored, never rerouted as spikes', async (t) => {
    const batch = Array.from({ length: 100 }, (_, i) => ({
      event: 'imported',
      timestamp: new Date(Date.UTC(2020, 0, 1) + i * 1000).toISOString(),
      properties: { distinct_id: 'migrated-user', seq: i },
    }))
    const res = await server.request('POST', '/batch/', { body: { api_key: token(), historical_migration: true, batch } })
    t.equal(res.status, 200)
    const events = await waitForEvents(server, 'event=imported', 100)
    t.same(events.map((e) => e.properties.seq).sort((a, b) => a - b), batch.map((_, i) => i))
    const metrics = (await server.request('GET', '/metrics')).text
    t.match(metrics, /skylark_events_received_total\{lane="historical"\} 100/)
  })

  t.test('a hot distinct_id overflows to its own lane and is still stored', async (t) => {
    const batch = Array.from({ length: 60 }, (_, i) => ({ event: 'hot', properties: { distinct_id: 'hot-user', i } }))
    t.equal((await server.request('POST', '/batch/', { body: { api_key: token(), batch } })).status, 200)
    await waitForEvents(server, 'event=hot', 60)
    const metrics = (await server.request('GET', '/metrics')).text
    const overflow = Number(/skylark_events_received_total\{lane="overflow"\} (\d+)/.exec(metrics)?.[1] ?? 0)
    t.ok(overflow >= 40, `events past the burst of 20 went to overflow (${overflow})`)
  })

  t.test('the events API filters, paginates and needs query:read', async (t) => {
    const pid = server.boot.project_id
    await server.request('POST', '/batch/', {
      body: {
        api_key: token(),
        batch: [
          { event: 'filter me', timestamp: '2023-05-01T00:00:00Z', properties: { distinct_id: 'f1', color: 'red', size: 3, flag: true } },
          { event: 'filter me', timestamp: '2023-05-02T00:00:00Z', properties: { distinct_id: 'f2', color: 'blue', size: 10 } },
          { event: 'filter me', timestamp: '2023-05-03T00:00:00Z', properties: { distinct_id: 'f1', color: 'Red wine' } },
        ],
      },
    })
    await waitForEvents(server, 'event=filter%20me', 3)
    const q = async (query: string) => (await server.api('GET', `/api/projects/${pid}/events/?event=filter%20me&${query}`)).body
    t.equal((await q('distinct_id=f1')).count, 2)
    t.equal((await q('after=2023-05-02T00:00:00Z')).count, 1, 'after is strict')
    t.equal((await q('before=2023-05-02T00:00:00Z')).count, 1)
    const prop = (filters: unknown) => q(`properties=${encodeURIComponent(JSON.stringify(filters))}`)
    t.equal((await prop([{ key: 'color', value: 'red', operator: 'exact' }])).count, 1)
    t.equal((await prop([{ key: 'color', value: 'red', operator: 'icontains' }])).count, 2)
    t.equal((await prop([{ key: 'size', value: 5, operator: 'gt' }])).count, 1)
    t.equal((await prop([{ key: 'size', operator: 'is_set' }])).count, 2)
    t.equal((await prop([{ key: 'flag', value: true }])).count, 1)
    t.equal((await prop([{ key: 'color', value: 'blue', operator: 'is_not' }])).count, 2)
    const page = await q('limit=2')
    t.equal(page.results.length, 2)
    t.equal(page.results[0].timestamp, '2023-05-03T00:00:00.000Z', 'newest first')
    const next = new URL(page.next)
    t.same([next.searchParams.get('before'), next.searchParams.get('offset')], ['2023-05-02T00:00:00.001Z', '1'], 'next goes on from the last event listed')
    const bad = await server.api('GET', `/api/projects/${pid}/events/?properties=nope`)
    t.equal(bad.status, 400)
    t.equal(bad.body.attr, 'properties')
    const readOnly = JSON.parse((await runCli(['keys', 'create', '--scopes', 'feature_flag:read', '--json'], { DATA_DIR: server.dataDir })).stdout)
    const denied = await server.api('GET', `/api/projects/${pid}/events/`, undefined, readOnly.personal_api_key)
    t.equal(denied.status, 403)
    t.equal(denied.body.detail, "API key missing required scope 'query:read'")
  })
}
