/**
 * The worker pool (src/pool) starts with its first task, not with the server: a server that has only seen small
 * bodies runs no pool thread, and the first body over 256 KB starts one, which parses it. A body that looks small
 * and inflates past 256 KB (a form's lz64, capture v1's brotli, a gzip trailer that understates its size) stops
 * inflating on the request thread there, and the pool takes it from the start.
 */
import t from 'tap'
import { brotliCompressSync, gzipSync } from 'node:zlib'
import LZString from 'lz-string'
import { serverFor } from '../../helpers/server.js'
import { storedEvents, until } from '../reliability/lib.js'

const poolStarted = (stdout: string[]) => stdout.some((line) => line.includes('"thread":"pool"') && line.includes('thread started'))

t.test('the pool thread starts with the first body over 256 KB, and that body is stored', async (t) => {
  const server = await serverFor(t)
  const api_key = server.boot.project_api_key
  const small = await server.request('POST', '/batch/', { body: { api_key, batch: [{ event: 'small', distinct_id: 'd', properties: {} }] } })
  t.equal(small.status, 200)
  await until('the small event is stored', () => storedEvents(server.dataDir, "event = 'small'").length === 1)
  t.notOk(poolStarted(server.stdout), 'no pool thread for a small body')

  const batch = Array.from({ length: 300 }, (_, i) => ({ event: 'large', distinct_id: `d${i}`, properties: { pad: 'x'.repeat(1000) } }))
  const large = await server.request('POST', '/batch/', { body: { api_key, batch } })
  t.equal(large.status, 200)
  t.ok(poolStarted(server.stdout), 'a pool thread started for the large body')
  await until('the large body’s events are stored', () => storedEvents(server.dataDir, "event = 'large'").length === 300)
})

t.test('a form body whose lz64 inflates past 256 KB is parsed by the pool, and stored', async (t) => {
  const server = await serverFor(t)
  const batch = Array.from({ length: 300 }, (_, i) => ({ event: 'lz64 large', distinct_id: `d${i}`, properties: { pad: 'x'.repeat(1000) } }))
  const data = LZString.compressToBase64(JSON.stringify({ api_key: server.boot.project_api_key, batch }))
  t.ok(data.length < 64 * 1024, `the body is small (${data.length} bytes of lz64)`)
  const form = `data=${encodeURIComponent(data)}&compression=lz64`
  const res = await server.request('POST', '/batch/', { rawBody: form, headers: { 'content-type': 'application/x-www-form-urlencoded' } })
  t.equal(res.status, 200, res.text)
  t.ok(poolStarted(server.stdout), 'a pool thread started for it')
  await until('its events are stored', () => storedEvents(server.dataDir, "event = 'lz64 large'").length === 300)
})

t.test('a capture v1 brotli body that inflates past 256 KB is decoded by the pool, and stored', async (t) => {
  const server = await serverFor(t)
  const batch = Array.from({ length: 300 }, (_, i) => ({
    event: 'v1 large',
    uuid: `019cf0a2-1111-7000-8000-${String(i).padStart(12, '0')}`,
    distinct_id: `d${i}`,
    timestamp: new Date().toISOString(),
    properties: { pad: 'x'.repeat(1000) },
  }))
  const body = brotliCompressSync(JSON.stringify({ created_at: new Date().toISOString(), batch }))
  const res = await server.request('POST', '/i/v1/analytics/events', {
    rawBody: body,
    headers: {
      authorization: `Bearer ${server.boot.project_api_key}`,
      'content-type': 'application/json',
      'content-encoding': 'br',
      'user-agent': 'posthog-node/5.70.0',
      'posthog-sdk-info': 'posthog-node/5.70.0',
      'posthog-attempt': '1',
      'posthog-request-id': '019cf0a2-7b1c-7d3e-9f00-123456789abc',
      'posthog-request-timestamp': new Date().toISOString(),
    },
  })
  t.equal(res.status, 200, res.text.slice(0, 300))
  t.ok(poolStarted(server.stdout), `a pool thread started for it (${body.length} bytes of brotli)`)
  await until('its events are stored', () => storedEvents(server.dataDir, "event = 'v1 large'").length === 300)
})

t.test('a gzip bomb whose trailer claims a few bytes goes to the pool and is refused in the envelope, and the server goes on', async (t) => {
  const server = await serverFor(t)
  const bomb = gzipSync(Buffer.alloc(64 * 1024 * 1024, 0x20))
  bomb.writeUInt32LE(100, bomb.length - 4)
  const res = await server.request('POST', '/batch/', { rawBody: bomb, headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' } })
  t.equal(res.status, 413, res.text)
  t.same([res.body.type, res.body.code], ['client_error', 'request_too_large'])
  t.ok(poolStarted(server.stdout), 'the pool inflated it past 256 KB, not the request thread')
  const after = await server.request('POST', '/batch/', { body: { api_key: server.boot.project_api_key, batch: [{ event: 'after bomb', distinct_id: 'd', properties: {} }] } })
  t.equal(after.status, 200)
  await until('the next event is stored', () => storedEvents(server.dataDir, "event = 'after bomb'").length === 1)
})
