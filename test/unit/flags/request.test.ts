import t from 'tap'
import { readDecideRequest, requestRuntime, runtimeOf } from '../../../src/flags/request.js'

t.test("a /decide body's fields are read under each name PostHog's flag service accepts, the first given winning", async (t) => {
  t.equal(readDecideRequest({ token: 'a', $token: 'b', api_key: 'c' }).token, 'a')
  t.equal(readDecideRequest({ token: null, $token: 'b', api_key: 'c' }).token, 'b', 'null counts as absent')
  t.equal(readDecideRequest({ api_key: 'c' }).token, 'c', 'the third name')
  t.equal(readDecideRequest({ token: null, $token: null, api_key: null }).token, null)
  t.equal(readDecideRequest({ token: '' }).token, null, 'an empty token is none')
  t.equal(readDecideRequest({ $distinct_id: 'd' }).distinctId, 'd')
  t.equal(readDecideRequest({ distinct_id: 42, $distinct_id: 'd' }).distinctId, '42', 'a number is read as its JSON text')
  t.same(readDecideRequest({ $properties: { plan: 'pro' } }).personProperties, { plan: 'pro' })
  t.same(readDecideRequest({ $groups: { company: 7 } }).groups, { company: '7' })
  t.same(readDecideRequest({ $group_properties: { company: { size: 3 } } }).groupProperties, { company: { size: 3 } })
  t.equal(readDecideRequest({ anon_distinct_id: 'anon' }).anonDistinctId, 'anon')
  t.equal(readDecideRequest({ person_properties: { $anon_distinct_id: 'p' } }).anonDistinctId, 'p', 'or from the person properties')
  t.same(readDecideRequest({ flag_keys: ['a', 1, 'b'] }).flagKeys, ['a', 'b'])
  t.same(readDecideRequest({ flag_keys_to_evaluate: ['x'], flag_keys: ['y'] }).flagKeys, ['x'])
  t.equal(readDecideRequest({}).flagKeys, undefined)
})

t.test("the device id is the body's device_id or $device_id, else person_properties.$device_id, never an empty one", async (t) => {
  t.equal(readDecideRequest({ device_id: 'top' }).deviceId, 'top')
  t.equal(readDecideRequest({ $device_id: 'dollar' }).deviceId, 'dollar')
  t.equal(readDecideRequest({ device_id: 'top', person_properties: { $device_id: 'prop' } }).deviceId, 'top', 'the body wins')
  t.equal(readDecideRequest({ person_properties: { $device_id: 'prop' } }).deviceId, 'prop', 'for SDKs that send it only as a property')
  t.equal(readDecideRequest({ device_id: '', person_properties: { $device_id: 'prop' } }).deviceId, 'prop', 'an empty one is none')
  t.equal(readDecideRequest({ device_id: 7, person_properties: { $device_id: '' } }).deviceId, undefined)
})

t.test('a /decide body that is not a JSON object is refused with invalid_payload', async (t) => {
  for (const body of [null, [], 'text', 3]) t.throws(() => readDecideRequest(body), { code: 'invalid_payload' })
})

t.test('a distinct id is cut at 200 characters, never inside a surrogate pair', async (t) => {
  t.equal(readDecideRequest({ distinct_id: '😀'.repeat(150) }).distinctId, '😀'.repeat(150))
  t.equal(readDecideRequest({ distinct_id: 'a'.repeat(199) + '😀x' }).distinctId, 'a'.repeat(199) + '😀')
})

t.test("the caller's runtime is read as PostHog's flag service detects it", async (t) => {
  t.same(['client', 'SERVER', 'all', 'edge', ''].map(runtimeOf), ['client', 'server', 'all', 'all', 'all'])
  t.equal(readDecideRequest({ evaluation_runtime: 'server' }).evaluationRuntime, 'server')
  const cases: Array<[string | null, Record<string, string>, string | null]> = [
    ['server', { 'user-agent': 'Mozilla/5.0' }, 'server'],
    ['Client', {}, 'client'],
    ['whatever', { 'user-agent': 'posthog-node/5.0.0' }, 'all'],
    [null, { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) Chrome/120' }, 'client'],
    [null, { 'user-agent': 'posthog-node/5.8.0' }, 'server'],
    [null, { 'user-agent': 'posthog-python/6.0' }, 'server'],
    [null, { 'user-agent': 'python-requests/2.32' }, 'server'],
    [null, { 'user-agent': 'curl/8.5.0' }, 'server'],
    [null, { 'user-agent': 'posthog-ios/3.0.0' }, 'client'],
    [null, { 'user-agent': 'node' }, null],
    [null, { 'user-agent': 'node', origin: 'https://shop.example' }, 'client'],
    [null, { referer: 'https://shop.example/' }, 'client'],
    [null, { 'sec-fetch-mode': 'cors' }, 'client'],
    [null, {}, null],
  ]
  for (const [explicit, headers, expected] of cases) t.equal(requestRuntime(explicit, headers), expected, `${explicit} ${JSON.stringify(headers)}`)
})
