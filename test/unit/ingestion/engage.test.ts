import t from 'tap'
import LZString from 'lz-string'
import { AppError } from '../../../src/common/errors.js'
import { decodeBody } from '../../../src/ingestion/decode.js'
import { engageToIdentify } from '../../../src/ingestion/engage.js'
import { parsePayload, type ParseContext } from '../../../src/ingestion/parse.js'

const NOW = Date.parse('2024-05-01T12:00:00Z')
const ctx: ParseContext = {
  now: NOW,
  ip: null,
  queryUnderscore: null,
  queryToken: null,
  uuid: () => '00000000-0000-7000-8000-000000000001',
  resolveProject: (token) => {
    if (token === 'phc_a') return { id: 1, anonymizeIps: false }
    throw new AppError('invalid_api_key')
  },
}
const engage: ParseContext = { ...ctx, engage: 'nameless' }
const parse = (body: unknown, context = engage) => parsePayload(JSON.stringify(body), context)

t.test('an engage update becomes an $identify event with its $set, $set_once and $unset', async (t) => {
  const result = parse({ $distinct_id: 'user-9', $token: 'phc_a', $set: { email: 'a@b.c' }, $set_once: { first: 'x' }, $unset: ['old', 3] })
  t.equal(result.teamId, 1, 'the token comes from $token')
  t.equal(result.events.length, 1)
  const [e] = result.events
  t.equal(e.event, '$identify')
  t.equal(e.distinct_id, 'user-9')
  t.same(e.properties.$set, { email: 'a@b.c' })
  t.same(e.properties.$set_once, { first: 'x' })
  t.same(e.properties.$unset, ['old'], 'only string keys are kept')
  t.same(result.warnings, [], 'nothing is dropped')
})

t.test('on /engage/ every event without a name is $identify, in every shape, as in Rust capture', async (t) => {
  const array = parse([
    { $distinct_id: 'a', $token: 'phc_a', $set: { n: 1 } },
    { event: 'clicked', properties: { distinct_id: 'a', token: 'phc_a' } },
    { event: '', distinct_id: 'b', $token: 'phc_a' },
  ])
  t.same(array.events.map((e) => e.event), ['$identify', 'clicked', '$identify'])
  const batch = parse({ api_key: 'phc_a', batch: [{ $distinct_id: 'a', $set: { n: 1 } }, { distinct_id: 'c', properties: { x: 1 } }] })
  t.same(batch.events.map((e) => [e.event, e.distinct_id]), [['$identify', 'a'], ['$identify', 'c']])
  t.throws(() => parse({ $distinct_id: 'a', $token: 'phc_a', properties: [1] }), { code: 'invalid_payload' }, 'properties that are not an object are still refused')
})

t.test('on any other path an event without a name is a silent drop, engage operations or not', async (t) => {
  for (const body of [{ $distinct_id: 'a', $token: 'phc_a', $set: { n: 1 } }, [{ $distinct_id: 'a', $token: 'phc_a', $set: { n: 1 } }]]) {
    const result = parse(body, ctx)
    t.equal(result.events.length, 0)
    t.same(result.warnings.map((w) => w.details.reason), ['missing_event_name'])
  }
})

t.test('engageToIdentify keeps the caller’s own $unset and properties', async (t) => {
  const e = engageToIdentify({ $distinct_id: 'u', $unset: ['a'], properties: { $unset: ['b'], x: 1 } })
  t.same(e.properties, { $unset: ['b'], x: 1 })
  t.equal(e.event, '$identify')
})

t.test('old posthog-js /engage/ bodies (lz64 and base64 forms) decode to engage updates', async (t) => {
  const update = { $distinct_id: 'old-js', $token: 'phc_a', $set: { plan: 'pro' } }
  const json = JSON.stringify(update)
  const lz = decodeBody({
    body: Buffer.from(`data=${encodeURIComponent(LZString.compressToBase64(json))}&compression=lz64`),
    contentType: 'application/x-www-form-urlencoded',
    contentEncoding: undefined,
    compression: null,
    maxBytes: 1 << 20,
  })
  const b64 = decodeBody({
    body: Buffer.from(`data=${encodeURIComponent(Buffer.from(json).toString('base64'))}`),
    contentType: 'application/x-www-form-urlencoded',
    contentEncoding: undefined,
    compression: 'base64',
    maxBytes: 1 << 20,
  })
  for (const text of [lz, b64]) {
    const [e] = parsePayload(text, engage).events
    t.equal(e.event, '$identify')
    t.same(e.properties.$set, { plan: 'pro' })
  }
})
