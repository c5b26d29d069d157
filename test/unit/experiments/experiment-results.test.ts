/**
 * Experiment results computed from stored events (a real SQLite event store): PostHog's shapes and
 * errors for funnel and trend metrics, the experiment window, secondary metrics, and where the
 * statistics run (inline for two variants, offloaded and cached for more).
 */
import t from 'tap'
import { runStatsTask, type StatsTask } from '../../../src/experiments/index.js'
import { DAY, HOUR, T0, experimentWorld, multivariateFlag, rejected, type ExperimentWorld } from './fixture.js'

const START = T0 + DAY
const FUNNEL = { insight: 'FUNNELS', events: [{ id: 'viewed', order: 0 }, { id: 'bought', order: 1 }] }
const TREND = { insight: 'TRENDS', events: [{ id: 'clicked', order: 0 }] }

type Row = Parameters<ExperimentWorld['events']>[0][number]

/** `entered` persons of a variant view; the first `converted` of them buy a minute later. */
function funnelRows(key: string, variant: string, entered: number, converted: number, at = START + HOUR): Row[] {
  const rows: Row[] = []
  for (let i = 0; i < entered; i++) {
    const distinctId = `${variant}-${i}`
    rows.push({ distinctId, event: 'viewed', at: at + i, properties: { [`$feature/${key}`]: variant } })
    if (i < converted) rows.push({ distinctId, event: 'bought', at: at + i + 60_000, properties: { [`$feature/${key}`]: variant } })
  }
  return rows
}

/** `exposed` persons called the flag; `clicks` click events spread over them. */
function trendRows(key: string, variant: string, exposed: number, clicks: number): Row[] {
  const rows: Row[] = []
  for (let i = 0; i < exposed; i++) {
    rows.push({ distinctId: `${variant}-${i}`, event: '$feature_flag_called', at: START + HOUR + i, properties: { $feature_flag: key, $feature_flag_response: variant } })
  }
  for (let i = 0; i < clicks; i++) {
    rows.push({ distinctId: `${variant}-${i % Math.max(exposed, 1)}`, event: 'clicked', at: START + 2 * HOUR + i, properties: { [`$feature/${key}`]: variant } })
  }
  return rows
}

function launched(w: ExperimentWorld, filters: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  return w.create({ name: 'E', feature_flag_key: 'k', start_date: new Date(START).toISOString(), filters, ...extra })
}

t.test('primary results', async (t) => {
  t.test('a funnel: PostHog shape, entered = first step, converted = all steps', async (t) => {
    const w = experimentWorld()
    t.teardown(() => w.close())
    w.advance(3 * DAY)
    const e = launched(w, FUNNEL)
    await w.events([...funnelRows('k', 'control', 200, 20), ...funnelRows('k', 'test', 210, 60)])
    const pkg = (await w.experiments.results(w.project, e.id)) as any
    t.equal(pkg.is_cached, false)
    t.equal(pkg.last_refresh, new Date(w.now()).toISOString())
    const r = pkg.result
    t.same(r.variants, [
      { key: 'control', success_count: 20, failure_count: 180 },
      { key: 'test', success_count: 60, failure_count: 150 },
    ])
    t.same(Object.keys(r), ['insight', 'filters', 'probability', 'significant', 'significance_code', 'expected_loss', 'variants', 'credible_intervals', 'srm'])
    t.equal(r.significance_code, 'significant')
    t.equal(r.significant, true)
    t.ok(r.probability.test > 0.99, 'test wins')
    t.ok(r.expected_loss < 0.01)
    t.match(r.credible_intervals, { control: [Number, Number], test: [Number, Number] })
    t.match(r.srm, { mismatch: false, observed: { control: 200, test: 210 } })
    t.same(r.insight[1][0], { action_id: 'viewed', name: 'viewed', custom_name: null, order: 0, count: 210, type: 'events', breakdown: ['test'], breakdown_value: ['test'] })
    t.equal(r.insight[1][1].count, 60)
    t.match(r.filters, {
      insight: 'FUNNELS',
      events: FUNNEL.events,
      date_from: new Date(START).toISOString(),
      date_to: null,
      explicit_date: true,
      breakdown: '$feature/k',
      breakdown_type: 'event',
      properties: [],
    })
    const again = (await w.experiments.results(w.project, e.id)) as any
    t.same(again.result, r, 'the same data gives the same answer')
  })

  t.test('a trend: counts per variant against unique exposed persons', async (t) => {
    const w = experimentWorld()
    t.teardown(() => w.close())
    w.advance(3 * DAY)
    const e = launched(w, TREND)
    await w.events([...trendRows('k', 'control', 150, 150), ...trendRows('k', 'test', 300, 600)])
    // A second exposure of the same person counts once.
    await w.events([{ distinctId: 'control-0', event: '$feature_flag_called', at: START + 3 * HOUR, properties: { $feature_flag: 'k', $feature_flag_response: 'control' } }])
    const r = ((await w.experiments.results(w.project, e.id)) as any).result
    t.same(r.variants, [
      { key: 'control', count: 150, exposure: 1, absolute_exposure: 150 },
      { key: 'test', count: 600, exposure: 2, absolute_exposure: 300 },
    ])
    t.same(Object.keys(r), ['insight', 'filters', 'exposure_filters', 'probability', 'significant', 'significance_code', 'p_value', 'variants', 'credible_intervals', 'srm'])
    t.equal(r.significance_code, 'significant')
    t.ok(r.p_value < 0.05)
    t.match(r.srm, { mismatch: true, observed: { control: 150, test: 300 } }, 'a 1:2 split on a 50/50 flag is a sample ratio mismatch')
    t.same(r.insight[0], { action: { id: 'clicked', type: 'events', order: 0, name: 'clicked', custom_name: null, math: 'total' }, label: 'clicked', breakdown_value: 'control', count: 150 })
    t.match(r.exposure_filters, { events: [{ id: '$feature_flag_called', math: 'dau' }], breakdown: '$feature_flag_response' })
  })

  t.test("a holdout's people are one more variant of the primary metric, not of secondary ones, as in PostHog", async (t) => {
    const w = experimentWorld()
    t.teardown(() => w.close())
    w.advance(3 * DAY)
    const h = w.experiments.holdouts.create(w.project, { name: 'H', filters: [{ rollout_percentage: 10 }] }, w.owner.id)
    const held = `holdout-${h.id}`
    const e = launched(w, TREND, { holdout_id: h.id, secondary_metrics: [{ name: 'clicks', filters: TREND }] })
    await w.events([...trendRows('k', 'control', 150, 150), ...trendRows('k', 'test', 150, 160), ...trendRows('k', held, 30, 20)])
    const r = ((await w.experiments.results(w.project, e.id)) as any).result
    t.same(r.variants.map((v: any) => [v.key, v.count, v.absolute_exposure]), [['control', 150, 150], ['test', 160, 150], [held, 20, 30]])
    t.same(Object.keys(r.probability), ['control', 'test', held])
    t.same(r.srm.observed, { control: 150, test: 150 }, 'the sample ratio check reads the flag split alone')
    const secondary = ((await w.experiments.secondaryResults(w.project, e.id, '0')) as any).result
    t.same(secondary.result, { control: 150, test: 160 })
  })

  t.test('exposures missing for a variant count as 1, as in PostHog', async (t) => {
    const w = experimentWorld()
    t.teardown(() => w.close())
    w.advance(3 * DAY)
    const e = launched(w, TREND)
    await w.events([...trendRows('k', 'control', 120, 100), ...trendRows('k', 'test', 0, 0)])
    await w.events([{ distinctId: 'x', event: 'clicked', at: START + HOUR, properties: { '$feature/k': 'test' } }])
    const r = ((await w.experiments.results(w.project, e.id)) as any).result
    t.same(r.variants[1], { key: 'test', count: 1, exposure: 1, absolute_exposure: 1 })
    t.equal(r.significance_code, 'not_enough_exposure')
  })

  t.test('only events inside the window count', async (t) => {
    const w = experimentWorld()
    t.teardown(() => w.close())
    w.advance(10 * DAY)
    const e = launched(w, FUNNEL, { end_date: new Date(START + 2 * DAY).toISOString() })
    await w.events([
      ...funnelRows('k', 'control', 100, 10),
      ...funnelRows('k', 'test', 100, 10),
      ...funnelRows('k', 'control', 7, 7, START - HOUR).map((r) => ({ ...r, distinctId: `early-${r.distinctId}` })),
      ...funnelRows('k', 'test', 9, 9, START + 3 * DAY).map((r) => ({ ...r, distinctId: `late-${r.distinctId}` })),
    ])
    const r = ((await w.experiments.results(w.project, e.id)) as any).result
    t.same(r.variants, [
      { key: 'control', success_count: 10, failure_count: 90 },
      { key: 'test', success_count: 10, failure_count: 90 },
    ])
    t.equal(r.filters.date_to, new Date(START + 2 * DAY).toISOString())
  })

  t.test('the funnel window comes from the filters', async (t) => {
    const w = experimentWorld()
    t.teardown(() => w.close())
    w.advance(3 * DAY)
    const e = launched(w, { ...FUNNEL, funnel_window_interval: 30, funnel_window_interval_unit: 'second' })
    await w.events([...funnelRows('k', 'control', 100, 50), ...funnelRows('k', 'test', 100, 50)])
    const r = ((await w.experiments.results(w.project, e.id)) as any).result
    t.same(r.variants.map((v: any) => v.success_count), [0, 0], 'buying a minute later is outside a 30 s window')
  })

  const errors: Array<[string, Record<string, unknown> | null, Row[], { code: string; detail: string }]> = [
    ['no target metric', {}, [], { code: 'invalid', detail: 'Experiment has no target metric' }],
    [
      'no events at all',
      FUNNEL,
      [],
      { code: 'no-results', detail: '{"no-events": true, "no-flag-info": true, "no-control-variant": true, "no-test-variant": true}' },
    ],
    [
      'no control data',
      FUNNEL,
      funnelRows('k', 'test', 5, 1),
      { code: 'invalid', detail: '{"no-events": false, "no-flag-info": false, "no-control-variant": true, "no-test-variant": false}' },
    ],
    [
      'no test data (trend)',
      TREND,
      trendRows('k', 'control', 5, 5),
      { code: 'invalid', detail: '{"no-events": false, "no-flag-info": false, "no-control-variant": false, "no-test-variant": true}' },
    ],
    ['an action the project does not have', { insight: 'FUNNELS', actions: [{ id: 3, order: 0 }] }, [], { code: 'invalid', detail: 'Action ID 3 does not exist!' }],
    [
      'person property filters',
      { insight: 'TRENDS', events: [{ id: 'x', properties: [{ key: 'email', value: 'a', type: 'person' }] }] },
      [],
      { code: 'invalid', detail: 'Only event and HogQL property filters are supported in experiment metrics, not "person".' },
    ],
    [
      'trend math other than the total',
      { insight: 'TRENDS', events: [{ id: 'x', math: 'dau' }] },
      [],
      { code: 'invalid', detail: 'Trend math "dau" is not supported in experiment metrics; only the total count is.' },
    ],
    ['a metric without events', { insight: 'FUNNELS', events: [] }, [], { code: 'invalid', detail: 'Experiment has no target metric' }],
    [
      'a funnel of more steps than the stores walk',
      { insight: 'FUNNELS', events: Array.from({ length: 32 }, (_, order) => ({ id: 'x', order })) },
      [],
      { code: 'invalid', detail: 'Funnel metrics take at most 31 steps here.' },
    ],
    [
      'a funnel window in a unit only Object.prototype knows',
      { ...FUNNEL, funnel_window_interval: 30, funnel_window_interval_unit: 'constructor' },
      [],
      { code: 'invalid', detail: 'Unknown funnel_window_interval_unit "constructor".' },
    ],
  ]
  for (const [name, filters, rows, wanted] of errors) {
    t.test(`400 for ${name}`, async (t) => {
      const w = experimentWorld()
      t.teardown(() => w.close())
      w.advance(3 * DAY)
      const e = launched(w, filters ?? {})
      await w.events(rows)
      t.match(await rejected(w.experiments.results(w.project, e.id)), { status: 400, type: 'validation_error', attr: null, ...wanted })
    })
  }

  t.test("a trend with a custom exposure filter: exposures are its entity per $feature/<key> value, by its math, as in PostHog", async (t) => {
    const custom = (math?: string) => ({ events: [{ id: 'viewed pricing', order: 0, ...(math ? { math } : {}), properties: [{ key: 'plan', value: 'pro' }] }] })
    /** `persons` persons of a variant each view pricing twice on the pro plan; the rest must not count. */
    const views = (variant: string, persons: number): Row[] => [
      ...Array.from({ length: persons }, (_, i) => [START + HOUR + i, START + 3 * HOUR + i].map((at) => ({
        distinctId: `${variant}-${i}`, event: 'viewed pricing', at, properties: { plan: 'pro', '$feature/k': variant },
      }))).flat(),
      { distinctId: `${variant}-free`, event: 'viewed pricing', at: START + HOUR, properties: { plan: 'free', '$feature/k': variant } },
      { distinctId: `${variant}-no-flag`, event: 'viewed pricing', at: START + HOUR, properties: { plan: 'pro' } },
      { distinctId: `${variant}-before`, event: 'viewed pricing', at: START - HOUR, properties: { plan: 'pro', '$feature/k': variant } },
    ]
    for (const [math, perPerson] of [['dau', 1], [undefined, 2], ['total', 2]] as const) {
      const w = experimentWorld()
      t.teardown(() => w.close())
      w.advance(3 * DAY)
      const e = launched(w, TREND, { parameters: { custom_exposure_filter: custom(math) }, secondary_metrics: [{ name: 'clicks', filters: TREND }] })
      // $feature_flag_called would give 150 and 300 exposed.
      await w.events([...trendRows('k', 'control', 150, 150), ...trendRows('k', 'test', 300, 600), ...views('control', 100), ...views('test', 200)])
      const r = ((await w.experiments.results(w.project, e.id)) as any).result
      t.same(r.variants, [
        { key: 'control', count: 150, exposure: 1, absolute_exposure: 100 * perPerson },
        { key: 'test', count: 600, exposure: 2, absolute_exposure: 200 * perPerson },
      ], `math ${math}: ${perPerson} exposure a person`)
      t.match(r.exposure_filters, {
        events: custom(math).events,
        insight: 'TRENDS',
        display: 'ActionsLineGraphCumulative',
        date_from: new Date(START).toISOString(),
        breakdown: '$feature/k',
        breakdown_type: 'event',
        properties: [{ key: '$feature/k', operator: 'exact', value: ['control', 'test'], type: 'event' }],
      })
      const secondary = ((await w.experiments.secondaryResults(w.project, e.id, '0')) as any).result
      t.match(secondary.exposure_filters, { events: [{ id: '$feature_flag_called' }] }, 'secondary metrics keep $feature_flag_called, as PostHog passes them no custom exposure')
      t.same(secondary.variants.map((v: any) => v.absolute_exposure), [150, 300])
    }
  })

  t.test('a custom exposure filter is read by trend results only, and refused where it cannot be computed', async (t) => {
    const w = experimentWorld()
    t.teardown(() => w.close())
    w.advance(3 * DAY)
    const bad = { actions: [{ id: 'oogabooga', order: 0 }] }
    const funnel = launched(w, FUNNEL, { parameters: { custom_exposure_filter: bad } })
    await w.events([...funnelRows('k', 'control', 10, 2), ...funnelRows('k', 'test', 10, 3)])
    t.equal(((await w.experiments.results(w.project, funnel.id)) as any).result.variants.length, 2, 'a funnel has no exposures to read')
    const refusals: Array<[unknown, string]> = [
      [bad, 'Invalid action ID'],
      [{ events: [{ id: 'x', math: 'weekly_active' }] }, 'Exposure math "weekly_active" is not supported in custom exposure filters; only the total count and dau are.'],
      [{ events: [{ id: 'x', properties: [{ key: 'email', value: 'a', type: 'person' }] }] }, 'Only event and HogQL property filters are supported in experiment metrics, not "person".'],
    ]
    for (const [filter, detail] of refusals) {
      const e = launched(w, TREND, { parameters: { custom_exposure_filter: filter } })
      t.match(await rejected(w.experiments.results(w.project, e.id)), { status: 400, detail })
    }
    const empty = launched(w, TREND, { parameters: { custom_exposure_filter: {} } })
    await w.events([...trendRows('k', 'control', 5, 5), ...trendRows('k', 'test', 5, 5)])
    t.match(((await w.experiments.results(w.project, empty.id)) as any).result.exposure_filters, { breakdown: '$feature_flag_response' }, 'an empty filter is none')
  })

  t.test('400 for a draft', async (t) => {
    const w = experimentWorld()
    t.teardown(() => w.close())
    const e = w.create({ name: 'E', feature_flag_key: 'k', filters: FUNNEL })
    t.match(await rejected(w.experiments.results(w.project, e.id)), { status: 400, detail: 'Experiment has not been launched yet' })
  })
})

t.test('secondary results', async (t) => {
  const w = experimentWorld()
  t.teardown(() => w.close())
  w.advance(3 * DAY)
  const e = launched(w, FUNNEL, {
    secondary_metrics: [
      { name: 'Buys', filters: FUNNEL },
      { name: 'Clicks', filters: TREND },
      { name: 'Nothing yet', filters: { insight: 'TRENDS', events: [{ id: 'never' }] } },
    ],
  })
  await w.events([...funnelRows('k', 'control', 100, 10), ...funnelRows('k', 'test', 100, 25), ...trendRows('k', 'control', 100, 120), ...trendRows('k', 'test', 100, 80)])

  t.test('without id: every metric, in order, with PostHog summary values', async (t) => {
    const pkg = (await w.experiments.secondaryResults(w.project, e.id, null)) as any
    t.equal(pkg.result.length, 3)
    t.match(pkg.result[0], { name: 'Buys', result: { control: 0.1, test: 0.25 }, significance_code: String, expected_loss: Number, insight: Array })
    t.match(pkg.result[1], { name: 'Clicks', result: { control: 120, test: 80 }, p_value: Number, exposure_filters: Object })
    t.same(pkg.result[2].result, {}, 'a metric without data has an empty summary')
    t.notOk('probability' in pkg.result[2], 'and no statistics')
  })

  t.test('with id: that metric only, seeded on its own', async (t) => {
    const one = (await w.experiments.secondaryResults(w.project, e.id, '1')) as any
    const all = (await w.experiments.secondaryResults(w.project, e.id, null)) as any
    t.same(one.result, all.result[1])
  })

  const bad: Array<[string, string]> = [
    ['x', 'Secondary metric id must be an integer'],
    ['', 'Secondary metric id is required'],
    ['3', 'Invalid metric ID'],
    ['-1', 'Invalid metric ID'],
  ]
  for (const [id, detail] of bad) {
    t.test(`id=${JSON.stringify(id)} is 400 "${detail}"`, async (t) => {
      t.match(await rejected(w.experiments.secondaryResults(w.project, e.id, id)), { status: 400, detail })
    })
  }

  t.test('400 without secondary metrics, or with one of another insight', async (t) => {
    const none = launched(w, FUNNEL, { feature_flag_key: 'k2' })
    t.match(await rejected(w.experiments.secondaryResults(w.project, none.id, null)), { detail: 'Experiment has no secondary metrics' })
    const odd = launched(w, FUNNEL, { feature_flag_key: 'k3', secondary_metrics: [{ name: 'p', filters: { insight: 'PATHS', events: [{ id: 'a' }] } }] })
    t.match(await rejected(w.experiments.secondaryResults(w.project, odd.id, '0')), { detail: 'Secondary metrics need to be funnel or trend insights' })
  })
})

t.test('statistics run inline for two variants, offloaded and cached for more', async (t) => {
  const tasks: StatsTask[] = []
  const w = experimentWorld({
    offload: async (task) => {
      tasks.push(task)
      return runStatsTask(task)
    },
  })
  t.teardown(() => w.close())
  w.advance(3 * DAY)
  const two = launched(w, FUNNEL)
  w.m.featureFlags.create(w.project, multivariateFlag('three', ['control', 'a', 'b']), w.owner.id)
  const three = w.create({ name: 'Three', feature_flag_key: 'three', start_date: new Date(START).toISOString(), filters: FUNNEL })
  await w.events([
    ...funnelRows('k', 'control', 100, 10),
    ...funnelRows('k', 'test', 100, 20),
    ...funnelRows('three', 'control', 100, 10).map((r) => ({ ...r, distinctId: `3${r.distinctId}` })),
    ...funnelRows('three', 'a', 100, 20).map((r) => ({ ...r, distinctId: `3${r.distinctId}` })),
    ...funnelRows('three', 'b', 100, 30).map((r) => ({ ...r, distinctId: `3${r.distinctId}` })),
  ])
  await w.experiments.results(w.project, two.id)
  t.equal(tasks.length, 0, 'two variants stay inline')
  const first = (await w.experiments.results(w.project, three.id)) as any
  t.equal(tasks.length, 1, 'three variants go to the pool')
  t.same(tasks[0], {
    kind: 'funnel',
    seed: `${three.id}:primary`,
    variants: [
      { key: 'control', success_count: 10, failure_count: 90 },
      { key: 'a', success_count: 20, failure_count: 80 },
      { key: 'b', success_count: 30, failure_count: 70 },
    ],
    split: [
      { key: 'control', rollout_percentage: 34 },
      { key: 'a', rollout_percentage: 33 },
      { key: 'b', rollout_percentage: 33 },
    ],
  })
  const second = (await w.experiments.results(w.project, three.id)) as any
  t.equal(tasks.length, 1, 'the same data is answered from the cache')
  t.same(second.result, first.result)
  t.ok(first.result.probability.b > 0.9)
})
