import t from 'tap'
import { fixedClock } from '../../../src/common/clock.js'
import {
  ActivityLog,
  activityPageEnvelope,
  changesBetween,
  jsonEqual,
  parseActivityPage,
} from '../../../src/management/index.js'
import { migrate, openDatabase } from '../../../src/storage/index.js'
import { MANAGEMENT_MIGRATIONS } from '../../../src/storage/sqlite/migrations/management.js'

t.test('changesBetween', async (t) => {
  t.test('reports created, deleted and changed fields with PostHog empty-value rules', async (t) => {
    const changes = changesBetween(
      'FeatureFlag',
      { name: '', key: 'a', filters: { groups: [] }, rollback_conditions: null, tags: ['x'], active: true, deleted: false },
      { name: 'New', key: 'b', filters: { groups: [] }, rollback_conditions: [], tags: [], active: false, deleted: false },
    )
    t.same(changes, [
      { type: 'FeatureFlag', action: 'created', field: 'name', before: null, after: 'New' },
      { type: 'FeatureFlag', action: 'changed', field: 'key', before: 'a', after: 'b' },
      { type: 'FeatureFlag', action: 'deleted', field: 'tags', before: ['x'], after: null },
      { type: 'FeatureFlag', action: 'changed', field: 'active', before: true, after: false },
    ])
  })

  t.test('false and 0 are values, not empty', async (t) => {
    t.same(changesBetween('X', { a: false, b: 0 }, { a: true, b: 1 }).map((c) => c.action), ['changed', 'changed'])
  })

  t.test('empty on both sides is no change', async (t) => {
    t.same(changesBetween('X', { a: null, b: {}, c: [] }, { a: '', b: null, c: {} }), [])
  })

  t.test('leaves out common and per-scope exclusions but keeps version', async (t) => {
    const before = { id: 1, created_at: 'a', updated_at: 'a', usage_dashboard: 1, analytics_dashboards: [1], version: 1 }
    const after = { id: 2, created_at: 'b', updated_at: 'b', usage_dashboard: 2, analytics_dashboards: [2], version: 2 }
    t.same(changesBetween('FeatureFlag', before, after), [{ type: 'FeatureFlag', action: 'changed', field: 'version', before: 1, after: 2 }])
    t.same(changesBetween('Cohort', { version: 1 }, { version: 2 }), [], 'cohorts exclude version')
  })

  t.test('object key order does not make a change', async (t) => {
    t.same(changesBetween('X', { f: { a: 1, b: [1, { c: 2 }] } }, { f: { b: [1, { c: 2 }], a: 1 } }), [])
    t.notOk(jsonEqual([1, 2], [2, 1]), 'array order does')
  })
})

t.test('ActivityLog', async (t) => {
  const db = openDatabase(':memory:')
  migrate(db, MANAGEMENT_MIGRATIONS)
  db.prepare("INSERT INTO organizations (id, name, created_at) VALUES ('o', 'o', 'now')").run()
  db.prepare("INSERT INTO projects (id, organization_id, name, api_token, created_at, updated_at) VALUES (1, 'o', 'p', 't', 'now', 'now')").run()
  db.prepare("INSERT INTO users (id, uuid, distinct_id, first_name, email, created_at) VALUES (7, 'u', 'd', 'Ann', 'ann@example.com', 'now')").run()
  const log = new ActivityLog(db, fixedClock(Date.parse('2024-05-01T00:00:00Z')))
  const entry = { teamId: 1, organizationId: 'o', scope: 'FeatureFlag', itemId: 3, name: 'k' }

  t.test('does not write an update without changes', async (t) => {
    t.equal(log.log({ ...entry, userId: 7, activity: 'updated', changes: [] }), false)
    t.equal(log.log({ ...entry, userId: 7, activity: 'updated', changes: null }), false)
    t.equal(log.page(1, 'FeatureFlag', { limit: 10, page: 1 }).total_count, 0)
  })

  t.test('answers entries newest first, system entries with the System user', async (t) => {
    log.log({ ...entry, userId: 7, activity: 'created', changes: [] })
    log.log({ ...entry, itemId: 4, userId: null, activity: 'deleted', changes: [] })
    const page = log.page(1, 'FeatureFlag', { limit: 10, page: 1 })
    t.equal(page.total_count, 2)
    t.same(page.results.map((r) => [r.item_id, r.activity]), [['4', 'deleted'], ['3', 'created']])
    t.same(page.results[0].user, { first_name: 'System', email: null, is_system: true })
    t.same(page.results[1].user, { first_name: 'Ann', email: 'ann@example.com' })
    t.same(page.results[1].detail, { changes: [], trigger: null, name: 'k', short_id: null, type: null })
    t.equal(page.results[1].created_at, '2024-05-01T00:00:00.000Z')
  })

  t.test('narrows to items and pages by number', async (t) => {
    t.equal(log.page(1, 'FeatureFlag', { limit: 10, page: 1 }, ['3']).total_count, 1)
    t.equal(log.page(1, 'FeatureFlag', { limit: 10, page: 1 }, []).total_count, 0)
    const first = log.page(1, 'FeatureFlag', { limit: 1, page: 1 })
    t.same([first.has_next, first.has_previous, first.results.length], [true, false, 1])
    const second = log.page(1, 'FeatureFlag', { limit: 1, page: 2 })
    t.same([second.has_next, second.has_previous], [false, true])
    t.equal(log.page(1, 'Experiment', { limit: 10, page: 1 }).total_count, 0, 'scopes are separate')
    t.equal(log.page(2, 'FeatureFlag', { limit: 10, page: 1 }).total_count, 0, 'projects are separate')
  })
})

t.test('parseActivityPage', async (t) => {
  t.same(parseActivityPage(new URLSearchParams('')), { limit: 10, page: 1 })
  t.same(parseActivityPage(new URLSearchParams('limit=5&page=3')), { limit: 5, page: 3 })
  t.throws(() => parseActivityPage(new URLSearchParams('page=0')), { code: 'min_value', attr: 'page' })
  t.throws(() => parseActivityPage(new URLSearchParams('limit=x')), { code: 'invalid', attr: 'limit' })
})

t.test('activityPageEnvelope links pages by number and keeps other parameters', async (t) => {
  const envelope = activityPageEnvelope(
    'http://h',
    '/api/projects/1/feature_flags/activity/',
    new URLSearchParams('page=2&limit=1&x=y'),
    { limit: 1, page: 2 },
    { results: [], total_count: 3, has_next: true, has_previous: true },
  )
  t.equal(envelope.next, 'http://h/api/projects/1/feature_flags/activity/?page=3&limit=1&x=y')
  t.equal(envelope.previous, 'http://h/api/projects/1/feature_flags/activity/?page=1&limit=1&x=y')
  t.equal(envelope.total_count, 3)
})
