/** Capture v1's request checks and batch parse, against what Rust capture v1 accepts, drops and refuses. */
import t from 'tap'
import { brotliCompressSync, deflateRawSync, deflateSync, gzipSync } from 'node:zlib'
import { encodeV1Batch, parseV1Batch, type V1ParseContext } from '../../../src/ingestion/capture-v1/batch.js'
import { readV1Envelope, sdkLib, type V1Headers } from '../../../src/ingestion/capture-v1/request.js'
import { V1_HEADERS } from '../../helpers/capture-v1.js'
import { decodeContentEncoding } from '../../../src/common/content-encoding.js'
import { decodeEventParts } from '../../../src/ingestion/frames.js'
import { HEADER_BYTES } from '../../../src/ingestion/spool/format.js'
import { parseRfc3339 } from '../../../src/ingestion/timestamps.js'

const NOW = Date.parse('2026-03-19T14:30:00Z')
const ctx = (over: Partial<V1ParseContext> = {}): V1ParseContext => ({
  now: NOW,
  ip: '203.0.113.9',
  project: { id: 7, anonymizeIps: false },
  lib: { name: 'posthog-node', version: '5.70.0' },
  sentAt: NOW,
  ...over,
})
let n = 0
const uuid = () => `019cf0a2-0000-7000-8000-${String(++n).padStart(12, '0')}`
const event = (over: Record<string, unknown> = {}) => ({ event: 'signed up', uuid: uuid(), distinct_id: 'user-1', timestamp: '2026-03-19T14:29:58.123Z', options: {}, properties: {}, ...over })
const body = (batch: unknown[], over: Record<string, unknown> = {}) => JSON.stringify({ created_at: '2026-03-19T14:30:00.000Z', batch, ...over })
const parse = (batch: unknown[], over: Partial<V1ParseContext> = {}) => parseV1Batch(body(batch), ctx(over))
const results = (batch: unknown[], over: Partial<V1ParseContext> = {}) => JSON.parse(parse(batch, over).response).results

t.test('readV1Envelope takes the key from Authorization: Bearer and reads the PostHog-* headers', async (t) => {
  const envelope = readV1Envelope(V1_HEADERS)
  t.same(envelope, { token: 'phc_test', lib: { name: 'posthog-node', version: '5.70.0' }, sentAt: NOW, encoding: null })
  t.equal(readV1Envelope({ ...V1_HEADERS, authorization: 'bEaReR   phc_test  ' }).token, 'phc_test', 'the scheme in any case, the key trimmed')
  t.equal(readV1Envelope({ ...V1_HEADERS, contentType: 'Application/JSON; charset=utf-8', contentEncoding: 'GZIP' }).encoding, 'gzip')
  t.same(sdkLib('posthog/sub-sdk/2.3.4'), { name: 'posthog/sub-sdk', version: '2.3.4' }, 'split at the last slash')
  for (const bad of ['no-slash', '/1.0.0', 'posthog-rs/', ' / ', `posthog-rs/${'9'.repeat(200)}`]) t.equal(sdkLib(bad), null, `no $lib from ${JSON.stringify(bad.slice(0, 20))}`)
})

t.test('readV1Envelope refuses requests as Rust capture v1 does, in its order', async (t) => {
  const refused = (over: Partial<V1Headers>, code: string, status: number, detail?: RegExp) => {
    const headers = { ...V1_HEADERS, ...over }
    for (const key of Object.keys(over) as Array<keyof V1Headers>) if (over[key] === undefined) delete headers[key]
    t.throws(() => readV1Envelope(headers), { code, status, ...(detail ? { detail } : {}) }, `${JSON.stringify(over)} → ${status} ${code}`)
  }
  refused({ authorization: undefined, sdkInfo: undefined }, 'invalid_api_key', 401)
  refused({ sdkInfo: undefined, userAgent: undefined }, 'invalid_payload', 400, /PostHog-Sdk-Info, user-agent/)
  refused({ attempt: undefined }, 'invalid_payload', 400, /PostHog-Attempt/)
  refused({ authorization: 'Basic abc' }, 'invalid_payload', 400, /Bearer/)
  refused({ authorization: 'Bearer   ' }, 'invalid_api_key', 401)
  refused({ authorization: 'Bearer phx_personal' }, 'invalid_api_key', 401)
  refused({ contentType: 'text/plain' }, 'unsupported_media_type', 415)
  refused({ contentEncoding: 'lz4' }, 'unsupported_media_type', 415)
  refused({ requestId: 'not-a-uuid' }, 'invalid_payload', 400, /Request-Id/)
  refused({ attempt: '0' }, 'invalid_payload', 400, /Attempt/)
  refused({ attempt: 'abc' }, 'invalid_payload', 400, /Attempt/)
  refused({ requestTimestamp: '1710858600' }, 'invalid_payload', 400, /Request-Timestamp/)
  refused({ requestTimestamp: '2026-03-19' }, 'invalid_payload', 400, /Request-Timestamp/)
})

t.test('parseRfc3339 takes RFC 3339 and nothing looser', async (t) => {
  t.equal(parseRfc3339('2026-03-19T14:29:58.123Z'), Date.parse('2026-03-19T14:29:58.123Z'))
  t.equal(parseRfc3339('2026-03-19t16:29:58+02:00'), Date.parse('2026-03-19T14:29:58Z'))
  t.equal(parseRfc3339('2026-03-19 14:29:58.123456789z'), Date.parse('2026-03-19T14:29:58.123Z'))
  for (const bad of ['2026-03-19', '2026-03-19T14:29:58', '1710858600000', '2026-02-30T00:00:00Z', '2026-03-19T14:29:58+0200', 'Tue, 19 Mar 2026 14:29:58 GMT']) {
    t.equal(parseRfc3339(bad), null, bad)
  }
})

t.test('decodeContentEncoding reads what the Content-Encoding names, bounded', async (t) => {
  const text = body([event()])
  for (const [name, encoded, encoding] of [
    ['identity', Buffer.from(text), null],
    ['gzip', gzipSync(text), 'gzip'],
    ['gzip without the header (magic bytes)', gzipSync(text), null],
    ['raw deflate (Rust capture’s reading)', deflateRawSync(text), 'deflate'],
    ['zlib deflate (HTTP’s reading)', deflateSync(text), 'deflate'],
    ['brotli', brotliCompressSync(text), 'br'],
  ] as const) {
    t.equal(decodeContentEncoding(encoded, encoding, 1 << 20).toString('utf8'), text, name)
  }
  t.throws(() => decodeContentEncoding(gzipSync('x'.repeat(5000)), 'gzip', 4096), { code: 'request_too_large' }, 'a bomb stops at the limit')
  t.throws(() => decodeContentEncoding(brotliCompressSync('x'.repeat(5000)), 'br', 4096), { code: 'request_too_large' })
  t.throws(() => decodeContentEncoding(Buffer.from('not gzip'), 'gzip', 4096), { code: 'invalid_payload' })
  t.throws(() => decodeContentEncoding(Buffer.from('not brotli at all'), 'br', 4096), { code: 'invalid_payload' })
  t.throws(() => decodeContentEncoding(Buffer.alloc(0), null, 4096), { code: 'invalid_payload' }, 'an empty body')
})

t.test('parseV1Batch turns v1 events into the events /batch/ gives, with v1 fields written into properties', async (t) => {
  const e = event({
    uuid: '  019CF0A2-7B1C-7D3E-9F00-ABCDEF012345 ',
    distinct_id: '  user-1 ',
    session_id: 'sess-1',
    window_id: 'win-1',
    options: { cookieless_mode: 'false', disable_skew_correction: 0, product_tour_id: 42, process_person_profile: 'TRUE' },
    properties: { plan: 'pro', $lib: 'client-lib', $set: { email: 'a@example.com' } },
  })
  const { parsed, response } = parseV1Batch(body([e], { historical_migration: true }), ctx())
  const uuid = '019cf0a2-7b1c-7d3e-9f00-abcdef012345'
  t.same(JSON.parse(response), { results: { [uuid]: { result: 'ok' } } }, 'results keyed by the canonical uuid')
  t.equal(parsed.historical, true, 'historical_migration sends the batch to the historical lane')
  t.equal(parsed.teamId, 7)
  const [captured] = parsed.events
  t.match(captured, { uuid, event: 'signed up', distinct_id: 'user-1', team_id: 7, now: NOW })
  t.same(captured.properties, {
    plan: 'pro',
    $lib: 'posthog-node',
    $set: { email: 'a@example.com' },
    $session_id: 'sess-1',
    $window_id: 'win-1',
    $cookieless_mode: false,
    $ignore_sent_at: false,
    $product_tour_id: '42',
    $process_person_profile: true,
    $lib_version: '5.70.0',
    $ip: '203.0.113.9',
  })
  t.same(parse([event({ properties: { $ip: '1.2.3.4' } })], { project: { id: 7, anonymizeIps: true } }).parsed.events[0].properties.$ip, undefined, 'no $ip for a project that anonymises IPs')
  t.notOk('$lib' in parse([event()], { lib: null }).parsed.events[0].properties, 'no $lib without a readable PostHog-Sdk-Info')
  t.same(parse([event({ properties: undefined, options: undefined })]).parsed.events[0].properties, { $lib: 'posthog-node', $lib_version: '5.70.0', $ip: '203.0.113.9' }, 'properties and options may be absent')
})

t.test('parseV1Batch corrects event times by the request clock, unless the event opts out', async (t) => {
  const skewed = ctx({ sentAt: NOW + 60_000 }) // the client's clock is a minute fast
  const [fast] = parseV1Batch(body([event({ timestamp: '2026-03-19T14:31:00Z' })]), skewed).parsed.events
  t.equal(fast.timestamp, NOW, 'a minute of skew is taken off')
  const [raw] = parseV1Batch(body([event({ timestamp: '2026-03-19T14:31:00Z', options: { disable_skew_correction: true } })]), skewed).parsed.events
  t.equal(raw.timestamp, NOW + 60_000, 'disable_skew_correction keeps the time as sent')
  const future = parseV1Batch(body([event({ timestamp: '2026-03-21T14:30:00Z' })]), ctx()).parsed
  t.equal(future.events[0].timestamp, NOW, 'more than 23 hours ahead is now')
  t.match(future.warnings, [{ type: 'event_timestamp_in_future' }])
})

t.test('parseV1Batch drops single events with v1’s reasons and keeps the rest', async (t) => {
  const cases: Array<[string, Record<string, unknown>]> = [
    ['dropped_performance_event', { event: '$performance_event' }],
    ['missing_event_name', { event: '' }],
    ['event_name_too_long', { event: 'é'.repeat(101) }],
    ['missing_distinct_id', { distinct_id: '   ' }],
    ['distinct_id_too_large', { distinct_id: 'x'.repeat(201) }],
    ['invalid_event_timestamp', { timestamp: '2026-03-19' }],
    ['malformed_event_properties', { properties: [1, 2] }],
    ['malformed_event_properties', { properties: null }],
    ['invalid_options', { options: { cookieless_mode: 'maybe' } }],
    ['invalid_options', { options: 'yes' }],
  ]
  const kept = event({ event: 'é'.repeat(100), distinct_id: 'x'.repeat(200) })
  const batch = [kept, ...cases.map(([, over]) => event(over))]
  const { parsed, response } = parse(batch)
  const got = JSON.parse(response).results
  t.same(Object.keys(got), batch.map((e) => e.uuid), 'one result per event, in the batch’s order')
  t.same(got[kept.uuid], { result: 'ok' }, '200 bytes of name and of distinct id are kept')
  cases.forEach(([reason], i) => t.same(got[batch[i + 1].uuid], { result: 'drop', details: reason }, reason))
  t.equal(parsed.events.length, 1)
  t.same(
    parsed.warnings.map((w) => [w.type, w.details.reason]),
    cases.map(([reason]) => ['event_dropped', reason]),
    'each drop is an event_dropped warning',
  )
  const nullOptions = event({ options: { cookieless_mode: null, product_tour_id: null } })
  t.same(results([nullOptions])[nullOptions.uuid], { result: 'ok' }, 'null options are as good as absent')
})

t.test('parseV1Batch keeps placeholder distinct ids without person processing', async (t) => {
  for (const id of ['anonymous', ' NULL ', 'undefined', '[object Object]', '0']) {
    const e = event({ distinct_id: id, options: { process_person_profile: true } })
    const { parsed, response } = parse([e])
    t.same(JSON.parse(response).results[e.uuid], { result: 'warning', details: 'person_processing_disabled' }, id)
    t.equal(parsed.events[0].properties.$process_person_profile, false, `${id}: personless`)
  }
})

t.test('parseV1Batch refuses the whole batch where serde or v1’s batch checks would', async (t) => {
  const refused = (text: string, detail: RegExp) => t.throws(() => parseV1Batch(text, ctx()), { code: 'invalid_payload', status: 400, detail }, detail.source)
  const one = uuid()
  refused('not json {{{', /Malformed/)
  refused('[]', /JSON object/)
  refused(JSON.stringify({ batch: [event()] }), /created_at is missing/)
  refused(body([event()], { created_at: 'yesterday' }), /created_at is not an RFC 3339/)
  refused(body([]), /no events/)
  refused(JSON.stringify({ created_at: '2026-03-19T14:30:00Z' }), /batch is missing/)
  refused(body([event()], { historical_migration: null }), /historical_migration/)
  refused(body([event()], { capture_internal: 'yes' }), /capture_internal/)
  refused(body([null]), /batch\[0\] must be an object/)
  for (const field of ['event', 'uuid', 'distinct_id', 'timestamp']) {
    const e: Record<string, unknown> = event()
    delete e[field]
    refused(body([event(), e]), new RegExp(`batch\\[1\\]\\.${field} is missing`))
  }
  refused(body([event({ distinct_id: 42 })]), /distinct_id must be a string, not number/)
  refused(body([event({ session_id: 5 })]), /session_id must be a string/)
  refused(body([event({ uuid: ' ' })]), /empty uuid/)
  refused(body([event({ uuid: 'abc' })]), /not a UUID/)
  refused(body([event({ uuid: one }), event({ uuid: one.toUpperCase() })]), /more than once/)
  refused(body([event({ properties: { deep: JSON.parse('['.repeat(130) + ']'.repeat(130)) } })]), /nest/)
})

t.test('encodeV1Batch frames events as /batch/ does, so the consumer reads them back whole', async (t) => {
  const e = event({ properties: { plan: 'pro', $set: { email: 'a@example.com' } } })
  const { encoded } = encodeV1Batch(body([e, event({ event: '' })]), ctx())
  t.equal(encoded.offsets.length, 2, 'one frame: the dropped event has none')
  t.same(encoded.dropReasons, ['missing_event_name'])
  const frame = Buffer.from(encoded.frames.buffer, encoded.frames.byteOffset + HEADER_BYTES, encoded.offsets[1] - HEADER_BYTES)
  const { event: stored } = decodeEventParts(frame)
  t.match(stored, { uuid: e.uuid, event: 'signed up', distinct_id: 'user-1', team_id: 7 })
  t.same(stored.properties.$set, { email: 'a@example.com' })
  t.equal(stored.properties.plan, 'pro')
})
