/**
 * Cohort activity as PostHog's cohort viewset logs it (scope `Cohort`): created, updated field by field,
 * deleted and restored, a static cohort's persons added or removed; read project-wide and per cohort. Cohorts
 * other features make (a static copy, a flag's cohort) are not logged, as in PostHog.
 */
import t from 'tap'
import { readUntil } from '../../helpers/wait.js'
import { flagServer } from './fixture.js'

t.test('cohort activity', async (t) => {
  const f = await flagServer()
  t.teardown(() => f.close())
  const { server } = f
  const cohorts = `/api/projects/${f.projectId}/cohorts/`
  // A person made as any is, by an event (persons.db has one writer while the server runs).
  t.equal((await server.request('POST', '/capture/', { body: { api_key: server.boot.project_api_key, event: '$pageview', distinct_id: 'someone' } })).status, 200)
  const personOf = async () => (await server.api('GET', `/api/projects/${f.projectId}/persons/?distinct_id=someone`)).body.results[0]
  const someone = (await readUntil('the person of someone', personOf, (p) => p !== undefined)).uuid as string

  const plan = (value: string) => ({ properties: { type: 'AND', values: [{ type: 'AND', values: [{ type: 'person', key: 'plan', value, operator: 'exact' }] }] } })
  const dynamic = (await server.api('POST', cohorts, { name: 'Pro', filters: plan('pro') })).body
  await server.api('PATCH', `${cohorts}${dynamic.id}/`, { name: 'Pro users', filters: plan('pro+') })
  await server.api('PATCH', `${cohorts}${dynamic.id}/`, { name: 'Pro users' })
  await server.api('PATCH', `${cohorts}${dynamic.id}/`, { deleted: true })
  await server.api('PATCH', `${cohorts}${dynamic.id}/`, { deleted: false })
  const picked = (await server.api('POST', cohorts, { name: 'Picked', is_static: true })).body
  t.equal((await server.api('PATCH', `${cohorts}${picked.id}/add_persons_to_static_cohort/`, { person_ids: [someone] })).status, 200)
  t.equal((await server.api('PATCH', `${cohorts}${picked.id}/remove_person_from_static_cohort/`, { person_id: someone })).status, 200)

  t.test("one cohort's activity, newest first, with PostHog's activities and changes", async (t) => {
    const res = await server.api('GET', `${cohorts}${dynamic.id}/activity/`)
    t.equal(res.status, 200)
    t.equal(res.body.total_count, 4, 'the update that changed nothing wrote nothing')
    const [restored, deleted, updated, created] = res.body.results
    const user = { first_name: 'Admin', email: 'admin@skylark.local' }
    t.match(created, { user, activity: 'created', scope: 'Cohort', item_id: String(dynamic.id), detail: { name: 'Pro' } })
    t.equal(updated.activity, 'updated')
    t.same(updated.detail.changes, [
      { type: 'Cohort', action: 'changed', field: 'name', before: 'Pro', after: 'Pro users' },
      { type: 'Cohort', action: 'changed', field: 'filters', before: plan('pro'), after: plan('pro+') },
    ], 'no version or count among them')
    t.same([deleted.activity, restored.activity], ['deleted', 'restored'])
    t.same(deleted.detail.changes, [{ type: 'Cohort', action: 'changed', field: 'deleted', before: false, after: true }])
  })

  t.test("a static cohort's members added and removed by hand are logged as PostHog words them", async (t) => {
    const res = await server.api('GET', `${cohorts}${picked.id}/activity/`)
    t.same(res.body.results.map((e: { activity: string }) => e.activity), ['person_removed_manually', 'persons_added_manually', 'created'])
    t.same(res.body.results[0].detail.changes, [{ type: 'Cohort', action: 'changed', field: null, before: null, after: null }])
    t.equal(res.body.results[0].detail.name, null)
  })

  t.test('project-wide activity pages, and cohorts other features make are not logged', async (t) => {
    t.equal((await server.api('GET', `${cohorts}${dynamic.id}/duplicate_as_static_cohort/`)).status, 200)
    const all = await server.api('GET', `${cohorts}activity/?limit=2`)
    t.equal(all.body.total_count, 7, 'the static copy wrote nothing')
    t.same(all.body.results.map((e: { activity: string }) => e.activity), ['person_removed_manually', 'persons_added_manually'])
    t.ok(all.body.next)
  })

  t.test('an unknown cohort is 404, and activity needs activity_log:read', async (t) => {
    t.equal((await server.api('GET', `${cohorts}999999/activity/`)).status, 404)
    const cohortsOnly = f.member(1, ['cohort:write'])
    t.match(await cohortsOnly.call('GET', `${cohorts}activity/`), { status: 403, body: { detail: "API key missing required scope 'activity_log:read'" } })
    t.equal((await f.member(2, ['activity_log:read']).call('GET', `${cohorts}${picked.id}/activity/`)).status, 200)
  })

  t.test('a refused change writes no activity', async (t) => {
    const before = (await server.api('GET', `${cohorts}activity/`)).body.total_count
    t.equal((await server.api('PATCH', `${cohorts}${picked.id}/`, { filters: plan('x') })).status, 400)
    t.equal((await server.api('PATCH', `${cohorts}${picked.id}/add_persons_to_static_cohort/`, { person_ids: [] })).status, 400)
    t.equal((await server.api('GET', `${cohorts}activity/`)).body.total_count, before)
  })
})
