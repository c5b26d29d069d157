/**
 * The lists posthog-js asks for by project key: surveys and web experiments (none in skylark), early-access
 * features (the project's early-access flags), with CORS, OPTIONS, and 401 for missing or unknown tokens.
 */
import t from 'tap'
import { startServer, type TestServer } from '../../helpers/server.js'
import { createFlag } from './harness.js'

const ORIGIN = 'http://shop.example:3000'
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

t.test('public lists', async (t) => {
  const server: TestServer = await startServer()
  t.teardown(async () => {
    await server.stop()
    server.cleanup()
  })
  const token = server.boot.project_api_key
  const enrollment = { groups: [{ properties: [], rollout_percentage: 0 }], feature_enrollment: true }

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

  t.test('early-access features: the active early-access flags, in beta, with stable ids', async (t) => {
    const none = await server.request('GET', `/api/early_access_features/?token=${token}`)
    t.same(none.body, { earlyAccessFeatures: [] }, 'none before an early-access flag exists')

    await createFlag(server, { key: 'new-editor', name: 'The new editor', filters: enrollment })
    await createFlag(server, { key: 'unnamed-beta', filters: enrollment })
    await createFlag(server, { key: 'paused-beta', name: 'Paused', active: false, filters: enrollment })
    const gone = await createFlag(server, { key: 'gone-beta', name: 'Gone', filters: enrollment })
    await server.api('PATCH', `/api/projects/${server.boot.project_id}/feature_flags/${gone.id}/`, { deleted: true })
    await createFlag(server, { key: 'plain', name: 'Plain flag', filters: { groups: [{ properties: [], rollout_percentage: 100 }] } })

    const res = await server.request('GET', `/api/early_access_features/?token=${token}&stage=beta`, { headers: { origin: ORIGIN } })
    t.equal(res.status, 200)
    t.equal(res.headers.get('access-control-allow-origin'), ORIGIN)
    const features = res.body.earlyAccessFeatures
    t.match(features, [
      { id: UUID, name: 'The new editor', description: '', stage: 'beta', documentationUrl: null, flagKey: 'new-editor' },
      { id: UUID, name: 'unnamed-beta', description: '', stage: 'beta', documentationUrl: null, flagKey: 'unnamed-beta' },
    ])
    t.equal(features.length, 2, 'inactive, deleted and ordinary flags are not features')
    t.same(Object.keys(features[0]).sort(), ['description', 'documentationUrl', 'flagKey', 'id', 'name', 'stage'])
    t.not(features[0].id, features[1].id)

    const again = await server.request('GET', `/api/early_access_features/?token=${token}`)
    t.same(again.body, res.body, 'no stage means beta; the ids are the same on every request')
  })

  t.test('early-access features: a stage filter without beta lists none', async (t) => {
    for (const query of ['stage=alpha', 'stage=concept&stage=general-availability']) {
      const res = await server.request('GET', `/api/early_access_features/?token=${token}&${query}`)
      t.same(res.body, { earlyAccessFeatures: [] }, query)
    }
    const both = await server.request('GET', `/api/early_access_features/?token=${token}&stage=alpha&stage=beta`)
    t.equal(both.body.earlyAccessFeatures.length, 2, 'stage=alpha&stage=beta includes beta')
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
