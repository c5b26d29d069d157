import t from 'tap'
import { readDecideRequest } from '../../../src/flags/request.js'

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

t.test('a /decide body that is not a JSON object is refused with invalid_payload', async (t) => {
  for (const body of [null, [], 'text', 3]) t.throws(() => readDecideRequest(body), { code: 'invalid_payload' })
})
