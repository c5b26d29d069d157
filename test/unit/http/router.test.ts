import t from 'tap'
import { Router } from '../../../src/http/router.js'

const handler = () => ({ status: 200 })
const opts = { maxBodyBytes: 0 }

t.test('Router', async (t) => {
  const router = new Router()
    .add('post', '/capture/', handler, opts)
    .add(['get', 'patch'], '/api/projects/:project_id/feature_flags/:id/', handler, opts)
    .add('get', '/array/:token/*', handler, opts)

  t.test('matches exact paths with or without the trailing slash', async (t) => {
    t.equal(router.match('post', '/capture/').kind, 'route')
    t.equal(router.match('post', '/capture').kind, 'route')
    t.equal(router.match('post', '/capture//').kind, 'route')
  })

  t.test('extracts and decodes parameters', async (t) => {
    const m = router.match('patch', '/api/projects/@current/feature_flags/12')
    t.equal(m.kind, 'route')
    if (m.kind === 'route') t.same(m.params, { project_id: '@current', id: '12' })
    const w = router.match('get', '/array/phc_x/config.js')
    if (w.kind === 'route') t.same(w.params, { token: 'phc_x', '*': 'config.js' })
  })

  t.test('answers 405 information for a known path with another method', async (t) => {
    const m = router.match('delete', '/api/projects/1/feature_flags/2/')
    t.same(m, { kind: 'method_not_allowed', allowed: ['GET', 'PATCH'] })
  })

  t.test('HEAD falls back to GET', async (t) => {
    t.equal(router.match('head', '/api/projects/1/feature_flags/2/').kind, 'route')
  })

  t.test('unknown paths and malformed escapes are not found', async (t) => {
    t.equal(router.match('get', '/nope').kind, 'not_found')
    t.equal(router.match('get', '/api/projects/%E0%A4%A/feature_flags/1').kind, 'not_found')
  })
})

t.test('a literal segment wins over a parameter whatever the registration order', async (t) => {
  const router = new Router()
    .add('get', '/api/projects/:project_id/feature_flags/:id/', () => ({ status: 1 }), opts)
    .add('get', '/api/projects/:project_id/feature_flags/local_evaluation/', () => ({ status: 2 }), opts)
  const m = router.match('get', '/api/projects/1/feature_flags/local_evaluation/')
  t.equal(m.kind === 'route' && m.route.pattern, '/api/projects/:project_id/feature_flags/local_evaluation/')
  const other = router.match('get', '/api/projects/1/feature_flags/12/')
  t.equal(other.kind === 'route' && other.route.pattern, '/api/projects/:project_id/feature_flags/:id/')
})
