/**
 * The Experiments service after creation: updates and their activity entries, immutability, launch /
 * end / archive, and soft delete.
 */
import t from 'tap'
import { HOUR, T0, experimentWorld, thrown, variantsOf } from './fixture.js'

t.test('update', async (t) => {
  t.test('changes fields, bumps updated_at and logs the changes', async (t) => {
    const w = experimentWorld()
    t.teardown(() => w.close())
    const e = w.create({ name: 'Before', feature_flag_key: 'k' })
    w.advance(HOUR)
    const u = w.update(e.id, { name: 'After', description: 'why', secondary_metrics: [{ name: 'm', filters: {} }] })
    t.match(u, { name: 'After', description: 'why', updated_at: new Date(T0 + HOUR).toISOString(), created_at: new Date(T0).toISOString() })
    const [, updated] = w.activity('Experiment')
    t.equal(updated.activity, 'updated')
    t.same(JSON.parse(updated.detail).changes, [
      { type: 'Experiment', action: 'changed', field: 'name', before: 'Before', after: 'After' },
      { type: 'Experiment', action: 'created', field: 'description', before: null, after: 'why' },
      { type: 'Experiment', action: 'created', field: 'secondary_metrics', before: null, after: [{ name: 'm', filters: {} }] },
    ])
    t.equal(JSON.parse(updated.detail).name, 'After')
  })

  t.test('a change that changes nothing writes nothing', async (t) => {
    const w = experimentWorld()
    t.teardown(() => w.close())
    const e = w.create({ name: 'Same', feature_flag_key: 'k' })
    w.advance(HOUR)
    t.equal(w.update(e.id, { name: 'Same', feature_flag_key: 'k' }).updated_at, e.updated_at)
    t.equal(w.activity('Experiment').length, 1)
  })

  const immutable: Array<[string, Record<string, unknown>, string]> = [
    ['another flag key', { feature_flag_key: 'other' }, "Can't update keys: get_feature_flag_key on Experiment"],
    ['the type', { type: 'web' }, "Can't update keys: type on Experiment"],
    ['both', { type: 'web', feature_flag_key: 'other' }, "Can't update keys: get_feature_flag_key, type on Experiment"],
  ]
  for (const [name, body, detail] of immutable) {
    t.test(`refuses to change ${name}`, async (t) => {
      const w = experimentWorld()
      t.teardown(() => w.close())
      const e = w.create({ name: 'n', feature_flag_key: 'k' })
      t.match(thrown(() => w.update(e.id, body)), { status: 400, code: 'invalid', detail, attr: null })
    })
  }

  t.test('a draft writes new variants to its flag', async (t) => {
    const w = experimentWorld()
    t.teardown(() => w.close())
    const e = w.create({ name: 'n', feature_flag_key: 'k' })
    const variants = [
      { key: 'control', rollout_percentage: 40 },
      { key: 'test', rollout_percentage: 30 },
      { key: 'extra', rollout_percentage: 30 },
    ]
    const u = w.update(e.id, { parameters: { feature_flag_variants: variants } })
    t.same((u.feature_flag!.filters.multivariate as any).variants, variants)
    t.equal(u.feature_flag!.version, 2)
    t.same(w.activity('FeatureFlag').map((a) => a.activity), ['created', 'updated'])
  })

  t.test("any parameters on a draft rewrite the flag's variants and aggregation, as PostHog's update does", async (t) => {
    const w = experimentWorld()
    t.teardown(() => w.close())
    const variants = variantsOf(['control', 'a', 'b'])
    const e = w.create({ name: 'n', feature_flag_key: 'k2', parameters: { feature_flag_variants: variants, aggregation_group_type_index: 0 } })
    t.equal(e.feature_flag!.filters.aggregation_group_type_index, 0)
    const u = w.update(e.id, { parameters: { minimum_detectable_effect: 5 } })
    t.same((u.feature_flag!.filters.multivariate as any).variants.map((v: any) => v.key), ['control', 'test'], 'the default pair')
    t.equal(u.feature_flag!.filters.aggregation_group_type_index, null, 'no aggregation sent: none')
    const kept = w.update(e.id, { parameters: { feature_flag_variants: variants } })
    t.equal(kept.feature_flag!.filters.aggregation_group_type_index, null)
    const same = w.update(e.id, { name: 'renamed' })
    t.equal(same.feature_flag!.version, kept.feature_flag!.version, 'no parameters: the flag is left alone')
    t.equal(w.update(e.id, { parameters: {} }).feature_flag!.version, kept.feature_flag!.version, 'nor with empty ones')
  })

  t.test('launching a draft activates its flag; ending leaves the flag alone', async (t) => {
    const w = experimentWorld()
    t.teardown(() => w.close())
    const e = w.create({ name: 'n', feature_flag_key: 'k' })
    const launched = w.update(e.id, { start_date: '2024-05-01T12:00:00Z' })
    t.equal(launched.feature_flag!.active, true)
    t.equal(launched.start_date, '2024-05-01T12:00:00.000Z')
    const ended = w.update(e.id, { end_date: '2024-05-03T12:00:00Z' })
    t.equal(ended.end_date, '2024-05-03T12:00:00.000Z')
    t.equal(ended.feature_flag!.active, true)
    t.same(
      w.activity('Experiment').map((a) => [a.activity, JSON.parse(a.detail).changes.map((c: any) => c.field)]),
      [
        ['created', []],
        ['updated', ['start_date']],
        ['updated', ['end_date']],
      ],
    )
    t.match(thrown(() => w.update(e.id, { end_date: '2024-05-01T11:00:00Z' })), { detail: 'End date must be after start date' }, 'checked against the stored start')
  })

  t.test('after launch the variants are fixed (same keys may be resent)', async (t) => {
    const w = experimentWorld()
    t.teardown(() => w.close())
    const e = w.create({ name: 'n', feature_flag_key: 'k', start_date: '2024-05-01T00:00:00Z' })
    const same = [
      { key: 'test', rollout_percentage: 50 },
      { key: 'control', rollout_percentage: 50 },
    ]
    t.same(w.update(e.id, { parameters: { feature_flag_variants: same } }).parameters, { feature_flag_variants: same })
    for (const variants of [[{ key: 'control' }], [{ key: 'control' }, { key: 'other' }], [{ key: 'control' }, { key: 'test' }, { key: 'x' }]]) {
      t.match(thrown(() => w.update(e.id, { parameters: { feature_flag_variants: variants } })), {
        code: 'invalid',
        detail: "Can't update feature_flag_variants on Experiment",
      })
    }
    t.equal(w.flag('k')!.version, 1, 'the flag is unchanged')
  })

  t.test('refuses global filter properties', async (t) => {
    const w = experimentWorld()
    t.teardown(() => w.close())
    const e = w.create({ name: 'n', feature_flag_key: 'k' })
    t.match(thrown(() => w.update(e.id, { filters: { properties: [{ key: 'x' }] } })), { detail: 'Experiments do not support global filter properties' })
  })

  t.test('archived toggles both ways', async (t) => {
    const w = experimentWorld()
    t.teardown(() => w.close())
    const e = w.create({ name: 'n', feature_flag_key: 'k' })
    t.equal(w.update(e.id, { archived: true }).archived, true)
    t.equal(w.update(e.id, { archived: false }).archived, false)
    t.same(
      w.activity('Experiment').slice(1).map((a) => JSON.parse(a.detail).changes[0]),
      [
        { type: 'Experiment', action: 'changed', field: 'archived', before: false, after: true },
        { type: 'Experiment', action: 'changed', field: 'archived', before: true, after: false },
      ],
    )
  })

  t.test('an unknown or deleted experiment is 404', async (t) => {
    const w = experimentWorld()
    t.teardown(() => w.close())
    t.match(thrown(() => w.update(999, { name: 'x' })), { status: 404, code: 'not_found' })
    const e = w.create({ name: 'n', feature_flag_key: 'k' })
    t.match(thrown(() => w.experiments.update(w.other, e.id, { name: 'x' }, w.owner.id)), { status: 404 }, 'another project')
  })
})

t.test('delete', async (t) => {
  t.test('soft-deletes: gone from the API, row kept, flag untouched and deletable', async (t) => {
    const w = experimentWorld()
    t.teardown(() => w.close())
    const e = w.create({ name: 'Gone', feature_flag_key: 'k', start_date: '2024-05-01T00:00:00Z' })
    const flagId = e.feature_flag!.id
    t.match(thrown(() => w.m.featureFlags.update(w.project, flagId, { deleted: true }, w.owner.id)), { detail: /linked to active experiment/ })
    w.experiments.delete(w.project, e.id, w.owner.id)
    t.match(thrown(() => w.experiments.get(w.project, e.id)), { status: 404 })
    t.match(thrown(() => w.experiments.delete(w.project, e.id, w.owner.id)), { status: 404 })
    t.equal(w.scalar(`SELECT deleted FROM experiments WHERE id = ${e.id}`), 1)
    t.match(w.flag('k'), { id: flagId, active: true, deleted: false, version: 1 })
    t.equal(w.experiments.list(w.project, new URLSearchParams(), { limit: 10, offset: 0 }).count, 0)
    const last = w.activity('Experiment').at(-1)!
    t.equal(last.activity, 'deleted')
    t.same(JSON.parse(last.detail).changes, [{ type: 'Experiment', action: 'changed', field: 'deleted', before: false, after: true }])
    t.equal(w.m.featureFlags.update(w.project, flagId, { deleted: true }, w.owner.id).deleted, true, 'the flag may now be deleted')
  })

  t.test('PATCH {"deleted": true} does the same', async (t) => {
    const w = experimentWorld()
    t.teardown(() => w.close())
    const e = w.create({ name: 'n', feature_flag_key: 'k' })
    t.equal(w.update(e.id, { deleted: true }).deleted, true)
    t.match(thrown(() => w.experiments.get(w.project, e.id)), { status: 404 })
  })
})
