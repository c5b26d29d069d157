import t from 'tap'
import {
  activeFlagDefinitions,
  flagStatus,
  flagStatusReason,
  liveFlagDefinitions,
  rolloutInfo,
  type FeatureFlagRecord,
} from '../../../src/management/index.js'
import { flagWorld, simple, T0 } from './flag-fixture.js'

const activity = (w: ReturnType<typeof flagWorld>, id?: number) =>
  w.m.featureFlags.activity(w.project, id ?? null, { limit: 100, page: 1 }).results

t.test('creating a flag', async (t) => {
  const w = flagWorld()

  t.test('fills PostHog defaults and derived fields', async (t) => {
    const flag = w.create({ key: 'minimal' })
    t.match(flag, {
      key: 'minimal',
      name: '',
      filters: { groups: [{ properties: [], rollout_percentage: null }] },
      deleted: false,
      active: true,
      version: 1,
      created_by: { email: 'owner@example.com', first_name: 'Olive' },
      last_modified_by: { email: 'owner@example.com' },
      created_at: '2024-01-01T00:00:00.000Z',
      is_simple_flag: true,
      rollout_percentage: null,
      ensure_experience_continuity: false,
      experiment_set: [],
      surveys: [],
      features: [],
      rollback_conditions: null,
      performed_rollback: false,
      can_edit: true,
      tags: [],
      usage_dashboard: Number,
      analytics_dashboards: [],
      has_enriched_analytics: false,
      is_remote_configuration: false,
      has_encrypted_payloads: false,
      status: 'ACTIVE',
      evaluation_runtime: 'all',
    })
  })

  t.test('normalises tags and keeps the given created_at', async (t) => {
    const flag = w.create(simple('tagged', { tags: [' Beta ', 'beta', 'Alpha'], created_at: '2023-06-01T10:00:00+02:00' }))
    t.same(flag.tags, ['alpha', 'beta'])
    t.equal(flag.created_at, '2023-06-01T08:00:00.000Z')
  })

  t.test('reports a simple flag rollout and a non-simple one as null', async (t) => {
    t.equal(w.create(simple('half', { filters: { groups: [{ properties: [], rollout_percentage: 50 }] } })).rollout_percentage, 50)
    const complex = w.create({ key: 'two-groups', filters: { groups: [{ rollout_percentage: 10 }, { rollout_percentage: 20 }] } })
    t.same([complex.is_simple_flag, complex.rollout_percentage], [false, null])
  })

  t.test('writes a created entry without changes', async (t) => {
    const flag = w.create(simple('logged'))
    const [entry] = activity(w, flag.id)
    t.match(entry, {
      activity: 'created',
      scope: 'FeatureFlag',
      item_id: String(flag.id),
      user: { first_name: 'Olive', email: 'owner@example.com' },
      detail: { changes: [], trigger: null, name: 'logged', short_id: null, type: null },
    })
  })

  t.test('a failed create writes nothing', async (t) => {
    const before = activity(w).length
    t.throws(() => w.create({ key: 'bad key' }))
    t.equal(activity(w).length, before)
  })
})

t.test('updating a flag', async (t) => {
  const w = flagWorld()
  const flag = w.create(simple('f', { name: 'first' }))

  t.test('increments the version and logs field-by-field changes', async (t) => {
    w.advance(1000)
    const updated = w.update(flag.id, { name: 'second', active: false, filters: { groups: [{ properties: [], rollout_percentage: 20 }] } })
    t.equal(updated.version, 2)
    t.equal(updated.updated_at, '2024-01-01T00:00:01.000Z')
    const [entry] = activity(w, flag.id)
    t.equal(entry.activity, 'updated')
    t.same(entry.detail.changes, [
      { type: 'FeatureFlag', action: 'changed', field: 'name', before: 'first', after: 'second' },
      {
        type: 'FeatureFlag',
        action: 'changed',
        field: 'filters',
        before: { groups: [{ properties: [], rollout_percentage: 100 }] },
        after: { groups: [{ properties: [], rollout_percentage: 20 }] },
      },
      { type: 'FeatureFlag', action: 'changed', field: 'active', before: true, after: false },
      { type: 'FeatureFlag', action: 'changed', field: 'version', before: 1, after: 2 },
    ])
  })

  t.test('an update that changes nothing keeps the version and logs nothing', async (t) => {
    const before = activity(w, flag.id).length
    const same = w.update(flag.id, { name: 'second', tags: [] })
    t.equal(same.version, 2)
    t.equal(activity(w, flag.id).length, before)
  })

  t.test('a stale version without original_flag is applied, as PostHog does', async (t) => {
    const stale = w.update(flag.id, { name: 'third', version: 1 })
    t.same([stale.name, stale.version], ['third', 3])
    w.update(flag.id, { name: 'second', version: 3 })
  })

  t.test('a stale version answers 409 with the current flag when original_flag shows the field changed since', async (t) => {
    const error = t.throws(() => w.update(flag.id, { name: 'third', version: 1, original_flag: { name: 'first' } })) as unknown as { status: number; code: string; detail: string; extra: { original_flag: { version: number; name: string } } }
    t.equal(error.status, 409)
    t.equal(error.code, 'conflict')
    t.equal(error.detail, 'The feature flag was updated by owner@example.com since you started editing it. Please refresh and try again.')
    t.same([error.extra.original_flag.version, error.extra.original_flag.name], [4, 'second'])
    t.equal(w.m.featureFlags.get(w.project, flag.id, w.owner.id).name, 'second', 'nothing was written')
    t.equal(w.update(flag.id, { name: 'second', version: 1, original_flag: { name: 'first' } }).version, 4, 'writing what is already there does not conflict')
    t.equal(w.update(flag.id, { active: true, version: 1, original_flag: { name: 'first', active: false } }).active, true, 'nor does a field nobody else changed')
  })

  t.test('the current version is accepted', async (t) => {
    t.equal(w.update(flag.id, { name: 'third', version: 5 }).version, 6)
  })

  t.test('activating clears performed_rollback', async (t) => {
    w.update(flag.id, { performed_rollback: true })
    t.equal(w.update(flag.id, { active: true }).performed_rollback, false)
  })

  t.test('soft delete logs a deleted entry and restoring a restored one', async (t) => {
    const deleted = w.update(flag.id, { deleted: true })
    t.equal(deleted.status, 'DELETED')
    const [del] = activity(w, flag.id)
    t.equal(del.activity, 'deleted')
    t.same(del.detail.changes?.map((c) => [c.field, c.before, c.after]), [
      ['deleted', false, true],
      ['version', deleted.version - 1, deleted.version],
    ])
    t.equal(w.update(flag.id, { deleted: false }).deleted, false)
    t.equal(activity(w, flag.id)[0].activity, 'restored')
  })

  t.test('unknown flags and other projects are 404', async (t) => {
    t.throws(() => w.update(9999, { name: 'x' }), { code: 'not_found', status: 404 })
    const other = w.m.accounts.createProject(w.org.id, 'Other')
    t.throws(() => w.m.featureFlags.update(other, flag.id, { name: 'x' }, w.owner.id), { code: 'not_found', status: 404 })
  })
})

t.test('state changes PostHog refuses', async (t) => {
  const w = flagWorld()
  const base = w.create(simple('base'))
  const dependent = w.create({ key: 'dependent', filters: { groups: [{ properties: [{ key: String(base.id), type: 'flag', value: true, operator: 'flag_evaluates_to' }] }] } })

  t.test('deleting a flag other flags depend on', async (t) => {
    t.throws(() => w.update(base.id, { deleted: true }), {
      status: 400,
      code: 'invalid',
      attr: null,
      detail: `Cannot delete this feature flag because other flags depend on it: dependent (ID: ${dependent.id}). Please update or delete the dependent flags first.`,
    })
  })
  t.test('disabling a flag other flags depend on', async (t) => {
    t.throws(() => w.update(base.id, { active: false }), {
      code: 'invalid',
      detail: `Cannot disable this feature flag because other flags depend on it: dependent (ID: ${dependent.id}). Please update or disable the dependent flags first.`,
    })
  })
  t.test('enabling a flag that depends on a disabled one', async (t) => {
    w.update(dependent.id, { active: false })
    w.update(base.id, { active: false })
    t.throws(() => w.update(dependent.id, { active: true }), {
      code: 'invalid',
      detail: `Cannot enable this feature flag because it depends on disabled flags: base (ID: ${base.id}). Please enable the dependency flags first.`,
    })
  })
  t.test('deleting a flag used by a live experiment', async (t) => {
    const flag = w.create(simple('experimental'))
    w.db
      .prepare("INSERT INTO experiments (team_id, name, feature_flag_id, created_at, updated_at) VALUES (?, 'E', ?, 'now', 'now')")
      .run(w.project.id, flag.id)
    const experimentId = (w.db.prepare('SELECT MAX(id) AS id FROM experiments').get() as { id: number }).id
    t.same(w.m.featureFlags.get(w.project, flag.id, w.owner.id).experiment_set, [experimentId])
    t.throws(() => w.update(flag.id, { deleted: true }), {
      code: 'invalid',
      detail: `Cannot delete a feature flag that is linked to active experiment(s) with ID(s): ${experimentId}. Please delete the experiment(s) before deleting the flag.`,
    })
    w.db.prepare('UPDATE experiments SET deleted = 1 WHERE id = ?').run(experimentId)
    t.same(w.m.featureFlags.get(w.project, flag.id, w.owner.id).experiment_set, [], 'deleted experiments are not listed')
    t.equal(w.update(flag.id, { deleted: true }).deleted, true)
  })
})

t.test('listing flags', async (t) => {
  const w = flagWorld()
  const other = w.member('other@example.com')
  const a = w.create(simple('alpha-flag', { name: 'First thing', tags: ['web'] }))
  w.advance(1000)
  const b = w.create({ key: 'beta', filters: { groups: [{}], multivariate: { variants: [{ key: 'x', rollout_percentage: 100 }] } } }, other)
  w.advance(1000)
  const c = w.create(simple('gamma', { active: false, tags: ['mobile', 'web'] }))
  w.advance(1000)
  const d = w.create(simple('deleted'))
  w.update(d.id, { deleted: true })
  const keys = (query: string) => w.m.featureFlags.list(w.project, new URLSearchParams(query), { limit: 100, offset: 0 }, w.owner.id).results.map((f) => f.key)

  t.same(keys(''), ['gamma', 'beta', 'alpha-flag'], 'newest first, deleted flags never')
  t.same(keys('search=FIRST'), ['alpha-flag'], 'search matches the name case-insensitively')
  t.same(keys('search=amm'), ['gamma'], 'search matches the key')
  t.same(keys('search=%25'), [], 'search wildcards are literal')
  t.same(keys('active=true'), ['beta', 'alpha-flag'])
  t.same(keys('active=false'), ['gamma'])
  t.same(keys('type=multivariant'), ['beta'])
  t.same(keys('type=boolean'), ['gamma', 'alpha-flag'])
  t.same(keys(`created_by_id=${other.id}`), ['beta'])
  t.same(keys('tags=["mobile"]'), ['gamma'])
  t.same(keys('tags=["web"]&order=key'), ['alpha-flag', 'gamma'])
  t.same(keys('tags=not-json'), ['gamma', 'beta', 'alpha-flag'], 'malformed tags are ignored')
  t.same(keys('order=key'), ['alpha-flag', 'beta', 'gamma'])
  t.same(keys('order=-key'), ['gamma', 'beta', 'alpha-flag'])
  t.same(keys('excluded_properties=["beta"]'), ['gamma', 'alpha-flag'])
  t.throws(() => keys('order=secret'), { code: 'invalid_input', attr: 'order' })
  for (const name of ['constructor', '-toString', '__proto__', 'hasOwnProperty']) {
    t.throws(() => keys(`order=${name}`), { code: 'invalid_input', attr: 'order' }, `order=${name} is refused, not looked up on Object.prototype`)
  }
  t.throws(() => keys('created_by_id=me'), { code: 'invalid', attr: 'created_by_id' })

  t.test('pages with limit and offset', async (t) => {
    const page = w.m.featureFlags.list(w.project, new URLSearchParams(), { limit: 2, offset: 1 }, w.owner.id)
    t.same([page.count, page.results.map((f) => f.key)], [3, ['beta', 'alpha-flag']])
  })

  t.test('experiment type lists flags with experiments', async (t) => {
    w.db.prepare("INSERT INTO experiments (team_id, name, feature_flag_id, created_at, updated_at) VALUES (?, 'Checkout test', ?, 'now', 'now')").run(w.project.id, a.id)
    t.same(keys('type=experiment'), ['alpha-flag'])
    t.same(keys('search=checkout'), ['alpha-flag'], 'search matches experiment names')
  })

  t.test('STALE lists old, fully rolled out, active flags', async (t) => {
    t.same(keys('active=STALE'), [])
    w.advance(31 * 24 * 3600 * 1000)
    t.same(keys('active=STALE'), ['alpha-flag'])
    t.equal(b.key, 'beta')
    t.equal(c.active, false)
  })
})

t.test('flagStatus', async (t) => {
  const old = '2023-01-01T00:00:00.000Z'
  const flag = (filters: Record<string, unknown>, extra: Partial<FeatureFlagRecord> = {}) =>
    ({ filters, active: true, deleted: false, created_at: old, ...extra }) as FeatureFlagRecord
  const full = { groups: [{ properties: [], rollout_percentage: 100 }] }
  t.equal(flagStatus(flag(full, { deleted: true }), T0), 'DELETED')
  t.equal(flagStatus(flag(full), T0), 'STALE')
  t.equal(flagStatus(flag({}), T0), 'STALE', 'no release conditions at all')
  t.equal(flagStatus(flag(full, { active: false }), T0), 'ACTIVE')
  t.equal(flagStatus(flag(full, { created_at: '2023-12-31T00:00:00.000Z' }), T0), 'ACTIVE', 'younger than 30 days')
  t.equal(flagStatus(flag({ groups: [{ properties: [{ key: 'a' }], rollout_percentage: 100 }] }), T0), 'ACTIVE')
  const variants = (p: number) => ({ variants: [{ key: 'a', rollout_percentage: p }, { key: 'b', rollout_percentage: 100 - p }] })
  t.equal(flagStatus(flag({ ...full, multivariate: variants(100) }), T0), 'STALE')
  t.equal(flagStatus(flag({ ...full, multivariate: variants(50) }), T0), 'ACTIVE')
  t.equal(flagStatus(flag({ groups: [{ properties: [], rollout_percentage: 100, variant: 'a' }], multivariate: variants(50) }), T0), 'STALE')
})

t.test('flagStatusReason gives PostHog\'s sentence for each status', async (t) => {
  const flag = (filters: Record<string, unknown>, extra: Partial<FeatureFlagRecord> = {}) =>
    ({ filters, active: true, deleted: false, created_at: '2023-01-01T00:00:00.000Z', ...extra }) as FeatureFlagRecord
  const full = { groups: [{ properties: [], rollout_percentage: 100 }] }
  const variants = { variants: [{ key: 'a', rollout_percentage: 0 }, { key: 'b', rollout_percentage: 100 }] }
  t.same(flagStatusReason(flag(full, { deleted: true }), T0), { status: 'DELETED', reason: 'Flag has been deleted' })
  t.same(flagStatusReason(flag(full), T0), { status: 'STALE', reason: 'This boolean flag will always evaluate to "true"' })
  t.same(flagStatusReason(flag({ ...full, multivariate: variants }), T0), { status: 'STALE', reason: 'This flag will always use the variant "b"' })
  t.same(
    flagStatusReason(flag({ groups: [{ properties: [], rollout_percentage: 100, variant: 'a' }], multivariate: variants }), T0).reason,
    'This flag will always use the variant "a"',
    "a fully rolled-out condition's override wins over the 100 % variant",
  )
  t.same(flagStatusReason(flag(full, { active: false }), T0), { status: 'ACTIVE', reason: 'Flag is active and being evaluated' })
})

t.test('rolloutInfo says how far a deleted flag was rolled out', async (t) => {
  const variants = { variants: [{ key: 'a', rollout_percentage: 50 }, { key: 'b', rollout_percentage: 50 }] }
  t.same(rolloutInfo({ groups: [{ properties: [], rollout_percentage: 100 }] }), { rollout_state: 'fully_rolled_out', active_variant: null })
  t.same(rolloutInfo({ groups: [{ properties: [], rollout_percentage: 100, variant: 'b' }], multivariate: variants }), { rollout_state: 'fully_rolled_out', active_variant: 'b' })
  t.same(rolloutInfo({ groups: [{ properties: [], rollout_percentage: 100 }], multivariate: variants }), { rollout_state: 'partial', active_variant: null }, 'no variant takes everyone')
  t.same(rolloutInfo({ groups: [{ rollout_percentage: 0 }, { properties: [{ key: 'x' }], rollout_percentage: 0 }] }), { rollout_state: 'not_rolled_out', active_variant: null })
  t.same(rolloutInfo({ groups: [{ rollout_percentage: 0 }, { rollout_percentage: null }] }), { rollout_state: 'partial', active_variant: null }, 'null is not 0 %')
})

t.test('flag definitions for evaluation', async (t) => {
  const w = flagWorld()
  const on = w.create(simple('on', { ensure_experience_continuity: true }))
  const off = w.create(simple('off', { active: false }))
  const gone = w.create(simple('gone'))
  w.update(gone.id, { deleted: true })
  const other = w.m.accounts.createProject(w.org.id, 'Other')
  w.create(simple('elsewhere'), w.owner, other)

  t.same(activeFlagDefinitions(w.db, w.project.id), [
    {
      id: on.id,
      team_id: w.project.id,
      key: 'on',
      name: '',
      filters: { groups: [{ properties: [], rollout_percentage: 100 }] },
      active: true,
      deleted: false,
      ensure_experience_continuity: true,
      version: 1,
      evaluation_runtime: 'all',
      evaluation_tags: [],
      bucketing_identifier: null,
      is_remote_configuration: false,
      has_encrypted_payloads: false,
      has_experiment: false,
    },
  ])
  t.same(liveFlagDefinitions(w.db, w.project.id).map((f) => [f.key, f.active]), [['on', true], ['off', false]])
  const experiment = (flagId: number, deleted: number) =>
    w.db.prepare("INSERT INTO experiments (team_id, name, feature_flag_id, deleted, created_at, updated_at) VALUES (?, 'e', ?, ?, '', '')").run(w.project.id, flagId, deleted)
  experiment(off.id, 0)
  experiment(on.id, 1)
  t.same(liveFlagDefinitions(w.db, w.project.id).map((f) => [f.key, f.has_experiment]), [['on', false], ['off', true]], 'a live experiment counts, a deleted one does not')
})

t.test('change listeners hear about writes that changed something', async (t) => {
  const w = flagWorld()
  const heard: number[] = []
  const stop = w.m.featureFlags.onChange((teamId) => heard.push(teamId))
  const flag = w.create(simple('watched'))
  w.update(flag.id, { name: 'changed' })
  w.update(flag.id, { name: 'changed' })
  t.throws(() => w.update(flag.id, { key: 'not valid!' }))
  t.same(heard, [w.project.id, w.project.id], 'create and the real update only')
  stop()
  w.update(flag.id, { name: 'again' })
  t.equal(heard.length, 2, 'unsubscribed')
  const cohortsHeard: number[] = []
  w.m.cohorts.onChange((teamId) => cohortsHeard.push(teamId))
  const cohort = w.cohort({ name: 'c' })
  w.m.cohorts.update(w.project.id, cohort.id, { name: 'd' })
  t.same(cohortsHeard, [w.project.id, w.project.id])
})
