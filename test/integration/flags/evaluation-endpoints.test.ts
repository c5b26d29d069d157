import t from 'tap'
import { runCli, serverFor, type TestServer } from '../../helpers/server.js'

async function createFlag(server: TestServer, body: Record<string, unknown>): Promise<any> {
  const res = await server.api('POST', `/api/projects/${server.boot.project_id}/feature_flags/`, body)
  if (res.status !== 201) throw new Error(`flag creation failed: ${res.status} ${res.text}`)
  return res.body
}


async function waitForPersons(server: TestServer, count: number): Promise<void> {
  const deadline = Date.now() + 15_000
  while (Date.now() < deadline) {
    if ((await server.api('GET', `/api/projects/${server.boot.project_id}/persons/?limit=1`)).body.count >= count) return
    await new Promise((r) => setTimeout(r, 100))
  }
  throw new Error(`fewer than ${count} persons`)
}

t.test('flag evaluation endpoints', async (t) => {
  const server = await serverFor(t)
  const pid = server.boot.project_id
  const base = `/api/projects/${pid}/feature_flags`
  const a = await createFlag(server, { key: 'flag-a', filters: { groups: [{ properties: [{ key: 'email', value: '@acme.com', operator: 'icontains', type: 'person' }], rollout_percentage: 100 }] } })
  const b = await createFlag(server, { key: 'flag-b', filters: { groups: [{ properties: [{ key: String(a.id), type: 'flag', value: true, operator: 'flag_evaluates_to' }], rollout_percentage: 100 }] } })
  await createFlag(server, { key: 'flag-c', filters: { groups: [{ properties: [{ key: String(b.id), type: 'flag', value: true, operator: 'flag_evaluates_to' }], rollout_percentage: 100 }] } })
  const off = await createFlag(server, { key: 'switched-off', active: false, filters: { groups: [{ properties: [], rollout_percentage: 100 }] } })
  const cohort = await server.api('POST', `/api/projects/${pid}/cohorts/`, {
    name: 'Pro users',
    filters: { properties: { type: 'OR', values: [{ type: 'AND', values: [{ key: 'plan', value: 'pro', operator: 'exact', type: 'person' }] }] } },
  })
  await createFlag(server, { key: 'pro', filters: { groups: [{ properties: [{ key: 'id', value: cohort.body.id, type: 'cohort' }], rollout_percentage: 100 }] } })

  t.test('local_evaluation gives every live flag, the mapping and cohorts, with key-based dependencies', async (t) => {
    const res = await server.api('GET', `${base}/local_evaluation/?send_cohorts`)
    t.equal(res.status, 200)
    t.same(res.body.flags.map((f: any) => f.key).sort(), ['flag-a', 'flag-b', 'flag-c', 'pro', 'switched-off'], 'inactive flags included')
    t.equal(res.body.flags.find((f: any) => f.key === 'switched-off').active, false)
    const c = res.body.flags.find((f: any) => f.key === 'flag-c')
    t.match(c.filters.groups[0].properties[0], { key: 'flag-b', type: 'flag', dependency_chain: ['flag-a', 'flag-b'] })
    t.same(res.body.group_type_mapping, {})
    t.same(Object.keys(res.body.cohorts), [String(cohort.body.id)])
    t.same(res.body.flags.find((f: any) => f.key === 'pro').filters.groups[0].properties, [{ key: 'id', value: cohort.body.id, type: 'cohort' }])
  })

  t.test('local_evaluation serves remote config flags but those with encrypted payloads', async (t) => {
    const config = { groups: [{ properties: [], rollout_percentage: 100 }], payloads: { true: '{"theme":"dark"}' } }
    const plain = await createFlag(server, { key: 'remote-plain', is_remote_configuration: true, filters: config })
    const secret = await createFlag(server, { key: 'remote-secret', is_remote_configuration: true, has_encrypted_payloads: true, filters: config })
    t.teardown(async () => {
      for (const id of [plain.id, secret.id]) await server.api('PATCH', `${base}/${id}/`, { deleted: true })
    })
    const res = await server.api('GET', `${base}/local_evaluation/?send_cohorts`)
    const keys = res.body.flags.map((f: any) => f.key)
    t.ok(keys.includes('remote-plain'), 'a plain payload is read locally (getFeatureFlagPayload)')
    t.notOk(keys.includes('remote-secret'), 'an encrypted one only through remote_config')
  })

  t.test('without send_cohorts a flag’s one simple cohort is inlined as person conditions', async (t) => {
    for (const query of ['', '?send_cohorts=false']) {
      const plain = await server.api('GET', `${base}/local_evaluation/${query}`)
      t.same(plain.body.cohorts, {}, `no cohorts with "${query}"`)
      t.same(plain.body.flags.find((f: any) => f.key === 'pro').filters.groups, [{ properties: [{ key: 'plan', value: 'pro', operator: 'exact', type: 'person' }], rollout_percentage: 100 }])
    }
    const key = server.boot.personal_api_key!
    const rust = await server.request('GET', `/flags/definitions?token=${server.boot.project_api_key}`, { headers: { authorization: `Bearer ${key}` } })
    t.same(Object.keys(JSON.parse(rust.text).cohorts), [String(cohort.body.id)], '/flags/definitions always sends cohorts, as PostHog’s Rust service')
  })

  t.test('the token forms posthog-node polls answer 304 while nothing changed', async (t) => {
    const key = server.boot.personal_api_key!
    const token = server.boot.project_api_key
    for (const path of [`/api/feature_flag/local_evaluation?token=${token}&send_cohorts`, `/flags/definitions?token=${token}&send_cohorts`]) {
      const first = await server.request('GET', path, { headers: { authorization: `Bearer ${key}` } })
      t.equal(first.status, 200, path)
      const etag = first.headers.get('etag')
      t.match(etag, /^W\/"[0-9a-f]{32}"$/, 'a weak ETag')
      for (const sent of [etag!, etag!.slice(2), etag!.slice(3, -1)]) {
        const again = await server.request('GET', path, { headers: { authorization: `Bearer ${key}`, 'if-none-match': sent } })
        t.equal(again.status, 304, `If-None-Match: ${sent}`)
        t.equal(again.text, '')
        t.equal(again.headers.get('cache-control'), 'private, must-revalidate')
      }
    }
    const noKey = await server.request('GET', `/flags/definitions?token=${token}`)
    t.equal(noKey.status, 401)
    const badToken = await server.request('GET', '/flags/definitions?token=phc_nope', { headers: { authorization: `Bearer ${key}` } })
    t.equal(badToken.status, 401)
    const before = (await server.request('GET', `/flags/definitions?token=${token}`, { headers: { authorization: `Bearer ${key}` } })).headers.get('etag')
    await server.api('PATCH', `${base}/${off.id}/`, { active: true })
    const after = await server.request('GET', `/flags/definitions?token=${token}`, { headers: { authorization: `Bearer ${key}`, 'if-none-match': before! } })
    t.equal(after.status, 200, 'a changed flag changes the ETag')
    await server.api('PATCH', `${base}/${off.id}/`, { active: false })
  })

  t.test('a project secret key reads its project’s definitions and remote config, and nothing else', async (t) => {
    const secret = server.boot.project_secret_api_key
    const token = server.boot.project_api_key
    t.match(secret, /^phs_/)
    const remote = await createFlag(server, { key: 'remote-by-secret', is_remote_configuration: true, filters: { groups: [{ rollout_percentage: 100 }], payloads: { true: '{"on":1}' } } })
    t.teardown(() => server.api('PATCH', `${base}/${remote.id}/`, { deleted: true }))
    const get = (path: string, key = secret) => server.request('GET', path, { headers: { authorization: `Bearer ${key}` } })
    const personal = await get(`/flags/definitions?token=${token}`, server.boot.personal_api_key!)
    for (const path of [`/flags/definitions?token=${token}`, '/flags/definitions', '/api/feature_flag/local_evaluation?send_cohorts', `${base}/local_evaluation/?send_cohorts`, '/api/projects/@current/feature_flags/local_evaluation/?send_cohorts']) {
      const res = await get(path)
      t.equal(res.status, 200, path)
      t.equal(res.text, personal.text, `${path}: the same definitions as with a personal key`)
    }
    const config = await get(`/api/projects/@current/feature_flags/remote-by-secret/remote_config?token=${token}`)
    t.equal(config.status, 200)
    t.equal(config.body, '{"on":1}')
    t.equal((await get(`/flags/definitions?token=phc_someone_else`)).status, 401, 'another token: 401')
    t.equal((await get(`/api/projects/${pid + 1000}/feature_flags/local_evaluation/`)).status, 404, 'another project: 404')
    const list = await get(`${base}/`)
    t.equal(list.status, 401, 'the flag list does not take it')
    t.equal(list.body.code, 'invalid_personal_api_key')
    t.equal((await get('/flags/definitions', 'phs_not_a_real_key')).status, 401)
  })

  t.test('evaluation_reasons explains each flag, inactive ones as disabled', async (t) => {
    const res = await server.api('GET', `${base}/evaluation_reasons/?distinct_id=nobody`)
    t.same(res.body['switched-off'], { value: false, evaluation: { reason: 'disabled', condition_index: null } })
    t.same(res.body['flag-a'], { value: false, evaluation: { reason: 'no_condition_match', condition_index: 0 } })
    const missing = await server.api('GET', `${base}/evaluation_reasons/`)
    t.equal(missing.status, 400)
  })

  t.test('my_flags evaluates for the key’s own user', async (t) => {
    const res = await server.api('GET', `${base}/my_flags/`)
    t.equal(res.status, 200)
    t.same(res.body.map((r: any) => r.feature_flag.key).sort(), ['flag-a', 'flag-b', 'flag-c', 'pro'])
    t.ok(res.body.every((r: any) => r.value === false))
  })

  t.test('user_blast_radius counts stored persons matching a condition', async (t) => {
    const batch = Array.from({ length: 30 }, (_, i) => ({
      event: '$identify',
      properties: { distinct_id: `br-${i}`, $set: { email: i < 12 ? `u${i}@acme.com` : `u${i}@else.org`, plan: i % 3 === 0 ? 'pro' : 'free' } },
    }))
    await server.request('POST', '/batch/', { body: { api_key: server.boot.project_api_key, batch } })
    await waitForPersons(server, 30)
    const acme = await server.api('POST', `${base}/user_blast_radius/`, { condition: { properties: [{ key: 'email', value: '@acme.com', operator: 'icontains', type: 'person' }], rollout_percentage: 10 } })
    t.same(acme.body, { users_affected: 12, total_users: 30 }, 'rollout percentage is ignored, as PostHog does')
    const viaCohort = await server.api('POST', `${base}/user_blast_radius/`, { condition: { properties: [{ key: 'id', value: cohort.body.id, type: 'cohort' }] } })
    t.same(viaCohort.body, { users_affected: 10, total_users: 30 })
    const everyone = await server.api('POST', `${base}/user_blast_radius/`, { condition: { properties: [] } })
    t.same(everyone.body, { users_affected: 30, total_users: 30 })
    const missing = await server.api('POST', `${base}/user_blast_radius/`, {})
    t.equal(missing.status, 400)
    t.equal(missing.body.detail, 'Missing condition for which to get blast radius')
    const readOnly = JSON.parse((await runCli(['keys', 'create', '--scopes', 'feature_flag:read', '--json'], { DATA_DIR: server.dataDir })).stdout)
    const denied = await server.api('POST', `${base}/user_blast_radius/`, { condition: {} }, readOnly.personal_api_key)
    t.equal(denied.status, 403)
  })

  t.test('create_static_cohort_for_flag makes a static cohort that flags can use', async (t) => {
    // the 30 persons from the blast-radius test: 12 at acme.com
    const res = await server.api('POST', `${base}/${a.id}/create_static_cohort_for_flag/`, {})
    t.equal(res.status, 200)
    t.match(res.body.cohort, { is_static: true, name: /^Users with feature flag flag-a enabled at /, count: 12 })
    t.equal((await server.api('GET', `/api/projects/${pid}/cohorts/${res.body.cohort.id}/`)).body.count, 12, 'the count is kept')
    const viaStatic = await createFlag(server, { key: 'from-static', filters: { groups: [{ properties: [{ key: 'id', value: res.body.cohort.id, type: 'cohort' }], rollout_percentage: 100 }] } })
    t.ok(viaStatic.id)
    const member = await server.request('POST', '/decide/?v=3', { body: { token: server.boot.project_api_key, distinct_id: 'br-3' } })
    t.equal(member.body.featureFlags['from-static'], true, 'a member gets the flag')
    const other = await server.request('POST', '/decide/?v=3', { body: { token: server.boot.project_api_key, distinct_id: 'br-20' } })
    t.equal(other.body.featureFlags['from-static'], false)
    t.equal((await server.api('POST', `${base}/99999/create_static_cohort_for_flag/`, {})).status, 404)
  })

  t.test('local evaluation serves the stored evaluation tags and bucketing identifier', async (t) => {
    await createFlag(server, { key: 'tagged-device', tags: ['web', 'app'], evaluation_tags: ['web'], bucketing_identifier: 'device_id', filters: { groups: [{ properties: [], rollout_percentage: 50 }] } })
    const served = (await server.api('GET', `${base}/local_evaluation/`)).body.flags
    t.match(served.find((f: any) => f.key === 'tagged-device'), { evaluation_tags: ['web'], bucketing_identifier: 'device_id' })
    t.match(served.find((f: any) => f.key === 'flag-a'), { evaluation_tags: [], bucketing_identifier: null })
  })
})
