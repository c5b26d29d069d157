/**
 * The new metrics engine's fields through the Experiments service: what create stores (uuids,
 * fingerprints, orderings, PostHog's defaults), PostHog's checks and messages, what updates and the
 * lifecycle actions do to them, and what duplicate copies.
 */
import t from 'tap'
import { HOUR, T0, experimentWorld, thrown } from './fixture.js'

const pageviews = { kind: 'ExperimentMetric', metric_type: 'mean', goal: 'increase', source: { kind: 'EventsNode', event: '$pageview', math: 'total' } }
/** A retention metric started at the experiment's exposure (PostHog's ExperimentExposureNode start). */
const returnsAfterExposure = {
  kind: 'ExperimentMetric',
  metric_type: 'retention',
  start_event: { kind: 'ExperimentExposureNode' },
  completion_event: { kind: 'EventsNode', event: '$pageview' },
  retention_window_start: 1,
  retention_window_end: 7,
  retention_window_unit: 'day',
  start_handling: 'first_seen',
}
const signup = { kind: 'ExperimentMetric', metric_type: 'funnel', series: [{ kind: 'EventsNode', event: 'signed_up' }] }
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

t.test('create', async (t) => {
  t.test('stores metrics with a uuid and fingerprint each, their orderings, and PostHog’s defaults', async (t) => {
    const w = experimentWorld()
    t.teardown(() => w.close())
    const e = w.create({ name: 'n', feature_flag_key: 'k', metrics: [pageviews], metrics_secondary: [{ ...signup, uuid: 'mine' }] })
    const [primary] = e.metrics!
    t.match(primary, { ...pageviews, uuid: UUID, fingerprint: /^[0-9a-f]{64}$/ })
    t.match(e.metrics_secondary, [{ uuid: 'mine' }])
    t.same(e.primary_metrics_ordered_uuids, [primary!.uuid])
    t.same(e.secondary_metrics_ordered_uuids, ['mine'])
    t.same(e.stats_config, { method: 'bayesian' })
    t.same(e.exposure_criteria, { filterTestAccounts: true })
    t.same(e.running_time_calculation, {})
    t.equal(e.only_count_matured_users, false)
    t.equal(e.conclusion, null)
    t.equal(e.is_legacy, false)
    t.same(w.experiments.get(w.project, e.id), e, 'read back as created')
  })

  t.test('the fingerprint is PostHog’s: sha256 of the metric less its identity, the start date and the settings', async (t) => {
    const w = experimentWorld()
    t.teardown(() => w.close())
    // Expected values computed with PostHog's compute_metric_fingerprint (Python's json.dumps, sort_keys, compact).
    const draft = w.create({ name: 'n', feature_flag_key: 'k', metrics: [{ ...pageviews, name: 'Views', uuid: 'u1' }] })
    t.equal(draft.metrics![0]!.fingerprint, '0b95fecd0e80e0747e12530658f7b67d29af56a3ec6d05bda85879416cb77197')
    const launched = w.create({
      name: 'l',
      feature_flag_key: 'l',
      start_date: new Date(T0).toISOString(),
      metrics: [{ ...pageviews, goal: 'décroître' }],
    })
    t.equal(launched.metrics![0]!.fingerprint, '27a185d81fee938a9355e25f141d590d73b5fdc794879485f3cca7ef9b1c931c', 'non-ASCII escaped, +00:00 start')
  })

  t.test('a repeated uuid is replaced, across both lists too', async (t) => {
    const w = experimentWorld()
    t.teardown(() => w.close())
    const e = w.create({ name: 'n', feature_flag_key: 'k', metrics: [{ ...pageviews, uuid: 'a' }, { ...signup, uuid: 'a' }], metrics_secondary: [{ ...signup, uuid: 'a' }] })
    const uuids = [...e.metrics!, ...e.metrics_secondary!].map((m) => m.uuid)
    t.equal(uuids[0], 'a')
    t.equal(new Set(uuids).size, 3)
  })

  t.test('keeps what is sent: stats method, exposure, settings, conclusion', async (t) => {
    const w = experimentWorld()
    t.teardown(() => w.close())
    const e = w.create({
      name: 'n',
      feature_flag_key: 'k',
      stats_config: { method: 'frequentist', baseline_variant_key: 'test' },
      exposure_criteria: { filterTestAccounts: false, exposure_config: { kind: 'ExperimentEventExposureConfig', event: 'seen', properties: [] } },
      scheduling_config: { timeseries: true },
      running_time_calculation: { minimum_detectable_effect: 30 },
      excluded_variants: [],
      only_count_matured_users: true,
      conclusion: 'lost',
      conclusion_comment: 'no lift',
    })
    t.match(e, {
      stats_config: { method: 'frequentist', baseline_variant_key: 'test' },
      exposure_criteria: { filterTestAccounts: false, exposure_config: { event: 'seen' } },
      scheduling_config: { timeseries: true },
      running_time_calculation: { minimum_detectable_effect: 30 },
      excluded_variants: [],
      only_count_matured_users: true,
      conclusion: 'lost',
      conclusion_comment: 'no lift',
    })
  })

  const refused: Array<[string, Record<string, unknown>, string, string | null]> = [
    ['metrics that are not a list', { metrics: { kind: 'ExperimentMetric' } }, 'Metrics must be a list', 'metrics'],
    ['a metric that is not an object', { metrics_secondary: ['x'] }, 'Invalid metric at index 0: must be a dict', 'metrics_secondary'],
    [
      'a legacy metric',
      { metrics: [{ kind: 'ExperimentTrendsQuery' }] },
      "Invalid metric at index 0: legacy metric kind 'ExperimentTrendsQuery' is no longer supported for new experiments. Use 'ExperimentMetric' instead.",
      'metrics',
    ],
    ['another kind', { metrics: [{ kind: 'TrendsQuery' }] }, "Invalid metric at index 0: metric kind must be 'ExperimentMetric'", 'metrics'],
    [
      'a mean metric without source',
      { metrics: [{ kind: 'ExperimentMetric', metric_type: 'mean' }] },
      "Invalid metric at index 0: [{'loc': ('ExperimentMeanMetric', 'source'), 'type': 'missing', 'msg': 'Field required'}].",
      'metrics',
    ],
    [
      'a funnel without steps',
      { metrics: [pageviews, { kind: 'ExperimentMetric', metric_type: 'funnel', series: [] }] },
      'Invalid metric at index 1: funnel metrics require at least one step. The experiment exposure event is added as the initial step automatically.',
      'metrics',
    ],
    [
      'a threshold on a mean without math, which PostHog’s is_threshold_supported_math reads as neither sum nor total',
      { metrics: [{ ...pageviews, source: { kind: 'EventsNode', event: '$pageview' }, threshold: 3 }] },
      'Invalid metric at index 0: a threshold is only supported for sum or count (total) math types.',
      'metrics',
    ],
    [
      'a threshold on a mean whose math is null',
      { metrics: [pageviews, { ...pageviews, source: { kind: 'EventsNode', event: '$pageview', math: null }, threshold: 3 }] },
      'Invalid metric at index 1: a threshold is only supported for sum or count (total) math types.',
      'metrics',
    ],
    [
      'an EventsNode with an id',
      { metrics: [{ ...pageviews, source: { kind: 'EventsNode', id: 3 } }] },
      "Invalid metric at index 0: [{'loc': ('ExperimentMeanMetric', 'source', 'EventsNode', 'id'), 'type': 'extra_forbidden', 'msg': 'Extra inputs are not permitted'}]. EventsNode does not accept an 'id' field.",
      'metrics',
    ],
    [
      'an action the project does not have',
      { metrics: [{ ...pageviews, source: { kind: 'ActionsNode', id: 7 } }] },
      'Action(s) with ID 7 not found or deleted. Each ActionsNode must reference an existing action belonging to this project.',
      null,
    ],
    [
      'a conversion window with a retention metric started at the exposure',
      { metrics: [{ ...returnsAfterExposure, conversion_window: 2, conversion_window_unit: 'day' }] },
      "Invalid metric at index 0: a conversion window cannot be combined with an experiment exposure start. Retention already anchors on each user's first exposure.",
      'metrics',
    ],
    [
      'last seen with a retention metric started at the exposure',
      { metrics: [{ ...returnsAfterExposure, start_handling: 'last_seen' }] },
      "Invalid metric at index 0: start_handling 'last_seen' cannot be combined with an experiment exposure start. Retention always anchors on each user's first exposure.",
      'metrics',
    ],
    [
      "the exposure as a retention metric's completion",
      { metrics_secondary: [{ ...returnsAfterExposure, completion_event: { kind: 'ExperimentExposureNode' } }] },
      "Invalid metric at index 0: [{'loc': ('ExperimentRetentionMetric', 'completion_event', 'kind'), 'type': 'union_tag_invalid', 'msg': \"Input tag 'ExperimentExposureNode' found using 'kind' does not match any of the expected tags: 'EventsNode', 'ActionsNode', 'ExperimentDataWarehouseNode'\"}].",
      'metrics_secondary',
    ],
    [
      'a retention start of an unknown kind',
      { metrics: [{ ...returnsAfterExposure, start_event: { kind: 'Exposure' } }] },
      "Invalid metric at index 0: [{'loc': ('ExperimentRetentionMetric', 'start_event', 'kind'), 'type': 'union_tag_invalid', 'msg': \"Input tag 'Exposure' found using 'kind' does not match any of the expected tags: 'EventsNode', 'ActionsNode', 'ExperimentDataWarehouseNode', 'ExperimentExposureNode'\"}].",
      'metrics',
    ],
    ['a stats method PostHog lacks', { stats_config: { method: 'bootstrap' } }, "Invalid stats method: 'bootstrap'. Must be one of: bayesian, frequentist", null],
    ['a baseline that is no variant', { stats_config: { baseline_variant_key: 'b' } }, "Invalid baseline_variant_key: 'b'. Must be one of: control, test", null],
    ['excluding the baseline', { excluded_variants: ['control'] }, "baseline variant cannot be excluded ('control')", null],
    ['excluding an unknown variant', { excluded_variants: ['x', 'a'] }, "unknown variants for this experiment: ['a', 'x']", null],
    ['excluding every test variant', { excluded_variants: ['test'] }, 'at least one test variant must remain in analysis', null],
    ['excluding a holdout', { excluded_variants: ['holdout-1'] }, "cannot exclude holdout pseudo-variants: ['holdout-1']", null],
    [
      'exposure criteria of the wrong type',
      { exposure_criteria: { filterTestAccounts: 'yes' } },
      "exposure_criteria.filterTestAccounts must be a boolean, got str: 'yes'.",
      'exposure_criteria',
    ],
    ['an exposure config of another kind', { exposure_criteria: { exposure_config: { kind: 'X' } } }, "exposure_criteria.exposure_config.kind must be one of ['ExperimentEventExposureConfig', 'ActionsNode'], got 'X'.", 'exposure_criteria'],
    ['unknown running-time keys', { running_time_calculation: { b: 1, a: 2 } }, "running_time_calculation got unknown keys: ['a', 'b']", 'running_time_calculation'],
    ['a running-time figure that is no number', { running_time_calculation: { recommended_sample_size: '10' } }, 'recommended_sample_size must be a number', 'running_time_calculation'],
    ['a saved metric the project does not have', { saved_metrics_ids: [{ id: 1, metadata: { type: 'primary' } }] }, 'Saved metric does not exist or does not belong to this project', 'saved_metrics_ids'],
    ['a saved metric without id', { saved_metrics_ids: [{}] }, 'Saved metric must have an id', 'saved_metrics_ids'],
  ]
  for (const [name, body, detail, attr] of refused) {
    t.test(`refuses ${name}, leaving no flag behind`, async (t) => {
      const w = experimentWorld()
      t.teardown(() => w.close())
      const error = thrown(() => w.create({ name: 'n', feature_flag_key: 'k', ...body }))
      t.match(error, { status: 400, attr })
      // Some of PostHog's messages go on with a hint on the expected shape; the start is what matters here.
      t.equal(String(error?.detail).slice(0, detail.length), detail, error?.detail)
      t.equal(w.flag('k'), null)
    })
  }

  t.test('stores a retention metric started at the exposure, as PostHog accepts one', async (t) => {
    const w = experimentWorld()
    t.teardown(() => w.close())
    const e = w.create({ name: 'n', feature_flag_key: 'k', metrics: [returnsAfterExposure] })
    t.match(e.metrics, [{ ...returnsAfterExposure, uuid: String, fingerprint: String }])
  })

  t.test('a conclusion outside PostHog’s choices is refused', async (t) => {
    const w = experimentWorld()
    t.teardown(() => w.close())
    t.match(thrown(() => w.create({ name: 'n', feature_flag_key: 'k', conclusion: 'meh' })), { code: 'invalid_choice', attr: 'conclusion', detail: '"meh" is not a valid choice.' })
  })
})

t.test('update', async (t) => {
  t.test('new metrics join the ordering, removed ones leave it, and the other list’s uuids stay apart', async (t) => {
    const w = experimentWorld()
    t.teardown(() => w.close())
    const e = w.create({ name: 'n', feature_flag_key: 'k', metrics: [{ ...pageviews, uuid: 'p1' }], metrics_secondary: [{ ...signup, uuid: 's1' }] })
    const u = w.update(e.id, { metrics: [{ ...signup, uuid: 's1' }, { ...pageviews, uuid: 'p2' }] })
    const [first, second] = u.metrics!
    t.not(first!.uuid, 's1', 'a uuid the secondary list holds is replaced')
    t.equal(second!.uuid, 'p2')
    t.same(u.primary_metrics_ordered_uuids, [first!.uuid, 'p2'], 'p1 removed, the new ones appended')
    t.same(u.secondary_metrics_ordered_uuids, ['s1'])
  })

  t.test('an ordering must name every metric', async (t) => {
    const w = experimentWorld()
    t.teardown(() => w.close())
    const e = w.create({ name: 'n', feature_flag_key: 'k', metrics: [{ ...pageviews, uuid: 'p1' }] })
    t.match(thrown(() => w.update(e.id, { primary_metrics_ordered_uuids: [] })), {
      detail: "primary_metrics_ordered_uuids is missing UUIDs: ['p1']. This is likely a frontend bug - please refresh and try again.",
      attr: null,
    })
    t.match(thrown(() => w.update(e.id, { primary_metrics_ordered_uuids: null })), { detail: /^primary_metrics_ordered_uuids is null but primary metrics exist/ })
    t.same(w.update(e.id, { primary_metrics_ordered_uuids: ['x', 'p1'] }).primary_metrics_ordered_uuids, ['x', 'p1'])
  })

  t.test('settings are replaced as sent, without creation defaults, and logged', async (t) => {
    const w = experimentWorld()
    t.teardown(() => w.close())
    const e = w.create({ name: 'n', feature_flag_key: 'k' })
    w.advance(HOUR)
    const u = w.update(e.id, { stats_config: { method: 'frequentist' }, exposure_criteria: null, conclusion: 'invalid', only_count_matured_users: true })
    t.match(u, { stats_config: { method: 'frequentist' }, exposure_criteria: null, conclusion: 'invalid', only_count_matured_users: true })
    const changes = JSON.parse(w.activity('Experiment').at(-1)!.detail).changes.map((c: { field: string }) => c.field)
    t.same(changes, ['exposure_criteria', 'stats_config', 'only_count_matured_users', 'conclusion'])
  })

  t.test('stats config is checked again when the variants change', async (t) => {
    const w = experimentWorld()
    t.teardown(() => w.close())
    const e = w.create({ name: 'n', feature_flag_key: 'k', stats_config: { baseline_variant_key: 'test' } })
    const variants = [
      { key: 'control', rollout_percentage: 50 },
      { key: 'b', rollout_percentage: 50 },
    ]
    t.match(thrown(() => w.update(e.id, { parameters: { feature_flag_variants: variants } })), { detail: "Invalid baseline_variant_key: 'test'. Must be one of: b, control" })
    t.same((w.flag('k')!.filters.multivariate as any).variants.map((v: { key: string }) => v.key), ['control', 'test'], 'the flag change is rolled back')
  })

  t.test('excluded variants are checked against the flag without resending them', async (t) => {
    const w = experimentWorld()
    t.teardown(() => w.close())
    const e = w.create({ name: 'n', feature_flag_key: 'k' })
    t.match(thrown(() => w.update(e.id, { excluded_variants: ['nope'] })), { detail: "unknown variants for this experiment: ['nope']" })
    const three = [
      { key: 'control', rollout_percentage: 34 },
      { key: 'a', rollout_percentage: 33 },
      { key: 'b', rollout_percentage: 33 },
    ]
    w.update(e.id, { parameters: { feature_flag_variants: three } })
    t.same(w.update(e.id, { excluded_variants: ['b'] }).excluded_variants, ['b'])
  })

  t.test('fingerprints follow the start date: PATCH and launch refingerprint', async (t) => {
    const w = experimentWorld()
    t.teardown(() => w.close())
    const e = w.create({ name: 'n', feature_flag_key: 'k', metrics: [pageviews] })
    const before = e.metrics![0]!.fingerprint
    t.equal(w.update(e.id, { name: 'renamed' }).metrics![0]!.fingerprint, before, 'unchanged settings, same fingerprint')
    w.advance(HOUR)
    const launched = w.experiments.actions.launch(w.project, e.id, w.owner.id)
    t.not(launched.metrics![0]!.fingerprint, before)
    t.equal(launched.metrics![0]!.uuid, e.metrics![0]!.uuid)
  })
})

t.test('lifecycle actions and conclusions', async (t) => {
  t.test('end stores the conclusion sent (null too), ship keeps it unless sent, reset clears it', async (t) => {
    const w = experimentWorld()
    t.teardown(() => w.close())
    const a = w.experiments.actions
    const e = w.create({ name: 'n', feature_flag_key: 'k', start_date: new Date(T0).toISOString(), conclusion: 'lost' })
    w.advance(HOUR)
    t.match(a.end(w.project, e.id, { conclusion: 'won', conclusion_comment: 'clear' }, w.owner.id), { conclusion: 'won', conclusion_comment: 'clear' })
    t.match(a.shipVariant(w.project, e.id, { variant_key: 'test' }, w.owner.id), { conclusion: 'won', conclusion_comment: 'clear' })
    t.match(a.shipVariant(w.project, e.id, { variant_key: 'test', conclusion: 'inconclusive' }, w.owner.id), { conclusion: 'inconclusive', conclusion_comment: 'clear' })
    t.match(a.reset(w.project, e.id, w.owner.id), { conclusion: null, conclusion_comment: null, start_date: null })
    const f = w.create({ name: 'f', feature_flag_key: 'f', start_date: new Date(T0).toISOString(), conclusion: 'lost' })
    w.advance(HOUR)
    t.match(a.end(w.project, f.id, {}, w.owner.id), { conclusion: null }, 'end without a conclusion clears it, as PostHog')
  })

  t.test('duplicate copies what PostHog copies, with new metric uuids', async (t) => {
    const w = experimentWorld()
    t.teardown(() => w.close())
    const source = w.create({
      name: 'Source',
      feature_flag_key: 'k',
      metrics: [{ ...pageviews, uuid: 'p1' }],
      metrics_secondary: [{ ...signup, uuid: 's1' }],
      primary_metrics_ordered_uuids: ['p1'],
      stats_config: { method: 'frequentist' },
      exposure_criteria: { filterTestAccounts: false },
      scheduling_config: { s: 1 },
      running_time_calculation: { minimum_detectable_effect: 20 },
      only_count_matured_users: true,
      excluded_variants: [],
      conclusion: 'won',
      secondary_metrics: [{ name: 'old', filters: {} }],
    })
    const copy = w.experiments.actions.duplicate(w.project, source.id, {}, w.owner.id)
    t.match(copy, {
      stats_config: { method: 'frequentist' },
      exposure_criteria: { filterTestAccounts: false },
      scheduling_config: { s: 1 },
      running_time_calculation: { minimum_detectable_effect: 20 },
      only_count_matured_users: true,
      excluded_variants: null,
      conclusion: null,
      secondary_metrics: [],
    })
    const [metric] = copy.metrics!
    t.match(metric, { metric_type: 'mean', uuid: UUID })
    t.not(metric!.uuid, 'p1')
    t.same(copy.primary_metrics_ordered_uuids, [metric!.uuid])
    t.same(copy.secondary_metrics_ordered_uuids, [copy.metrics_secondary![0]!.uuid])
  })
})
