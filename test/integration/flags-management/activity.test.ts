import t from 'tap'
import { flagServer, simpleFlag } from './fixture.js'

t.test('feature flag activity', async (t) => {
  const f = await flagServer()
  t.teardown(() => f.close())
  const { server, flags } = f

  const flag = (await server.api('POST', flags, simpleFlag('tracked', { name: 'Before' }))).body
  await server.api('PATCH', `${flags}${flag.id}/`, { name: 'After', tags: ['ops'], filters: { groups: [{ properties: [], rollout_percentage: 25 }] } })
  await server.api('PATCH', `${flags}${flag.id}/`, { name: 'After' })
  await server.api('PATCH', `${flags}${flag.id}/`, { deleted: true })
  const other = (await server.api('POST', flags, simpleFlag('other'))).body

  t.test('one flag’s activity, newest first, with exact changes', async (t) => {
    const res = await server.api('GET', `${flags}${flag.id}/activity/`)
    t.equal(res.status, 200)
    t.equal(res.body.total_count, 3, 'the no-op update wrote nothing')
    t.equal(res.body.next, null)
    t.equal(res.body.previous, null)
    const [deleted, updated, created] = res.body.results
    const user = { first_name: 'Admin', email: 'admin@skylark.local' }
    t.match(created, { user, activity: 'created', scope: 'FeatureFlag', item_id: String(flag.id), created_at: String })
    t.same(created.detail, { changes: [], trigger: null, name: 'tracked', short_id: null, type: null })
    t.same(updated.user, user)
    t.equal(updated.activity, 'updated')
    t.same(updated.detail.changes, [
      { type: 'FeatureFlag', action: 'created', field: 'tags', before: null, after: ['ops'] },
      { type: 'FeatureFlag', action: 'changed', field: 'name', before: 'Before', after: 'After' },
      {
        type: 'FeatureFlag',
        action: 'changed',
        field: 'filters',
        before: { groups: [{ properties: [], rollout_percentage: 100 }] },
        after: { groups: [{ properties: [], rollout_percentage: 25 }] },
      },
      { type: 'FeatureFlag', action: 'changed', field: 'version', before: 1, after: 2 },
    ])
    t.equal(deleted.activity, 'deleted')
    t.same(deleted.detail.changes, [
      { type: 'FeatureFlag', action: 'changed', field: 'deleted', before: false, after: true },
      { type: 'FeatureFlag', action: 'changed', field: 'version', before: 2, after: 3 },
    ])
    t.equal(deleted.detail.name, 'tracked')
  })

  t.test('project-wide activity pages with page and limit', async (t) => {
    const all = await server.api('GET', `${flags}activity/`)
    t.equal(all.body.total_count, 4)
    t.same(all.body.results.map((r: { item_id: string }) => r.item_id), [String(other.id), String(flag.id), String(flag.id), String(flag.id)])
    const first = await server.api('GET', `${flags}activity/?limit=3`)
    t.equal(first.body.results.length, 3)
    t.equal(first.body.next, `${server.baseUrl}${flags}activity/?limit=3&page=2`)
    t.equal(first.body.previous, null)
    const second = await server.api('GET', `${flags}activity/?limit=3&page=2`)
    t.equal(second.body.results.length, 1)
    t.equal(second.body.next, null)
    t.equal(second.body.previous, `${server.baseUrl}${flags}activity/?limit=3&page=1`)
    const bad = await server.api('GET', `${flags}activity/?page=0`)
    t.match(bad.body, { type: 'validation_error', code: 'min_value', attr: 'page' })
  })

  t.test('unknown flags are 404', async (t) => {
    t.equal((await server.api('GET', `${flags}999999/activity/`)).status, 404)
  })

  t.test('activity needs activity_log:read', async (t) => {
    const flagsOnly = f.member(1, ['feature_flag:write'])
    const denied = await flagsOnly.call('GET', `${flags}activity/`)
    t.equal(denied.status, 403)
    t.equal(denied.body.detail, "API key missing required scope 'activity_log:read'")
    t.equal((await flagsOnly.call('GET', `${flags}${flag.id}/activity/`)).status, 403)
    const auditor = f.member(1, ['activity_log:read'])
    t.equal((await auditor.call('GET', `${flags}${flag.id}/activity/`)).status, 200)
    t.equal((await auditor.call('GET', flags)).status, 403, 'activity scope does not read flags')
  })

  t.test('a refused change writes no activity', async (t) => {
    const before = (await server.api('GET', `${flags}activity/`)).body.total_count
    t.equal((await server.api('PATCH', `${flags}${other.id}/`, { key: 'not valid!' })).status, 400)
    t.equal((await server.api('PATCH', `${flags}${other.id}/`, { name: 'late', version: 7, original_flag: { name: 'before' } })).status, 409)
    t.equal((await server.api('GET', `${flags}activity/`)).body.total_count, before)
  })
})
