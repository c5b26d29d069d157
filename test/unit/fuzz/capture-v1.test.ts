/**
 * Capture v1's core under hostile input, in-process: readV1Envelope → decodeContentEncoding → encodeV1Batch,
 * the path a /i/v1/analytics/events request takes on the main thread or in a pool worker. For every generated
 * request the core either gives well-formed events and an answer naming each event of the batch once, or
 * refuses it with a 4xx AppError; it never throws anything else, never hangs, and never plants a property on
 * Object.prototype.
 */
import { brotliCompressSync, deflateRawSync, gzipSync } from 'node:zlib'
import t from 'tap'
import { encodeV1Batch } from '../../../src/ingestion/capture-v1/batch.js'
import { readV1Envelope, type V1Headers } from '../../../src/ingestion/capture-v1/request.js'
import { V1_HEADERS } from '../../helpers/capture-v1.js'
import { decodeContentEncoding } from '../../../src/common/content-encoding.js'
import type { Rng } from './rng.js'
import { fuzzCases, fuzzRun } from './run.js'
import { bombBodies, hostileString, invalidUtf8, mutate, nestedJson, pollutionJson, randomBytesBody, randomJson, truncate } from './values.js'

const RUN = fuzzRun(10_000)
const MAX_BYTES = 2 * 1024 * 1024
t.setTimeout(Math.max(120_000, RUN.cases * 2))
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const NOW = Date.parse('2026-03-19T14:30:00Z')


function v1Event(rng: Rng, i: number): Record<string, unknown> {
  return {
    event: rng.pick(['$pageview', '$identify', 'signed up', '$groupidentify', '$create_alias', '$performance_event', '']),
    uuid: `019cf0a2-0000-7000-8000-${String(rng.chance(0.05) ? 0 : i).padStart(12, '0')}`,
    distinct_id: rng.pick(['u1', 'anonymous', ' ', `u${rng.int(100)}`]),
    timestamp: rng.chance(0.8) ? '2026-03-19T14:29:58.123Z' : rng.pick(['2026-03-19', 'yesterday', '2026-13-45T99:99:99Z', '2026-03-21T14:30:00+02:00']),
    session_id: rng.pick([undefined, null, 's1']),
    options: rng.pick([undefined, null, {}, { process_person_profile: 'false' }, { cookieless_mode: 'maybe' }, { disable_skew_correction: 1 }]),
    properties: { $set: { plan: 'pro' }, $groups: { company: 'acme' }, alias: 'other', $group_type: 'company', $group_key: 'acme' },
  }
}

function batchOf(rng: Rng): Record<string, unknown> {
  const events = Array.from({ length: rng.range(1, 4) }, (_, i) => v1Event(rng, i + 1))
  // mostly well formed, so most bodies reach the per-event rules
  const createdAt = rng.chance(0.9) ? '2026-03-19T14:30:00Z' : rng.pick(['now', 17])
  return { created_at: createdAt, historical_migration: rng.chance(0.9) ? rng.pick([undefined, true]) : 'yes', batch: events }
}

function headersOf(rng: Rng): V1Headers {
  if (!rng.chance(0.1)) return V1_HEADERS
  const headers: Record<string, string | undefined> = { ...V1_HEADERS }
  const key = rng.pick(Object.keys(V1_HEADERS))
  headers[key] = rng.chance(0.3) ? undefined : hostileString(rng)
  return headers as V1Headers
}

/** One hostile request: headers, and a body encoded as its Content-Encoding says (or not). */
function request(rng: Rng): { headers: V1Headers; body: Buffer } {
  const headers = headersOf(rng)
  const inner = batchOf(rng)
  let text: string | Buffer
  switch (rng.int(9)) {
    case 0:
      return { headers: { ...headers, contentEncoding: rng.pick([undefined, 'gzip', 'br', 'deflate']) }, body: rng.chance(0.1) ? rng.pick(bombBodies()) : randomBytesBody(rng) }
    case 1:
      text = truncate(rng, JSON.stringify(inner))
      break
    case 2:
      text = nestedJson(rng.pick([100, 127, 128, 5000]), rng.pick(['object', 'array', 'mixed'] as const), JSON.stringify(inner))
      break
    case 3:
      text = JSON.stringify(mutate(rng, inner))
      break
    case 4:
      text = JSON.stringify({ ...inner, batch: (inner.batch as unknown[]).map((e) => mutate(rng, e)) })
      break
    case 5:
      text = pollutionJson(rng, inner)
      break
    case 6:
      text = invalidUtf8(rng, JSON.stringify(inner))
      break
    case 7:
      text = JSON.stringify({ ...inner, batch: [{ ...v1Event(rng, 9), event: hostileString(rng), distinct_id: hostileString(rng), properties: randomJson(rng, 4) }] })
      break
    default:
      text = JSON.stringify(inner)
  }
  const encoding = rng.pick([undefined, 'gzip', 'deflate', 'br'])
  const raw = Buffer.isBuffer(text) ? text : Buffer.from(text)
  const body = encoding === 'gzip' ? gzipSync(raw) : encoding === 'deflate' ? deflateRawSync(raw) : encoding === 'br' ? brotliCompressSync(raw) : raw
  return { headers: { ...headers, contentEncoding: encoding }, body }
}

t.test(`capture v1 core under ${RUN.cases} hostile requests (FUZZ_SEED=${RUN.seed})`, async (t) => {
  fuzzCases(t, RUN, 'request', (rng) => {
    const input = request(rng)
    const envelope = readV1Envelope(input.headers)
    const text = decodeContentEncoding(input.body, envelope.encoding, MAX_BYTES).toString('utf8')
    const { encoded, response } = encodeV1Batch(text, { now: NOW, ip: '203.0.113.7', project: { id: 7, anonymizeIps: false }, lib: envelope.lib, sentAt: envelope.sentAt })
    const answered = Object.entries(JSON.parse(response).results as Record<string, { result: string }>)
    if (!answered.every(([uuid, r]) => UUID.test(uuid) && ['ok', 'drop', 'warning'].includes(r.result))) throw new Error(`odd answer: ${response.slice(0, 300)}`)
    const kept = answered.filter(([, r]) => r.result !== 'drop').length
    if (encoded.offsets.length !== kept + 1) throw new Error(`${kept} kept in the answer, ${encoded.offsets.length - 1} frames`)
    return `accepted ${kept > 0 ? 'some' : 'none'}`
  })
})
