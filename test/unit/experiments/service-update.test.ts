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

  t.test('a draft applies the flag config it is sent to its flag; the rest of the flag and parameters stay', async (t) => {
    const w = experimentWorld()
    t.teardown(() => w.close())
    const variants = variantsOf(['control', 'a', 'b'])
    const e = w.create({ name: 'n', feature_flag_key: 'k2', parameters: { feature_flag_variants: variants, aggregation_group_type_index: 0 } })
    t.equal(e.feature_flag!.filters.aggregation_group_type_index, 0)
    const other = w.update(e.id, { parameters: { minimum_detectable_effect: 5 } })
    t.equal(other.feature_flag!.version, 1, 'parameters without flag config leave the flag alone')
    t.same(other.parameters, {
      minimum_detectable_effect: 5,
      feature_flag_variants: variants.map((v) => ({ ...v, split_percent: v.rollout_percentage })),
      aggregation_group_type_index: 0,
      rollout_percentage: 100,
      ensure_experience_continuity: false,
    })
    t.equal(w.update(e.id, { parameters: other.parameters as Record<string, unknown> }).feature_flag!.version, 1, 'echoing an answer back changes nothing')
    const ungrouped = w.update(e.id, { parameters: { aggregation_group_type_index: null, rollout_percentage: 40 } })
    t.equal(ungrouped.feature_flag!.filters.aggregation_group_type_index, null)
    t.same(ungrouped.feature_flag!.filters.groups, [{ properties: [], rollout_percentage: 40 }])
    t.same((ungrouped.feature_flag!.filters.multivariate as any).variants, variants, 'variants not sent are kept')
    t.notOk('aggregation_group_type_index' in (ungrouped.parameters as object), 'no aggregation: none answered')
    t.same(JSON.parse(w.scalar(`SELECT parameters FROM experiments WHERE id = ${e.id}`) as string), {}, 'flag config is never stored')
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

  t.test('after launch flag config changes need update_feature_flag_params, and the variant keys stay', async (t) => {
    const w = experimentWorld()
    t.teardown(() => w.close())
    const e = w.create({ name: 'n', feature_flag_key: 'k', start_date: '2024-05-01T00:00:00Z' })
    t.equal(w.update(e.id, { parameters: e.parameters as Record<string, unknown>, description: 'd' }).feature_flag!.version, 1, 'the answer echoed back is no change')
    const skewed = [
      { key: 'control', rollout_percentage: 20 },
      { key: 'test', rollout_percentage: 80 },
    ]
    t.match(thrown(() => w.update(e.id, { parameters: { feature_flag_variants: skewed } })), {
      status: 400,
      code: 'invalid',
      attr: 'feature_flag',
      detail: 'This experiment is running. To change its flag config, send update_feature_flag_params=true (or edit the feature flag directly).',
    })
    const applied = w.update(e.id, { parameters: { feature_flag_variants: skewed }, update_feature_flag_params: true })
    t.same((applied.feature_flag!.filters.multivariate as any).variants, skewed)
    for (const keys of [['control', 'other'], ['control', 'test', 'x']]) {
      t.match(thrown(() => w.update(e.id, { parameters: { feature_flag_variants: variantsOf(keys) }, update_feature_flag_params: true })), {
        code: 'invalid',
        detail: "Can't update feature_flag_variants on Experiment",
      })
    }
    t.equal(w.flag('k')!.version, 2, 'only the allowed change reached the flag')
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

  t.test('PATCH {"deleted": false} restores a deleted experiment, unless its flag was deleted since', async (t) => {
    const w = experimentWorld()
    t.teardown(() => w.close())
    const e = w.create({ name: 'Back', feature_flag_key: 'k' })
    w.experiments.delete(w.project, e.id, w.owner.id)
    t.match(thrown(() => w.update(e.id, { name: 'x' })), { status: 404 }, 'other changes still 404')
    const restored = w.update(e.id, { deleted: false })
    t.equal(restored.deleted, false)
    t.equal(w.experiments.get(w.project, e.id).id, e.id)
    t.equal(w.activity('Experiment').at(-1)!.activity, 'restored')

    w.experiments.delete(w.project, e.id, w.owner.id)
    w.m.featureFlags.update(w.project, e.feature_flag!.id, { deleted: true }, w.owner.id)
    t.match(thrown(() => w.update(e.id, { deleted: false })), {
      status: 400,
      attr: null,
      detail: 'Cannot restore experiment: the linked feature flag has been deleted. Restore the feature flag first, then restore the experiment.',
    })
  })
})

t.test('launching by start_date needs an eligible flag, as the launch action does', async (t) => {
  const w = experimentWorld()
  t.teardown(() => w.close())
  const e = w.create({ name: 'n', feature_flag_key: 'k' })
  w.m.featureFlags.update(w.project, e.feature_flag!.id, { filters: { groups: [{ properties: [], rollout_percentage: 100 }], multivariate: null } }, w.owner.id)
  t.match(thrown(() => w.update(e.id, { start_date: '2024-05-01T12:00:00Z' })), {
    status: 400,
    detail: 'Feature flag must have at least 2 variants (control and at least one test variant)',
  })
  t.equal(w.experiments.get(w.project, e.id).start_date, null)
})
