/**
 * The Experiments service: creation (creating or linking the flag), PostHog's validation rules and
 * messages, immutability, launch / end / archive / soft delete, activity entries, list filters, the
 * flag-implementation check and exposure cohorts.
 */
import t from 'tap'
import { DAY, HOUR, T0, experimentWorld, multivariateFlag, rejected, thrown } from './fixture.js'

t.test('create', async (t) => {
  t.test('creates a draft with a new inactive control/test flag named after the experiment', async (t) => {
    const w = experimentWorld()
    t.teardown(() => w.close())
    const e = w.create({ name: 'Checkout', feature_flag_key: 'checkout-exp' })
    t.match(e, {
      name: 'Checkout',
      description: '',
      start_date: null,
      end_date: null,
      feature_flag_key: 'checkout-exp',
      exposure_cohort: null,
      parameters: {},
      secondary_metrics: [],
      filters: {},
      archived: false,
      deleted: false,
      type: 'product',
      created_by: { email: 'owner@example.com', first_name: 'Olive' },
      created_at: new Date(T0).toISOString(),
    })
    t.same(e.feature_flag, {
      id: e.feature_flag!.id,
      team_id: w.project.id,
      name: 'Feature Flag for Experiment Checkout',
      key: 'checkout-exp',
      filters: {
        groups: [{ properties: [], rollout_percentage: 100 }],
        multivariate: {
          variants: [
            { key: 'control', name: 'Control Group', rollout_percentage: 50 },
            { key: 'test', name: 'Test Variant', rollout_percentage: 50 },
          ],
        },
        aggregation_group_type_index: null,
      },
      deleted: false,
      active: false,
      ensure_experience_continuity: false,
      has_encrypted_payloads: false,
      version: 1,
      evaluation_runtime: 'all',
      evaluation_tags: [],
    })
    t.same(
      w.activity('FeatureFlag').map((a) => [a.activity, JSON.parse(a.detail).name]),
      [['created', 'checkout-exp']],
      'the flag logs its own creation',
    )
    t.same(
      w.activity('Experiment').map((a) => [a.activity, a.item_id, JSON.parse(a.detail).name, JSON.parse(a.detail).changes]),
      [['created', String(e.id), 'Checkout', []]],
    )
  })

  t.test('a start date launches at once: the new flag is active', async (t) => {
    const w = experimentWorld()
    t.teardown(() => w.close())
    const e = w.create({ name: 'Live', feature_flag_key: 'live', start_date: '2024-05-01T10:00:00Z' })
    t.equal(e.start_date, '2024-05-01T10:00:00.000Z')
    t.equal(e.feature_flag!.active, true)
  })

  t.test('takes variants, group aggregation and experience continuity from parameters', async (t) => {
    const w = experimentWorld()
    t.teardown(() => w.close())
    const variants = [
      { key: 'control', rollout_percentage: 34 },
      { key: 'a', rollout_percentage: 33 },
      { key: 'b', rollout_percentage: 33 },
    ]
    const e = w.create({
      name: 'Three',
      feature_flag_key: 'three',
      parameters: { feature_flag_variants: variants, ensure_experience_continuity: true, minimum_detectable_effect: 5 },
    })
    t.same((e.feature_flag!.filters.multivariate as any).variants, variants)
    t.equal(e.feature_flag!.ensure_experience_continuity, true)
    t.same(e.parameters, { feature_flag_variants: variants, ensure_experience_continuity: true, minimum_detectable_effect: 5 })
  })

  t.test('links an existing eligible flag and leaves it as it is', async (t) => {
    const w = experimentWorld()
    t.teardown(() => w.close())
    const flag = w.m.featureFlags.create(w.project, multivariateFlag('existing', ['control', 'x', 'y'], { active: false }), w.owner.id)
    const e = w.create({ name: 'Reuse', feature_flag_key: 'existing', start_date: '2024-05-01T00:00:00Z', parameters: { feature_flag_variants: [{ key: 'control' }] } })
    t.equal(e.feature_flag!.id, flag.id)
    t.equal(e.feature_flag!.version, 1, 'the flag is not changed')
    t.equal(e.feature_flag!.active, false, 'PostHog does not activate a linked flag on create')
    t.same(w.m.featureFlags.get(w.project, flag.id, w.owner.id).experiment_set, [e.id])
  })

  const refusals: Array<[string, Record<string, unknown>, { code: string; detail: string | RegExp; attr: string | null }]> = [
    ['a missing name', { feature_flag_key: 'k' }, { code: 'required', detail: 'This field is required.', attr: 'name' }],
    ['a blank name', { name: ' ', feature_flag_key: 'k' }, { code: 'blank', detail: 'This field may not be blank.', attr: 'name' }],
    ['a missing flag key', { name: 'n' }, { code: 'required', detail: 'This field is required.', attr: 'feature_flag_key' }],
    ['a name that is not a string', { name: 3, feature_flag_key: 'k' }, { code: 'invalid_input', detail: /name/, attr: 'name' }],
    [
      '21 variants',
      { name: 'n', feature_flag_key: 'k', parameters: { feature_flag_variants: Array.from({ length: 21 }, (_, i) => ({ key: i ? `v${i}` : 'control', rollout_percentage: 0 })) } },
      { code: 'invalid', detail: 'Feature flag variants must be less than 21', attr: 'parameters' },
    ],
    [
      'variants without control',
      { name: 'n', feature_flag_key: 'k', parameters: { feature_flag_variants: [{ key: 'a', rollout_percentage: 50 }, { key: 'b', rollout_percentage: 50 }] } },
      { code: 'invalid', detail: 'Feature flag variants must contain a control variant', attr: 'parameters' },
    ],
    [
      'a malformed date',
      { name: 'n', feature_flag_key: 'k', start_date: 'yesterday' },
      { code: 'invalid', detail: /^Datetime has wrong format/, attr: 'start_date' },
    ],
    [
      'an end before the start',
      { name: 'n', feature_flag_key: 'k', start_date: '2024-05-02T00:00:00Z', end_date: '2024-05-01T00:00:00Z' },
      { code: 'invalid', detail: 'End date must be after start date', attr: null },
    ],
    [
      'an end equal to the start',
      { name: 'n', feature_flag_key: 'k', start_date: '2024-05-02T00:00:00Z', end_date: '2024-05-02T00:00:00+00:00' },
      { code: 'invalid', detail: 'End date must be after start date', attr: null },
    ],
    [
      'global filter properties',
      { name: 'n', feature_flag_key: 'k', filters: { events: [{ id: 'e' }], properties: [{ key: 'a', value: 1 }] } },
      { code: 'invalid', detail: 'Experiments do not support global filter properties', attr: null },
    ],
    [
      'a flag key with spaces (the flag rules)',
      { name: 'n', feature_flag_key: 'bad key' },
      { code: 'invalid_key', detail: 'Only letters, numbers, hyphens (-) & underscores (_) are allowed.', attr: 'key' },
    ],
    [
      'variants that do not sum to 100 (the flag rules)',
      { name: 'n', feature_flag_key: 'k', parameters: { feature_flag_variants: [{ key: 'control', rollout_percentage: 50 }, { key: 'test', rollout_percentage: 20 }] } },
      { code: 'invalid', detail: /Variant rollout percentages must sum to 100/, attr: 'filters' },
    ],
  ]
  for (const [name, body, wanted] of refusals) {
    t.test(`refuses ${name} and writes nothing`, async (t) => {
      const w = experimentWorld()
      t.teardown(() => w.close())
      const error = thrown(() => w.create(body))
      t.match(error, { status: 400, type: 'validation_error', ...wanted })
      t.equal(w.scalar('SELECT COUNT(*) AS n FROM experiments'), 0)
      t.equal(w.scalar('SELECT COUNT(*) AS n FROM feature_flags'), 0, 'no flag was created')
      t.equal(w.scalar('SELECT COUNT(*) AS n FROM activity_log'), 0)
    })
  }

  const ineligible: Array<[string, Record<string, unknown>, string]> = [
    ['a boolean flag', { key: 'f', filters: { groups: [{ properties: [], rollout_percentage: 100 }] } }, 'Feature flag is not eligible for experiments.'],
    ['a flag with one variant', multivariateFlag('f', ['control']), 'Feature flag is not eligible for experiments.'],
    ['a flag whose first variant is not control', multivariateFlag('f', ['test', 'control']), 'Feature flag must have control as the first variant.'],
  ]
  for (const [name, flag, detail] of ineligible) {
    t.test(`refuses to link ${name}`, async (t) => {
      const w = experimentWorld()
      t.teardown(() => w.close())
      w.m.featureFlags.create(w.project, flag, w.owner.id)
      t.match(thrown(() => w.create({ name: 'n', feature_flag_key: 'f' })), { code: 'invalid', detail, attr: null })
    })
  }

  t.test('a deleted flag with the key does not count: a new one is created', async (t) => {
    const w = experimentWorld()
    t.teardown(() => w.close())
    const old = w.m.featureFlags.create(w.project, { key: 'reused' }, w.owner.id)
    w.m.featureFlags.update(w.project, old.id, { deleted: true }, w.owner.id)
    const e = w.create({ name: 'n', feature_flag_key: 'reused' })
    t.not(e.feature_flag!.id, old.id)
  })
})

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

t.test('list', async (t) => {
  const w = experimentWorld()
  t.teardown(() => w.close())
  const other = w.m.accounts.createUser({ email: 'other@example.com' })
  const draft = w.create({ name: 'Alpha draft', feature_flag_key: 'a' })
  w.advance(1000)
  const running = w.create({ name: 'Beta running', feature_flag_key: 'b', start_date: '2024-05-01T00:00:00Z' })
  w.advance(1000)
  const complete = w.experiments.create(w.project, { name: 'Gamma done', feature_flag_key: 'c', start_date: '2024-05-01T00:00:00Z', end_date: '2024-05-02T00:00:00Z' }, other.id)
  w.advance(1000)
  const archived = w.create({ name: 'Delta archived', feature_flag_key: 'd', archived: true })
  w.experiments.create(w.other, { name: 'Elsewhere', feature_flag_key: 'e' }, w.owner.id)
  const names = (query: string, page = { limit: 100, offset: 0 }) =>
    w.experiments.list(w.project, new URLSearchParams(query), page).results.map((e) => e.name)

  const cases: Array<[string, string, string[]]> = [
    ['newest first, archived hidden, one project only', '', ['Gamma done', 'Beta running', 'Alpha draft']],
    ['status=draft', 'status=draft', ['Alpha draft']],
    ['status=running', 'status=running', ['Beta running']],
    ['status=complete', 'status=COMPLETE', ['Gamma done']],
    ['status=all and unknown statuses filter nothing', 'status=whatever', ['Gamma done', 'Beta running', 'Alpha draft']],
    ['archived=true lists the archived only', 'archived=true', ['Delta archived']],
    ['archived=false', 'archived=false', ['Gamma done', 'Beta running', 'Alpha draft']],
    ['search matches the name, case-insensitively', 'search=BETA', ['Beta running']],
    ['created_by_id', `created_by_id=${other.id}`, ['Gamma done']],
    ['order=name', 'order=name', ['Alpha draft', 'Beta running', 'Gamma done']],
    ['order=-name', 'order=-name', ['Gamma done', 'Beta running', 'Alpha draft']],
  ]
  for (const [name, query, wanted] of cases) t.same(names(query), wanted, name)
  t.same(names('', { limit: 2, offset: 1 }), ['Beta running', 'Alpha draft'], 'pages')
  t.equal(w.experiments.list(w.project, new URLSearchParams(), { limit: 1, offset: 0 }).count, 3)
  t.match(thrown(() => names('order=bogus')), { status: 400, attr: 'order' })
  t.match(thrown(() => names('created_by_id=x')), { status: 400, attr: 'created_by_id' })
  t.ok([draft, running, complete, archived].every((e) => e.id > 0))
})

t.test('requiringFlagImplementation lists running experiments whose flag was never called', async (t) => {
  const w = experimentWorld()
  t.teardown(() => w.close())
  const start = '2024-05-01T00:00:00Z'
  const called = w.create({ name: 'Called', feature_flag_key: 'called', start_date: start })
  const silent = w.create({ name: 'Silent', feature_flag_key: 'silent', start_date: start })
  w.create({ name: 'Draft', feature_flag_key: 'draft' })
  w.create({ name: 'Ended', feature_flag_key: 'ended', start_date: start, end_date: '2024-05-02T00:00:00Z' })
  w.create({ name: 'Archived', feature_flag_key: 'archived', start_date: start, archived: true })
  const elsewhere = w.create({ name: 'Called elsewhere', feature_flag_key: 'other-project', start_date: start })
  await w.events([
    { distinctId: 'u1', event: '$feature_flag_called', at: T0, properties: { $feature_flag: 'called', $feature_flag_response: 'test' } },
    { distinctId: 'u1', event: '$pageview', at: T0, properties: { $feature_flag: 'silent' } },
    { distinctId: 'u2', event: '$feature_flag_called', at: T0, properties: { $feature_flag: 'other-project' }, teamId: w.other.id },
  ])
  const result = await w.experiments.requiringFlagImplementation(w.project)
  t.same(result.map((e) => e.id), [elsewhere.id, silent.id])
  t.ok(called.id)
})

t.test('createExposureCohort', async (t) => {
  t.test('makes a static cohort of the persons exposed since launch and stores it', async (t) => {
    const w = experimentWorld()
    t.teardown(() => w.close())
    const start = T0 + DAY
    const e = w.create({ name: 'Exp', feature_flag_key: 'k', start_date: new Date(start).toISOString() })
    const called = (distinctId: string, at: number, properties: Record<string, unknown>) => ({ distinctId, event: '$feature_flag_called', at, properties })
    await w.events([
      called('in-1', start + 1, { $feature_flag: 'k', $feature_flag_response: 'control' }),
      called('in-2', start + 2, { $feature_flag: 'k', $feature_flag_response: 'test' }),
      called('in-2', start + 3, { $feature_flag: 'k', $feature_flag_response: 'test' }),
      called('before', start - 1, { $feature_flag: 'k', $feature_flag_response: 'test' }),
      called('no-variant', start + 1, { $feature_flag: 'k', $feature_flag_response: false }),
      called('other-flag', start + 1, { $feature_flag: 'x', $feature_flag_response: 'test' }),
      { distinctId: 'wrong-event', event: '$pageview', at: start + 1, properties: { $feature_flag: 'k', $feature_flag_response: 'test' } },
    ])
    const { experiment, cohort } = await w.experiments.createExposureCohort(w.project, e.id, w.owner.id)
    t.match(cohort, { name: 'Users exposed to experiment "Exp"', is_static: true, deleted: false, created_by: { email: 'owner@example.com' } })
    t.equal(experiment.exposure_cohort, cohort.id)
    t.equal(w.experiments.get(w.project, e.id).exposure_cohort, cohort.id)
    t.same(w.members, [{ teamId: w.project.id, cohortId: cohort.id, distinctIds: ['in-1', 'in-2'] }])
    t.equal(w.activity('Experiment').length, 1, 'exposure_cohort is excluded from the activity log')
    t.match(await rejected(w.experiments.createExposureCohort(w.project, e.id, w.owner.id)), {
      status: 400,
      code: 'invalid',
      detail: 'Experiment already has an exposure cohort',
    })
  })

  t.test('refuses a draft, and 404s an unknown experiment', async (t) => {
    const w = experimentWorld()
    t.teardown(() => w.close())
    const e = w.create({ name: 'Draft', feature_flag_key: 'k' })
    t.match(await rejected(w.experiments.createExposureCohort(w.project, e.id, w.owner.id)), {
      status: 400,
      detail: 'Experiment does not have a start date',
    })
    t.match(await rejected(w.experiments.createExposureCohort(w.project, 12345, w.owner.id)), { status: 404 })
    t.equal(w.scalar('SELECT COUNT(*) AS n FROM cohorts'), 0)
  })

  t.test('without an event store the service says so (503)', async (t) => {
    const w = experimentWorld({ noEvents: true })
    t.teardown(() => w.close())
    const e = w.create({ name: 'E', feature_flag_key: 'k', start_date: '2024-05-01T00:00:00Z' })
    t.match(await rejected(w.experiments.createExposureCohort(w.project, e.id, w.owner.id)), { status: 503 })
    t.match(await rejected(w.experiments.results(w.project, e.id)), { status: 503 })
  })
})
