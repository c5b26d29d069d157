import t from 'tap'
import { request as httpRequest } from 'node:http'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { serverFor, type TestServer } from '../../helpers/server.js'
import { waitForEvents } from '../ingestion/suite.js'
import { MULTIVARIATE_55, MULTIVARIATE_VARIANTS, SIMPLE_FLAG_45 } from '../../unit/flags/fixtures/vectors.js'

const LETTERS: Record<string, string | false> = { A: 'first-variant', B: 'second-variant', C: 'third-variant', D: 'fourth-variant', E: 'fifth-variant', '-': false }

async function createFlag(server: TestServer, body: Record<string, unknown>): Promise<any> {
  const res = await server.api('POST', `/api/projects/${server.boot.project_id}/feature_flags/`, body)
  if (res.status !== 201) throw new Error(`flag creation failed: ${res.status} ${res.text}`)
  return res.body
}

function decide(server: TestServer, body: Record<string, unknown>, query = 'v=3', headers: Record<string, string> = {}) {
  return server.request('POST', `/decide/?${query}`, { body: { token: server.boot.project_api_key, ...body }, headers })
}

async function waitForPerson(server: TestServer, distinctId: string, check: (props: any) => boolean): Promise<void> {
  const deadline = Date.now() + 15_000
  while (Date.now() < deadline) {
    const res = await server.api('GET', `/api/projects/${server.boot.project_id}/persons/?distinct_id=${encodeURIComponent(distinctId)}`)
    if (res.body.results?.[0] && check(res.body.results[0].properties)) return
    await new Promise((r) => setTimeout(r, 100))
  }
  throw new Error(`person ${distinctId} never reached the expected state`)
}

t.test('/decide', async (t) => {
  const server = await serverFor(t)
  const capture = (batch: unknown[]) => server.request('POST', '/batch/', { body: { api_key: server.boot.project_api_key, batch } })

  await createFlag(server, { key: 'simple-flag', filters: { groups: [{ properties: [], rollout_percentage: 45 }], payloads: { true: '{"color":"red"}' } } })
  await createFlag(server, { key: 'multivariate-flag', filters: { groups: [{ properties: [], rollout_percentage: 55 }], multivariate: { variants: MULTIVARIATE_VARIANTS } } })

  t.test('matches PostHog bit for bit on the consistency vectors', async (t) => {
    const simple = SIMPLE_FLAG_45
    const multi = MULTIVARIATE_55
    const mismatches: string[] = []
    for (let i = 0; i < 1000; i += 3) {
      const res = await decide(server, { distinct_id: `distinct_id_${i}` })
      const flags = res.body.featureFlags
      if (flags['simple-flag'] !== (simple[i] === '1')) mismatches.push(`simple ${i}`)
      if (flags['multivariate-flag'] !== LETTERS[multi[i]]) mismatches.push(`multi ${i}`)
    }
    t.same(mismatches, [], '334 ids checked over HTTP')
  })

  t.test('answers the contract’s v3 shape with payloads as stored', async (t) => {
    const res = await decide(server, { distinct_id: 'distinct_id_1' })
    t.equal(res.status, 200)
    t.match(res.body, {
      config: { enable_collect_everything: true },
      editorParams: {},
      errorComputingFlags: false,
      isAuthenticated: false,
      supportedCompression: ['gzip', 'lz64'],
      featureFlags: { 'simple-flag': true, 'multivariate-flag': 'second-variant' },
      featureFlagPayloads: { 'simple-flag': '{"color":"red"}' },
    })
  })

  t.test('speaks every version and /flags', async (t) => {
    const v1 = await decide(server, { distinct_id: 'distinct_id_1' }, 'v=1')
    t.same(v1.body.featureFlags.sort(), ['multivariate-flag', 'simple-flag'])
    const v2 = await decide(server, { distinct_id: 'distinct_id_0' }, 'v=2')
    t.same(v2.body.featureFlags, { 'multivariate-flag': 'second-variant' }, 'v2 lists enabled flags only')
    const v4 = await decide(server, { distinct_id: 'distinct_id_1' }, 'v=4')
    t.match(v4.body.flags['simple-flag'], {
      key: 'simple-flag',
      enabled: true,
      variant: null,
      reason: { code: 'condition_match', condition_index: 0, description: 'Matched condition set 1' },
      metadata: { id: Number, version: 1, payload: '{"color":"red"}' },
    })
    const flags = await server.request('POST', '/flags/?v=2&config=true', { body: { token: server.boot.project_api_key, distinct_id: 'distinct_id_0' } })
    t.match(flags.body, { supportedCompression: ['gzip', 'gzip-js'], flags: { 'simple-flag': { enabled: false, reason: { code: 'out_of_rollout_bound' } } } })
    // /flags?v=4 (posthog-node ≥ 5.74): one typed value per flag, the variant named again, config format 1
    const typed = await server.request('POST', '/flags/?v=4', { body: { token: server.boot.project_api_key, distinct_id: 'distinct_id_1' } })
    t.same(typed.body.flags['multivariate-flag'], {
      key: 'multivariate-flag',
      value: 'second-variant',
      reason: { code: 'condition_match', condition_index: 0, description: 'Matched condition set 1' },
      metadata: { id: typed.body.flags['multivariate-flag'].metadata.id, version: 1, config_version: 1, description: null, payload: null, has_experiment: false, variant_key: 'second-variant' },
    })
    t.match(typed.body.flags['simple-flag'], { value: true, metadata: { payload: '{"color":"red"}' } })
    t.notOk('enabled' in typed.body.flags['simple-flag'] || 'variant_key' in typed.body.flags['simple-flag'].metadata, 'no legacy fields, no variant key without a variant')
    t.notOk('supportedCompression' in typed.body, 'config only when asked for')
    const v3 = await server.request('POST', '/flags/?v=3', { body: { token: server.boot.project_api_key, distinct_id: 'distinct_id_1' } })
    t.equal(v3.body.flags['simple-flag'].value, true, 'v3 and up are typed, as PostHog serves them')
    const get = await server.request('GET', '/decide/?v=3')
    t.same(get.body.featureFlags, {}, 'a bare GET gets the config and no flags')
    const options = await server.request('OPTIONS', '/decide/', { headers: { origin: 'https://app.example', 'access-control-request-method': 'POST' } })
    t.equal(options.status, 204)
    t.equal(options.headers.get('access-control-allow-origin'), 'https://app.example')
    const browser = await server.request('POST', '/decide/?v=3', { body: { token: server.boot.project_api_key, distinct_id: 'distinct_id_0' }, headers: { origin: 'https://app.example' } })
    t.equal(browser.headers.get('access-control-allow-origin'), 'https://app.example', 'a batched POST answer carries the CORS headers too')
  })

  t.test('reads form, base64 and gzip bodies as SDKs send them', async (t) => {
    const json = JSON.stringify({ token: server.boot.project_api_key, distinct_id: 'distinct_id_1' })
    const form = await server.request('POST', '/decide/?v=3&compression=base64', {
      rawBody: `data=${encodeURIComponent(Buffer.from(json).toString('base64'))}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    })
    t.equal(form.body.featureFlags['simple-flag'], true)
  })

  t.test('refuses bad requests with the contract’s errors', async (t) => {
    const noKey = await server.request('POST', '/decide/?v=3', { body: { distinct_id: 'x' } })
    t.equal(noKey.status, 401)
    t.equal(noKey.body.code, 'invalid_api_key')
    const badKey = await server.request('POST', '/decide/?v=3', { body: { token: 'phc_nope', distinct_id: 'x' } })
    t.equal(badKey.status, 401)
    const noId = await decide(server, {})
    t.equal(noId.status, 400)
    t.match(noId.body, { type: 'validation_error', code: 'missing_distinct_id' })
    const garbage = await server.request('POST', '/decide/?v=3', { rawBody: '{"token":', headers: { 'content-type': 'application/json' } })
    t.equal(garbage.status, 400)
    t.equal(garbage.body.code, 'invalid_payload')
    const disabled = await decide(server, { disable_flags: true })
    t.equal(disabled.status, 200, 'disable_flags is checked before distinct_id, as PostHog does')
    t.same(disabled.body.featureFlags, {})
  })

  t.test('uses stored person properties, and request properties over them', async (t) => {
    await createFlag(server, { key: 'acme', filters: { groups: [{ properties: [{ key: 'email', value: '@acme.com', operator: 'icontains', type: 'person' }], rollout_percentage: 100 }] } })
    t.equal((await decide(server, { distinct_id: 'stored-user' })).body.featureFlags.acme, false, 'unknown person')
    await capture([{ event: '$identify', properties: { distinct_id: 'stored-user', $set: { email: 'ann@acme.com' } } }])
    await waitForPerson(server, 'stored-user', (p) => p.email === 'ann@acme.com')
    t.equal((await decide(server, { distinct_id: 'stored-user' })).body.featureFlags.acme, true, 'stored properties are used')
    const overridden = await decide(server, { distinct_id: 'stored-user', person_properties: { email: 'ann@other.com' } })
    t.equal(overridden.body.featureFlags.acme, false, 'request properties win')
  })

  t.test("an early-access flag reads the person's stored enrollment even when nothing else loads the person", async (t) => {
    await createFlag(server, { key: 'beta-ea', filters: { feature_enrollment: true, groups: [{ properties: [], rollout_percentage: 0 }] } })
    const ask = () => decide(server, { distinct_id: 'ea-user', flag_keys_to_evaluate: ['beta-ea'] })
    t.equal((await ask()).body.featureFlags['beta-ea'], false, 'not enrolled yet')
    await capture([{ event: '$set', properties: { distinct_id: 'ea-user', $set: { '$feature_enrollment/beta-ea': true } } }])
    await waitForPerson(server, 'ea-user', (p) => p['$feature_enrollment/beta-ea'] === true)
    t.equal((await ask()).body.featureFlags['beta-ea'], true, 'the stored enrollment turns it on')
    const optedOut = await decide(server, { distinct_id: 'ea-user', flag_keys_to_evaluate: ['beta-ea'], person_properties: { '$feature_enrollment/beta-ea': false } })
    t.equal(optedOut.body.featureFlags['beta-ea'], false, 'an override wins')
  })

  t.test("an early-access flag opted out of still sends its payload, as PostHog's enrollment branch does", async (t) => {
    await createFlag(server, { key: 'ea-payload', filters: { feature_enrollment: true, groups: [{ properties: [], rollout_percentage: 0 }], payloads: { true: '{"beta":1}' } } })
    const body = { distinct_id: 'ea-payload-user', flag_keys_to_evaluate: ['ea-payload'], person_properties: { '$feature_enrollment/ea-payload': false } }
    const v3 = (await decide(server, body)).body
    t.same([v3.featureFlags['ea-payload'], v3.featureFlagPayloads['ea-payload']], [false, '{"beta":1}'])
    const v4 = (await decide(server, body, 'v=4')).body.flags['ea-payload']
    t.match(v4, { enabled: false, reason: { code: 'super_condition_value' }, metadata: { payload: '{"beta":1}' } })
    const unenrolled = (await decide(server, { distinct_id: 'ea-payload-user', flag_keys_to_evaluate: ['ea-payload'] })).body
    t.notOk('ea-payload' in unenrolled.featureFlagPayloads, 'a flag out of its rollout carries none')
  })

  t.test('hashes an integer distinct id past 2^53 by its literal, as PostHog does', async (t) => {
    // 1234567890123456790 is 1234567890123456800 as a double; the two land on opposite sides of simple-flag's 45%
    const raw = (id: string) =>
      server.request('POST', '/decide/?v=3', { rawBody: `{"token":"${server.boot.project_api_key}","distinct_id":${id}}`, headers: { 'content-type': 'application/json' } })
    const literal = (await raw('1234567890123456790')).body.featureFlags['simple-flag']
    t.equal(literal, (await decide(server, { distinct_id: '1234567890123456790' })).body.featureFlags['simple-flag'])
    t.not(literal, (await decide(server, { distinct_id: '1234567890123456800' })).body.featureFlags['simple-flag'])
  })

  t.test("answers with the caller's X-Request-Id as requestId when it is a UUID, else a new one", async (t) => {
    const id = '0190A1B2-C3D4-7E5F-8A6B-7C8D9E0F1A2B'
    t.equal((await decide(server, { distinct_id: 'rid' }, 'v=3', { 'x-request-id': id })).body.requestId, id.toLowerCase())
    const fresh = (await decide(server, { distinct_id: 'rid' }, 'v=3', { 'x-request-id': 'trace-7' })).body.requestId
    t.match(fresh, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
  })

  t.test('says when it evaluated (evaluatedAt, ms), on every shape, as PostHog does', async (t) => {
    for (const v of ['v=1', 'v=2', 'v=3', 'v=4']) {
      const before = Date.now()
      const at = (await decide(server, { distinct_id: 'when' }, v)).body.evaluatedAt
      t.ok(Number.isInteger(at) && at >= before && at <= Date.now(), `${v}: ${at}`)
    }
  })

  t.test("answers each caller with the flags for its runtime, judged as PostHog judges it", async (t) => {
    await createFlag(server, { key: 'rt-browser', evaluation_runtime: 'client', filters: { groups: [{ properties: [], rollout_percentage: 100 }] } })
    await createFlag(server, { key: 'rt-backend', evaluation_runtime: 'server', filters: { groups: [{ properties: [], rollout_percentage: 100 }] } })
    const keys = async (body: Record<string, unknown>, headers: Record<string, string>) => {
      const flags = (await decide(server, { distinct_id: 'rt-user', ...body }, 'v=3', headers)).body.featureFlags
      return ['rt-browser', 'rt-backend', 'simple-flag'].filter((k) => k in flags)
    }
    t.same(await keys({}, { 'user-agent': 'posthog-node/5.8.0' }), ['rt-backend', 'simple-flag'], 'a server SDK')
    t.same(await keys({}, { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) Firefox/133.0' }), ['rt-browser', 'simple-flag'], 'a browser')
    t.same(await keys({}, { 'user-agent': 'node', origin: 'https://shop.example' }), ['rt-browser', 'simple-flag'], 'browser-only headers')
    t.same(await keys({ evaluation_runtime: 'server' }, { 'user-agent': 'Mozilla/5.0' }), ['rt-backend', 'simple-flag'], 'the body says so')
    // fetch itself sends Sec-Fetch-Mode: cors, a browser-only header to PostHog's rule
    t.same(await keys({}, { 'user-agent': 'node' }), ['rt-browser', 'simple-flag'], 'a bare fetch reads as a browser')
    t.same(await keys({ evaluation_runtime: 'all' }, {}), ['rt-browser', 'rt-backend', 'simple-flag'])
    const bare = await new Promise<Record<string, unknown>>((resolve, reject) => {
      const body = JSON.stringify({ token: server.boot.project_api_key, distinct_id: 'rt-user' })
      const req = httpRequest(`${server.baseUrl}/decide/?v=3`, { method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
        let text = ''
        res.on('data', (chunk) => (text += chunk))
        res.on('end', () => resolve(JSON.parse(text).featureFlags))
      })
      req.on('error', reject)
      req.end(body)
    })
    t.same(['rt-browser', 'rt-backend', 'simple-flag'].filter((k) => k in bare), ['simple-flag'], 'nothing tells: only unrestricted flags')
  })

  t.test("a flag of another runtime is false to its dependents, as PostHog's flag service seeds it", async (t) => {
    const base = await createFlag(server, { key: 'base-client', evaluation_runtime: 'client', filters: { groups: [{ properties: [], rollout_percentage: 100 }] } })
    const on = (value: boolean) => ({ groups: [{ properties: [{ key: String(base.id), type: 'flag', operator: 'flag_evaluates_to', value }] }] })
    await createFlag(server, { key: 'dep-true', filters: on(true) })
    await createFlag(server, { key: 'dep-false', filters: on(false) })
    const { flags } = (await decide(server, { distinct_id: 'rt-dep-user' }, 'v=4', { 'user-agent': 'curl/8.5.0' })).body
    t.notOk('base-client' in flags, 'the client flag is left out of a curl request')
    t.match(flags['dep-false'], { enabled: true, reason: { code: 'condition_match', condition_index: 0 } })
    t.match(flags['dep-true'], { enabled: false, reason: { code: 'no_condition_match', condition_index: 0 } })
  })

  t.test('only_evaluate_survey_feature_flags evaluates the survey targeting flags alone, the others false to them', async (t) => {
    const gate = await createFlag(server, { key: 'survey-gate', filters: { groups: [{ properties: [], rollout_percentage: 100 }] } })
    await createFlag(server, { key: 'survey-targeting-gated', filters: { groups: [{ properties: [{ key: String(gate.id), type: 'flag', operator: 'flag_evaluates_to', value: false }] }] } })
    const flags = async (query: string) => (await server.request('POST', `/flags/?${query}`, { body: { token: server.boot.project_api_key, distinct_id: 'survey-user' } })).body.flags
    const only = await flags('v=2&only_evaluate_survey_feature_flags=true')
    t.same(Object.keys(only), ['survey-targeting-gated'])
    t.equal(only['survey-targeting-gated'].enabled, true, 'the left-out gate reads as false')
    const every = await flags('v=2')
    t.same([every['survey-gate'].enabled, every['survey-targeting-gated'].enabled], [true, false])
    t.same(Object.keys(await flags('v=2&only_evaluate_survey_feature_flags')), ['survey-targeting-gated'], 'present is true')
    t.same(Object.keys(await flags('v=2&only_evaluate_survey_feature_flags=off')).sort(), Object.keys(every).sort(), 'off is false')
  })

  t.test('evaluation_contexts (or evaluation_environments) leave out flags whose evaluation tags name none of them, false to their dependents', async (t) => {
    const web = await createFlag(server, { key: 'env-web', tags: ['web'], evaluation_tags: ['web'], filters: { groups: [{ properties: [], rollout_percentage: 100 }] } })
    await createFlag(server, { key: 'env-not-web', filters: { groups: [{ properties: [{ key: String(web.id), type: 'flag', operator: 'flag_evaluates_to', value: false }] }] } })
    const flags = async (environments?: string[], field = 'evaluation_environments') =>
      (await server.request('POST', '/flags/?v=2', { body: { token: server.boot.project_api_key, distinct_id: 'env-user', [field]: environments } })).body.flags
    const app = await flags(['app'])
    t.notOk('env-web' in app, 'a flag tagged for another environment is left out')
    t.equal(app['env-not-web'].enabled, true, 'and reads as false')
    t.notOk('env-web' in (await flags(['app'], 'evaluation_contexts')), 'the name posthog-node 5 sends (evaluationContexts) works alike')
    const onWeb = await flags(['web', 'app'])
    t.same([onWeb['env-web'].enabled, onWeb['env-not-web'].enabled], [true, false])
    t.equal((await flags())['env-web'].enabled, true, 'no environments: evaluated')
  })

  t.test('evaluates group flags with stored and overridden group properties', async (t) => {
    await capture([{ event: '$groupidentify', properties: { distinct_id: 'g-user', $group_type: 'company', $group_key: 'acme-inc', $group_set: { plan: 'enterprise' } } }])
    await waitForEvents(server, 'event=%24groupidentify', 1)
    const deadline = Date.now() + 10_000
    while (Date.now() < deadline && (await server.api('GET', `/api/projects/${server.boot.project_id}/groups/?group_type_index=0`)).body.count === 0) {
      await new Promise((r) => setTimeout(r, 100))
    }
    await createFlag(server, {
      key: 'enterprise',
      filters: { aggregation_group_type_index: 0, groups: [{ properties: [{ key: 'plan', value: 'enterprise', type: 'group', group_type_index: 0 }], rollout_percentage: 100 }] },
    })
    t.equal((await decide(server, { distinct_id: 'g-user', groups: { company: 'acme-inc' } })).body.featureFlags.enterprise, true)
    t.equal((await decide(server, { distinct_id: 'g-user' })).body.featureFlags.enterprise, false, 'no group: off')
    const v4 = await decide(server, { distinct_id: 'g-user' }, 'v=4')
    t.equal(v4.body.flags.enterprise.reason.code, 'no_group_type')
    const overridden = await decide(server, { distinct_id: 'g-user', groups: { company: 'acme-inc' }, group_properties: { company: { plan: 'free' } } })
    t.equal(overridden.body.featureFlags.enterprise, false, 'request group properties win')
  })

  t.test('mixed targeting: person and group conditions in one flag, each judged by its own aggregation', async (t) => {
    const mixed = {
      groups: [
        { properties: [{ key: 'plan', value: 'pro', type: 'person' }], rollout_percentage: 100 },
        { aggregation_group_type_index: 0, properties: [{ key: 'plan', value: 'enterprise', type: 'group', group_type_index: 0 }], rollout_percentage: 100 },
      ],
    }
    await createFlag(server, { key: 'mixed', filters: mixed })
    const ask = async (body: Record<string, unknown>) => (await decide(server, { distinct_id: 'mixed-user', ...body })).body.featureFlags.mixed
    t.equal(await ask({ person_properties: { plan: 'pro' } }), true, 'the person condition')
    t.equal(await ask({ groups: { company: 'acme-inc' } }), true, 'the group condition, from the stored group')
    t.equal(await ask({ groups: { company: 'acme-inc' }, group_properties: { company: { plan: 'free' } } }), false)
    const wrong = await server.api('POST', `/api/projects/${server.boot.project_id}/feature_flags/`, {
      key: 'mixed-wrong',
      filters: { groups: [{ aggregation_group_type_index: 0, properties: [{ key: 'plan', value: 'pro', type: 'person' }] }] },
    })
    t.equal(wrong.status, 400)
    t.match(wrong.body, { detail: 'Filters are not valid (can only use group properties)' }, 'a group condition takes group properties only')
  })

  t.test('fills $geoip_* from X-Forwarded-For unless disabled or sent', async (t) => {
    await createFlag(server, { key: 'uk-only', filters: { groups: [{ properties: [{ key: '$geoip_country_code', value: 'GB', type: 'person' }], rollout_percentage: 100 }] } })
    const uk = { 'x-forwarded-for': '81.2.69.142' }
    t.equal((await decide(server, { distinct_id: 'geo' }, 'v=3', uk)).body.featureFlags['uk-only'], true)
    t.equal((await decide(server, { distinct_id: 'geo', geoip_disable: true }, 'v=3', uk)).body.featureFlags['uk-only'], false)
    t.equal((await decide(server, { distinct_id: 'geo', person_properties: { $geoip_country_code: 'US' } }, 'v=3', uk)).body.featureFlags['uk-only'], false, 'the client’s value wins')
    t.equal((await decide(server, { distinct_id: 'geo' }, 'v=3', { 'x-forwarded-for': '8.8.8.8' })).body.featureFlags['uk-only'], false)
  })

  t.test('merges a stored person’s properties afresh when they, the address or the distinct id change', async (t) => {
    const personTest = (key: string, value: string) => ({ key, value, type: 'person' })
    await createFlag(server, { key: 'pro-in-uk', filters: { groups: [{ properties: [personTest('plan', 'pro'), personTest('$geoip_country_code', 'GB')], rollout_percentage: 100 }] } })
    await createFlag(server, { key: 'pro-as-merged-a', filters: { groups: [{ properties: [personTest('plan', 'pro'), personTest('distinct_id', 'merged-a')], rollout_percentage: 100 }] } })
    const uk = { 'x-forwarded-for': '81.2.69.142' }
    const us = { 'x-forwarded-for': '8.8.8.8' }
    const flags = async (distinctId: string, headers: Record<string, string>) => {
      const body = (await decide(server, { distinct_id: distinctId }, 'v=3', headers)).body.featureFlags
      return [body['pro-in-uk'], body['pro-as-merged-a']]
    }
    await capture([{ event: '$identify', distinct_id: 'merged-a', properties: { $anon_distinct_id: 'merged-b', $set: { plan: 'free' } } }])
    await waitForPerson(server, 'merged-b', (p) => p.plan === 'free')
    t.same(await flags('merged-a', uk), [false, false])
    await capture([{ event: '$set', distinct_id: 'merged-b', properties: { $set: { plan: 'pro' } } }])
    await waitForPerson(server, 'merged-a', (p) => p.plan === 'pro')
    t.same(await flags('merged-a', uk), [true, true], 'the changed properties')
    t.same(await flags('merged-a', uk), [true, true], 'the same request again')
    t.same(await flags('merged-a', us), [false, true], 'another address')
    t.same(await flags('merged-b', uk), [true, false], 'another distinct id of the same person')
    t.same(await flags('merged-a', uk), [true, true], 'back to the first')
  })

  t.test('keeps a user’s bucket across identify with experience continuity', async (t) => {
    await createFlag(server, { key: 'sticky', ensure_experience_continuity: true, filters: { groups: [{ properties: [], rollout_percentage: 50 }] } })
    // Find an anonymous id and an identified id that hash to different buckets.
    let anon = ''
    let known = ''
    for (let i = 0; i < 100 && (!anon || !known); i++) {
      const value = (await decide(server, { distinct_id: `pair-${i}` })).body.featureFlags.sticky
      if (value && !anon) anon = `pair-${i}`
      if (!value && !known) known = `pair-${i}`
    }
    await capture([{ event: 'page', properties: { distinct_id: anon } }])
    await waitForEvents(server, `distinct_id=${anon}`, 1)
    const before = await decide(server, { distinct_id: known, $anon_distinct_id: anon })
    t.equal(before.body.featureFlags.sticky, true, 'the anonymous bucket carries over on the first call after identify')
    await capture([{ event: '$identify', properties: { distinct_id: known, $anon_distinct_id: anon } }])
    await waitForPerson(server, known, () => true)
    t.equal((await decide(server, { distinct_id: known })).body.featureFlags.sticky, true, 'and stays after the merge, from the stored override')
  })

  t.test('a hostile regex neither hangs nor matches', async (t) => {
    await createFlag(server, { key: 'evil', filters: { groups: [{ properties: [{ key: 'name', value: '(a+)+$', operator: 'regex', type: 'person' }], rollout_percentage: 100 }] } })
    const started = Date.now()
    const res = await decide(server, { distinct_id: 'evil', person_properties: { name: 'a'.repeat(50_000) + '!' } })
    t.ok(Date.now() - started < 2000, `answered in ${Date.now() - started} ms`)
    t.equal(res.body.featureFlags.evil, false)
    t.equal((await server.request('GET', '/_health')).status, 200)
  })

  t.test('one broken flag sets errorComputingFlags and the rest still answer', async (t) => {
    const cohort = await server.api('POST', `/api/projects/${server.boot.project_id}/cohorts/`, {
      name: 'to break',
      filters: { properties: { type: 'OR', values: [{ type: 'AND', values: [{ key: 'email', value: 'x', operator: 'exact', type: 'person' }] }] } },
    })
    await createFlag(server, { key: 'cohort-flag', filters: { groups: [{ properties: [{ key: 'id', value: cohort.body.id, type: 'cohort' }], rollout_percentage: 100 }] } })
    const db = new Database(join(server.dataDir, 'management.db'))
    db.prepare('DELETE FROM cohorts WHERE id = ?').run(cohort.body.id)
    db.close()
    await new Promise((r) => setTimeout(r, 150)) // changes by another process are noticed within 100 ms
    const res = await decide(server, { distinct_id: 'distinct_id_1' })
    t.equal(res.status, 200)
    t.equal(res.body.errorComputingFlags, true)
    t.equal(res.body.errorsWhileComputingFlags, true)
    t.equal(res.body.featureFlags['cohort-flag'], false)
    t.equal(res.body.featureFlags['simple-flag'], true)
  })
})

t.test('a pool worker leaves out the same flags as the main thread, false to their dependents', async (t) => {
  const server = await serverFor(t, { env: { FLAGS_INLINE_MAX: '1' } })
  const all = { groups: [{ properties: [], rollout_percentage: 100 }] }
  const browser = await createFlag(server, { key: 'pool-browser', evaluation_runtime: 'client', filters: all })
  const web = await createFlag(server, { key: 'pool-web', tags: ['web'], evaluation_tags: ['web'], filters: all })
  const off = (id: number) => ({ groups: [{ properties: [{ key: String(id), type: 'flag', operator: 'flag_evaluates_to', value: false }] }] })
  await createFlag(server, { key: 'survey-targeting-pool', filters: off(browser.id) })
  await createFlag(server, { key: 'pool-not-web', filters: off(web.id) })
  const ask = async (query: string, body: Record<string, unknown>) =>
    (await server.request('POST', `/flags/?${query}`, { body: { token: server.boot.project_api_key, distinct_id: 'pool-user', ...body }, headers: { 'user-agent': 'curl/8.5.0' } })).body.flags
  const server1 = await ask('v=2', { evaluation_environments: ['app'] })
  t.same(Object.keys(server1).sort(), ['pool-not-web', 'survey-targeting-pool'])
  t.same([server1['survey-targeting-pool'].enabled, server1['pool-not-web'].enabled], [true, true])
  const surveys = await ask('v=2&only_evaluate_survey_feature_flags=true', { evaluation_runtime: 'client' })
  t.same(Object.keys(surveys), ['survey-targeting-pool'])
  t.equal(surveys['survey-targeting-pool'].enabled, true, 'pool-browser is left out as a non-survey flag')
})
