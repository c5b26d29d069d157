/**
 * The Experiments service: creation (creating or linking the flag), PostHog's validation rules and
 * messages, and the list filters. Changes after creation are in service-update.test.ts; the
 * flag-implementation check and exposure cohorts in service-exposure.test.ts.
 */
import t from 'tap'
import { T0, experimentWorld, multivariateFlag, thrown, variantsOf } from './fixture.js'

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
        holdout: null,
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

  t.test('takes the flag config from parameters, stores the rest, and answers the flag config in parameters', async (t) => {
    const w = experimentWorld()
    t.teardown(() => w.close())
    const variants = variantsOf(['control', 'a', 'b'])
    const payloads = { control: '{"color":"blue"}', a: '{"color":"red"}' }
    const e = w.create({
      name: 'Three',
      feature_flag_key: 'three',
      parameters: {
        feature_flag_variants: variants,
        rollout_percentage: 30,
        feature_flag_payloads: payloads,
        ensure_experience_continuity: true,
        minimum_detectable_effect: 5,
      },
    })
    t.same((e.feature_flag!.filters.multivariate as any).variants, variants)
    t.same(e.feature_flag!.filters.groups, [{ properties: [], rollout_percentage: 30 }])
    t.same(e.feature_flag!.filters.payloads, payloads)
    t.equal(e.feature_flag!.ensure_experience_continuity, true)
    t.same(e.parameters, {
      feature_flag_variants: variants.map((v) => ({ ...v, split_percent: v.rollout_percentage })),
      rollout_percentage: 30,
      feature_flag_payloads: payloads,
      ensure_experience_continuity: true,
      minimum_detectable_effect: 5,
    })
    const stored = JSON.parse(w.scalar(`SELECT parameters FROM experiments WHERE id = ${e.id}`) as string)
    t.same(Object.keys(stored).sort(), ['ensure_experience_continuity', 'feature_flag_payloads', 'minimum_detectable_effect'], 'variants, rollout and aggregation live on the flag only')
  })

  t.test("normalises variants as PostHog does: 'Control' becomes control, split_percent is the share", async (t) => {
    const w = experimentWorld()
    t.teardown(() => w.close())
    const e = w.create({
      name: 'n',
      feature_flag_key: 'k',
      parameters: { feature_flag_variants: [{ key: 'Control', split_percent: 30 }, { key: 'test', rollout_percentage: 10, split_percent: 70 }] },
    })
    t.same((e.feature_flag!.filters.multivariate as any).variants, [
      { key: 'control', rollout_percentage: 30 },
      { key: 'test', rollout_percentage: 70 },
    ])
  })

  t.test('links an existing eligible flag and leaves it as it is', async (t) => {
    const w = experimentWorld()
    t.teardown(() => w.close())
    const flag = w.m.featureFlags.create(w.project, multivariateFlag('existing', ['control', 'x', 'y'], { active: false, tags: ['web'], evaluation_tags: ['web'] }), w.owner.id)
    const e = w.create({ name: 'Reuse', feature_flag_key: 'existing', start_date: '2024-05-01T00:00:00Z', parameters: { minimum_detectable_effect: 1 } })
    t.equal(e.feature_flag!.id, flag.id)
    t.same(e.feature_flag!.evaluation_tags, ['web'], 'the embedded flag shows its evaluation tags')
    t.equal(e.feature_flag!.version, 1, 'the flag is not changed')
    t.equal(e.feature_flag!.active, false, 'PostHog does not activate a linked flag on create')
    t.same((e.parameters as any).feature_flag_variants.map((v: any) => v.key), ['control', 'x', 'y'], "parameters answer the flag's variants")
    t.same(w.m.featureFlags.get(w.project, flag.id, w.owner.id).experiment_set, [e.id])
  })

  t.test('refuses flag config for a flag that exists: it is linked as it is', async (t) => {
    const w = experimentWorld()
    t.teardown(() => w.close())
    w.m.featureFlags.create(w.project, multivariateFlag('existing', ['control', 'x']), w.owner.id)
    for (const parameters of [{ feature_flag_variants: variantsOf(['control', 'z']) }, { rollout_percentage: 50 }, { aggregation_group_type_index: 0 }]) {
      t.match(thrown(() => w.create({ name: 'n', feature_flag_key: 'existing', parameters })), {
        status: 400,
        code: 'invalid',
        attr: 'feature_flag',
        detail:
          "A feature flag with key 'existing' already exists; the experiment links to it as-is, so its config cannot be set here. Omit feature_flag to reuse the existing flag, or edit the flag directly.",
      })
    }
    t.equal(w.scalar('SELECT COUNT(*) AS n FROM experiments'), 0)
  })

  const refusals: Array<[string, Record<string, unknown>, { code: string; detail: string | RegExp; attr: string | null }]> = [
    ['a missing name', { feature_flag_key: 'k' }, { code: 'required', detail: 'This field is required.', attr: 'name' }],
    ['a blank name', { name: ' ', feature_flag_key: 'k' }, { code: 'blank', detail: 'This field may not be blank.', attr: 'name' }],
    ['a missing flag key', { name: 'n' }, { code: 'required', detail: 'This field is required.', attr: 'feature_flag_key' }],
    ['a name that is not a string', { name: 3, feature_flag_key: 'k' }, { code: 'invalid_input', detail: /name/, attr: 'name' }],
    [
      '21 variants',
      { name: 'n', feature_flag_key: 'k', parameters: { feature_flag_variants: Array.from({ length: 21 }, (_, i) => ({ key: i ? `v${i}` : 'control', rollout_percentage: 0 })) } },
      { code: 'invalid', detail: 'Feature flag variants must be less than 21', attr: null },
    ],
    [
      'one variant',
      { name: 'n', feature_flag_key: 'k', parameters: { feature_flag_variants: [{ key: 'control', rollout_percentage: 100 }] } },
      { code: 'invalid', detail: 'Feature flag must have at least 2 variants (control and at least one test variant)', attr: null },
    ],
    [
      'variants without control',
      { name: 'n', feature_flag_key: 'k', parameters: { feature_flag_variants: [{ key: 'a', rollout_percentage: 50 }, { key: "b's", rollout_percentage: 50 }] } },
      {
        code: 'invalid',
        detail: `Feature flag variants must contain a variant with key 'control' (lowercase, exactly). Got keys: ['a', "b's"]. Rename the baseline variant's 'key' to 'control'.`,
        attr: null,
      },
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
    ['a boolean flag', { key: 'f', filters: { groups: [{ properties: [], rollout_percentage: 100 }] } }, 'Feature flag must have at least 2 variants (control and at least one test variant)'],
    ['a flag with one variant', multivariateFlag('f', ['control']), 'Feature flag must have at least 2 variants (control and at least one test variant)'],
    ['a flag without control', multivariateFlag('f', ['a', 'b']), "Feature flag must have a variant with key 'control'"],
  ]
  for (const [name, flag, detail] of ineligible) {
    t.test(`refuses to link ${name}`, async (t) => {
      const w = experimentWorld()
      t.teardown(() => w.close())
      w.m.featureFlags.create(w.project, flag, w.owner.id)
      t.match(thrown(() => w.create({ name: 'n', feature_flag_key: 'f' })), { code: 'invalid', detail, attr: null })
    })
  }

  t.test('links a flag whose control variant is not the first', async (t) => {
    const w = experimentWorld()
    t.teardown(() => w.close())
    const flag = w.m.featureFlags.create(w.project, multivariateFlag('f', ['test', 'control']), w.owner.id)
    t.equal(w.create({ name: 'n', feature_flag_key: 'f' }).feature_flag!.id, flag.id)
  })

  t.test('a deleted flag with the key does not count: a new one is created', async (t) => {
    const w = experimentWorld()
    t.teardown(() => w.close())
    const old = w.m.featureFlags.create(w.project, { key: 'reused' }, w.owner.id)
    w.m.featureFlags.update(w.project, old.id, { deleted: true }, w.owner.id)
    const e = w.create({ name: 'n', feature_flag_key: 'reused' })
    t.not(e.feature_flag!.id, old.id)
  })
})

t.test('list', async (t) => {
  const w = experimentWorld()
  t.teardown(() => w.close())
  const other = w.m.accounts.createUser({ email: 'other@example.com' })
  const zed = w.m.accounts.createUser({ email: 'zed@example.com', first_name: 'Aaron' })
  const draft = w.create({ name: 'Alpha draft', feature_flag_key: 'a' })
  w.advance(1000)
  const running = w.create({ name: 'Beta running', feature_flag_key: 'b', start_date: '2024-05-01T00:00:00Z' })
  w.advance(1000)
  const complete = w.experiments.create(w.project, { name: 'Gamma done', feature_flag_key: 'c', start_date: '2024-05-01T00:00:00Z', end_date: '2024-05-02T00:00:00Z' }, other.id)
  w.advance(1000)
  const archived = w.create({ name: 'Delta archived', feature_flag_key: 'd', archived: true })
  w.advance(1000)
  const paused = w.experiments.create(w.project, { name: 'Epsilon paused', feature_flag_key: 'p', start_date: '2024-04-01T00:00:00Z' }, zed.id)
  w.m.featureFlags.update(w.project, paused.feature_flag!.id, { active: false }, w.owner.id)
  w.experiments.create(w.other, { name: 'Elsewhere', feature_flag_key: 'e' }, w.owner.id)
  const names = (query: string, page = { limit: 100, offset: 0 }) =>
    w.experiments.list(w.project, new URLSearchParams(query), page).results.map((e) => e.name)

  const all = ['Epsilon paused', 'Gamma done', 'Beta running', 'Alpha draft']
  const cases: Array<[string, string, string[]]> = [
    ['newest first, archived hidden, one project only', '', all],
    ['status=draft', 'status=draft', ['Alpha draft']],
    ['status=running: launched, not ended, the flag on', 'status=running', ['Beta running']],
    ['status=paused: launched, not ended, the flag off', 'status=paused', ['Epsilon paused']],
    ['status=stopped', 'status=stopped', ['Gamma done']],
    ['status=complete is stopped', 'status=COMPLETE', ['Gamma done']],
    ['status=all and unknown statuses filter nothing', 'status=whatever', all],
    ['archived=true lists the archived only', 'archived=true', ['Delta archived']],
    ['archived=false', 'archived=false', all],
    ['search matches the name, case-insensitively', 'search=BETA', ['Beta running']],
    ['created_by_id', `created_by_id=${other.id}`, ['Gamma done']],
    ['created_by_id takes a comma-separated list', `created_by_id=${other.id},${zed.id}`, ['Epsilon paused', 'Gamma done']],
    ['created_by_id takes a JSON list', `created_by_id=[${zed.id}]`, ['Epsilon paused']],
    ['created_by_id that names nobody filters nothing', 'created_by_id=x', all],
    ['feature_flag_id', `feature_flag_id=${running.feature_flag!.id}`, ['Beta running']],
    ['order=name', 'order=name', ['Alpha draft', 'Beta running', 'Epsilon paused', 'Gamma done']],
    ['order=-name', 'order=-name', ['Gamma done', 'Epsilon paused', 'Beta running', 'Alpha draft']],
    ['order=status: drafts, running, stopped', 'order=status', ['Alpha draft', 'Beta running', 'Epsilon paused', 'Gamma done']],
    ['order=duration: shortest first, drafts last', 'order=duration', ['Gamma done', 'Beta running', 'Epsilon paused', 'Alpha draft']],
    ['order=-duration: drafts first, as PostgreSQL sorts nulls', 'order=-duration', ['Alpha draft', 'Epsilon paused', 'Beta running', 'Gamma done']],
    ['order=created_by: first name, else e-mail', 'order=created_by', ['Epsilon paused', 'Alpha draft', 'Beta running', 'Gamma done']],
  ]
  for (const [name, query, wanted] of cases) t.same(names(query), wanted, name)
  t.same(names('', { limit: 2, offset: 1 }), ['Gamma done', 'Beta running'], 'pages')
  t.equal(w.experiments.list(w.project, new URLSearchParams(), { limit: 1, offset: 0 }).count, 4)
  for (const order of ['bogus', 'id', 'constructor', '-valueOf', '__proto__']) {
    t.match(thrown(() => names(`order=${order}`)), { status: 400, code: 'invalid', attr: null, detail: `Invalid order field: '${order}'` }, `order=${order} is refused`)
  }
  t.match(thrown(() => names('feature_flag_id=x')), { status: 400, attr: null, detail: 'feature_flag_id must be an integer' })
  t.ok([draft, running, complete, archived].every((e) => e.id > 0))
})
