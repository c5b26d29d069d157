import t from 'tap'
import { AppError } from '../../../src/common/errors.js'
import { MAX_NESTING, nestingExceeds } from '../../../src/common/json.js'
import { parsePayload, type ParseContext } from '../../../src/ingestion/parse.js'

const NOW = Date.parse('2024-05-01T12:00:00Z')
let n = 0
const ctx = (over: Partial<ParseContext> = {}): ParseContext => ({
  now: NOW,
  ip: '203.0.113.9',
  queryUnderscore: null,
  queryToken: null,
  uuid: () => `00000000-0000-7000-8000-${String(++n).padStart(12, '0')}`,
  resolveProject: (token) => {
    if (token === 'phc_a') return { id: 1, anonymizeIps: false }
    if (token === 'phc_anon') return { id: 2, anonymizeIps: true }
    throw new AppError('invalid_api_key')
  },
  ...over,
})
const parse = (body: unknown, over?: Partial<ParseContext>) => parsePayload(typeof body === 'string' ? body : JSON.stringify(body), ctx(over))

t.test('parsePayload accepts the three payload shapes', async (t) => {
  t.equal(parse({ api_key: 'phc_a', event: 'e', distinct_id: 'd' }).events.length, 1, 'one event')
  t.equal(parse([{ event: 'e', properties: { distinct_id: 'd', token: 'phc_a' } }, { event: 'f', properties: { distinct_id: 'd' } }]).events.length, 2, 'an array (posthog-js)')
  const batch = parse({ api_key: 'phc_a', historical_migration: true, batch: [{ event: 'e', properties: { distinct_id: 'd' } }] })
  t.equal(batch.events.length, 1)
  t.equal(batch.historical, true)
})

t.test('parsePayload resolves fields as PostHog capture does', async (t) => {
  const [e] = parse({
    api_key: 'phc_a',
    event: 'x'.repeat(250),
    distinct_id: 42.5,
    uuid: 'ABCDEF01-2345-6789-ABCD-EF0123456789',
    $set: { a: 1 },
    $set_once: { b: 2 },
    properties: { $set: { c: 3 } },
  }).events
  t.equal(e.event.length, 200, 'event names are cut to 200 characters')
  t.equal(e.distinct_id, '42.5', 'numeric ids become text')
  t.equal(e.uuid, 'abcdef01-2345-6789-abcd-ef0123456789', 'uuids are normalised')
  t.same(e.properties.$set, { c: 3, a: 1 }, 'top-level $set joins properties.$set')
  t.same(e.properties.$set_once, { b: 2 })
  t.equal(e.properties.$ip, '203.0.113.9', '$ip comes from the request')
  t.equal(e.team_id, 1)
  t.equal(e.timestamp, NOW)
  const [own] = parse({ api_key: 'phc_a', event: 'e', distinct_id: 'd', properties: { $ip: '1.2.3.4' } }).events
  t.equal(own.properties.$ip, '1.2.3.4', 'a client $ip is kept')
  const [anon] = parse({ api_key: 'phc_anon', event: 'e', distinct_id: 'd', properties: { $ip: '1.2.3.4' } }).events
  t.notOk('$ip' in anon.properties, 'projects that anonymise IPs keep none')
  const [long] = parse({ api_key: 'phc_a', event: 'e', distinct_id: 'i'.repeat(300) }).events
  t.equal(long.distinct_id.length, 200)
})

t.test('parsePayload drops events silently with a warning', async (t) => {
  const result = parse({
    api_key: 'phc_a',
    batch: [
      { properties: { distinct_id: 'd' } },
      { event: null, properties: { distinct_id: 'd' } },
      { event: 'e' },
      { event: 'e', distinct_id: null },
      { event: 'e', distinct_id: '   ' },
      { event: '$performance_event', distinct_id: 'd' },
      { event: 'kept', distinct_id: 'd' },
    ],
  })
  t.equal(result.events.length, 1)
  t.same(
    result.warnings.map((w) => w.details.reason),
    ['missing_event_name', 'missing_event_name', 'missing_distinct_id', 'missing_distinct_id', 'empty_distinct_id', 'performance_event'],
  )
})

t.test('parsePayload refuses malformed requests', async (t) => {
  const cases: Array<[string, unknown, string]> = [
    ['not JSON', '{"a":', 'invalid_payload'],
    ['a string', '"x"', 'invalid_payload'],
    ['null event', { api_key: 'phc_a', batch: [null] }, 'invalid_payload'],
    ['non-object event', { api_key: 'phc_a', batch: [1] }, 'invalid_payload'],
    ['properties as a list', { api_key: 'phc_a', event: 'e', distinct_id: 'd', properties: [] }, 'invalid_payload'],
    ['bad uuid', { api_key: 'phc_a', event: 'e', distinct_id: 'd', uuid: 'x' }, 'invalid_payload'],
    ['numeric uuid', { api_key: 'phc_a', event: 'e', distinct_id: 'd', uuid: 5 }, 'invalid_payload'],
    ['historical_migration not boolean', { api_key: 'phc_a', historical_migration: 'yes', batch: [{ event: 'e', distinct_id: 'd' }] }, 'invalid_payload'],
    // Rust capture's EmptyBatch, checked before the key
    ['an empty batch', { api_key: 'phc_a', batch: [] }, 'invalid_payload'],
    ['an empty array without a key', [], 'invalid_payload'],
    ['unknown key', { api_key: 'phc_zzz', event: 'e', distinct_id: 'd' }, 'invalid_api_key'],
    ['no key', { event: 'e', distinct_id: 'd' }, 'invalid_api_key'],
    ['inconsistent keys', [{ event: 'e', distinct_id: 'd', api_key: 'phc_a' }, { event: 'e', distinct_id: 'd', api_key: 'phc_anon' }], 'invalid_api_key'],
  ]
  for (const [name, body, code] of cases) t.throws(() => parse(body), { code }, name)
})

t.test('fields read as Rust capture reads them', async (t) => {
  const one = (fields: Record<string, unknown>) => parse({ api_key: 'phc_a', event: 'e', distinct_id: 'd', ...fields }).events[0]
  t.match(one({ uuid: '' }).uuid, /^00000000-0000-7000-8000-\d{12}$/, 'an empty uuid is none: the event gets a new one')
  const canonical = '0190a1b2-c3d4-7e5f-8a6b-7c8d9e0f1a2b'
  for (const written of ['{0190A1B2-C3D4-7E5F-8A6B-7C8D9E0F1A2B}', 'urn:uuid:0190a1b2-c3d4-7e5f-8a6b-7c8d9e0f1a2b', '0190a1b2c3d47e5f8a6b7c8d9e0f1a2b']) {
    t.equal(one({ uuid: written }).uuid, canonical, written)
  }
  t.equal(parse({ api_key: 'phc_a', historical_migration: null, batch: [{ event: 'e', distinct_id: 'd' }] }).historical, false, 'historical_migration null is absent')
  const emoji = '😀'.repeat(150)
  t.equal(one({ distinct_id: emoji }).distinct_id, emoji, '150 characters outside the BMP are under 200 characters')
  t.equal(one({ distinct_id: 'a'.repeat(199) + '😀x' }).distinct_id, 'a'.repeat(199) + '😀', 'the cut never splits a surrogate pair')
})

t.test('an integer distinct id past 2^53 keeps its literal, as Rust capture keeps it', async (t) => {
  const text = '{"api_key":"phc_a","batch":[{"event":"a","distinct_id":1234567890123456789},{"event":"b","properties":{"distinct_id":1234567890123456790,"n":12345678901234567890}},{"event":"c","$distinct_id":42}]}'
  const events = parse(text).events
  t.same(events.map((e) => e.distinct_id), ['1234567890123456789', '1234567890123456790', '42'], 'two ids one double apart stay two ids')
  t.equal(events[1].properties.distinct_id, '1234567890123456790', 'the property carries the literal too')
  t.equal(events[1].properties.n, 12345678901234567000, "other numbers are JSON.parse's")
})

t.test('NaN and Infinity from Python clients read as null', async (t) => {
  const [e] = parse('{"api_key":"phc_a","event":"e","distinct_id":"d","properties":{"a":NaN,"b":-Infinity,"c":"NaN stays"}}').events
  t.same(e.properties, { a: null, b: null, c: 'NaN stays', $ip: '203.0.113.9' })
})

t.test('nesting is limited', async (t) => {
  t.notOk(nestingExceeds(JSON.parse('{"a":"[[[[[[["}'), 1), 'brackets inside strings do not count')
  t.notOk(nestingExceeds(JSON.parse('[[[]]]'), 3), 'three levels are within a limit of three')
  t.ok(nestingExceeds(JSON.parse('[[[[]]]]'), 3))
  t.ok(nestingExceeds(JSON.parse('{"a":1,"b":[2,{"c":{"d":null}}]}'), 3), 'objects and arrays count alike, past a first member that is not deep')
  t.ok(nestingExceeds(JSON.parse('{"__proto__":{"x":{}}}'), 2), 'an own __proto__ key is walked like any other')
  const deep = (levels: number) => `{"api_key":"phc_a","event":"e","distinct_id":"d","properties":{"x":${'['.repeat(levels)}${']'.repeat(levels)}}}`
  // serde_json's limit, so Rust capture's: 127 levels pass, the 128th is refused
  t.equal(MAX_NESTING, 127)
  t.equal(parse(deep(MAX_NESTING - 2)).events.length, 1, 'the limit counts the body and the properties object')
  t.throws(() => parse(deep(MAX_NESTING - 1)), { code: 'invalid_payload', detail: /nest at most 127 levels/ })
  t.throws(() => parse(deep(200_000)), { code: 'invalid_payload', detail: /nest at most/ }, 'far deeper than any stack')
})
