/**
 * The lists posthog-js asks for by project key: surveys and web experiments (none in skylark), early access
 * features (the project's features in the stages asked for), with CORS, OPTIONS, and 401 for missing or unknown
 * tokens.
 */
import t from 'tap'
import { serverFor, type TestServer } from '../../helpers/server.js'
import { createFeature as createFeatureIn, createFlag } from './harness.js'

const ORIGIN = 'http://shop.example:3000'
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

t.test('public lists', async (t) => {
  const server: TestServer = await serverFor(t)
  const token = server.boot.project_api_key
  const createFeature = (body: Record<string, unknown>) => createFeatureIn(server, body)

  t.test('surveys: an empty list and no config, with CORS', async (t) => {
    const res = await server.request('GET', `/api/surveys/?token=${token}`, { headers: { origin: ORIGIN } })
    t.equal(res.status, 200)
    t.same(res.body, { surveys: [], survey_config: null })
    t.equal(res.headers.get('access-control-allow-origin'), ORIGIN)
  })

  t.test('web experiments: an empty list, with CORS', async (t) => {
    const res = await server.request('GET', `/api/web_experiments/?token=${token}`, { headers: { origin: ORIGIN } })
    t.equal(res.status, 200)
    t.same(res.body, { experiments: [] })
    t.equal(res.headers.get('access-control-allow-origin'), ORIGIN)
  })

  t.test("early access features: the project's features in beta, in PostHog's public shape", async (t) => {
    const none = await server.request('GET', `/api/early_access_features/?token=${token}`)
    t.same(none.body, { earlyAccessFeatures: [] }, 'none before a feature exists')

    const editor = await createFeature({ name: 'The new editor', description: 'Edit faster.', stage: 'beta', documentation_url: 'https://docs.example.com/editor', payload: { tier: 'pro' } })
    await createFeature({ name: 'Dark mode', stage: 'beta', assignee: null })
    await createFeature({ name: 'Teleport', stage: 'alpha' })
    await createFeature({ name: 'Mind reading', stage: 'concept' })
    await createFeature({ name: 'Old news', stage: 'general-availability' })
    // An early-access flag without a feature is no feature: PostHog lists features, not flags.
    await createFlag(server, { key: 'bare-enrollment', name: 'Bare', filters: { groups: [{ properties: [], rollout_percentage: 0 }], feature_enrollment: true } })

    const res = await server.request('GET', `/api/early_access_features/?token=${token}&stage=beta`, { headers: { origin: ORIGIN } })
    t.equal(res.status, 200)
    t.equal(res.headers.get('access-control-allow-origin'), ORIGIN)
    const [first, second, ...rest] = res.body.earlyAccessFeatures
    t.same(first, { id: editor.id, name: 'The new editor', description: 'Edit faster.', stage: 'beta', documentationUrl: 'https://docs.example.com/editor', flagKey: 'the-new-editor', payload: { tier: 'pro' }, assignee: { type: 'user', name: 'Admin' } })
    t.same(second, { id: second?.id, name: 'Dark mode', description: '', stage: 'beta', documentationUrl: '', flagKey: 'dark-mode', payload: {}, assignee: null })
    t.match(second.id, UUID)
    t.same(rest, [], 'features of other stages, and flags without a feature, are not listed')

    const again = await server.request('GET', `/api/early_access_features/?token=${token}`)
    t.same(again.body, res.body, 'no stage means beta')
  })

  t.test('early access features: stage names the stages to list, repeatable', async (t) => {
    const names = async (query: string) => (await server.request('GET', `/api/early_access_features/?token=${token}&${query}`)).body.earlyAccessFeatures.map((f: { name: string }) => f.name)
    t.same(await names('stage=alpha'), ['Teleport'])
    t.same(await names('stage=concept&stage=general-availability'), ['Mind reading', 'Old news'])
    t.same(await names('stage=alpha&stage=beta'), ['The new editor', 'Dark mode', 'Teleport'])
    t.same(await names('stage=unknown'), [])
  })

  t.test('a missing or unknown token is 401 invalid_api_key, with CORS', async (t) => {
    for (const path of ['/api/surveys/', '/api/web_experiments/', '/api/early_access_features/']) {
      for (const query of ['', '?token=phc_unknown']) {
        const res = await server.request('GET', `${path}${query}`, { headers: { origin: ORIGIN } })
        t.equal(res.status, 401, `${path}${query}`)
        t.same(res.body, { type: 'authentication_error', code: 'invalid_api_key', detail: 'Project API key invalid. You can find your project API key in your project settings.' })
        t.equal(res.headers.get('access-control-allow-origin'), ORIGIN)
      }
    }
  })

  t.test('OPTIONS answers the preflight', async (t) => {
    for (const path of ['/api/surveys/', '/api/web_experiments/', '/api/early_access_features/']) {
      const res = await server.request('OPTIONS', `${path}?token=${token}`, { headers: { origin: ORIGIN, 'access-control-request-method': 'GET' } })
      t.equal(res.status, 204, path)
      t.equal(res.headers.get('allow'), 'GET, OPTIONS, HEAD')
      t.equal(res.headers.get('access-control-allow-origin'), ORIGIN)
      t.match(res.headers.get('access-control-allow-methods'), /GET/)
    }
  })
})
