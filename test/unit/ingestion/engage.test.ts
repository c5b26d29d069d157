import t from 'tap'
import LZString from 'lz-string'
import { AppError } from '../../../src/common/errors.js'
import { decodeBody } from '../../../src/ingestion/decode.js'
import { engageToIdentify, isEngageObject } from '../../../src/ingestion/engage.js'
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
const parse = (body: unknown) => parsePayload(JSON.stringify(body), ctx)

t.test('isEngageObject recognises Mixpanel engage updates only', async (t) => {
  t.ok(isEngageObject({ $distinct_id: 'u', $token: 'phc_a', $set: { a: 1 } }))
  t.ok(isEngageObject({ distinct_id: 'u', $set_once: { a: 1 } }))
  t.ok(isEngageObject({ $distinct_id: 'u', $unset: ['a'] }))
  t.ok(isEngageObject({ $distinct_id: 'u', $add: { n: 1 } }), 'any engage operation')
  t.notOk(isEngageObject({ event: 'e', $distinct_id: 'u', $set: { a: 1 } }), 'an event with a name stays an event')
  t.notOk(isEngageObject({ $token: 'phc_a', $set: { a: 1 } }), 'no distinct id')
  t.notOk(isEngageObject({ $distinct_id: 'u', properties: { a: 1 } }), 'no operation')
})

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

t.test('engage updates in an array are converted one by one; batch items are not', async (t) => {
  const array = parse([
    { $distinct_id: 'a', $token: 'phc_a', $set: { n: 1 } },
    { event: 'clicked', properties: { distinct_id: 'a', token: 'phc_a' } },
  ])
  t.same(array.events.map((e) => e.event), ['$identify', 'clicked'])
  const batch = parse({ api_key: 'phc_a', batch: [{ $distinct_id: 'a', $set: { n: 1 } }] })
  t.equal(batch.events.length, 0, 'a batch item without a name is dropped, as before')
  t.equal(batch.warnings[0].details.reason, 'missing_event_name')
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
    const [e] = parsePayload(text, ctx).events
    t.equal(e.event, '$identify')
    t.same(e.properties.$set, { plan: 'pro' })
  }
})
