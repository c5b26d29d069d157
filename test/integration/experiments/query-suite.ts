/**
 * The new engine's results end to end, once per event store: an experiment with a control/test flag is
 * launched over the API, flag calls and metric events for 120 persons per variant go through /batch/ (plus a
 * person exposed to both variants, one with an unknown variant, clicks before exposure and another flag's
 * calls, none of which may count), and `POST …/query/` with an ExperimentQuery must answer the counts, sums
 * and sums of squares computed here from the same plan, and the statistics the engine's formulas give for
 * them; broken down by the first flag call's `$browser` (and `plan`), per group too. A second experiment, with
 * three variants and a holdout, shows which variants are counted and against which baseline.
 */
import type { Test } from 'tap'
import { experimentResult, type ResultOptions } from '../../../src/experiments/query/statistics.js'
import { experimentServer, type BatchEvent, type ExperimentServer } from './fixture.js'

export interface StoreSetup {
  env: () => Record<string, string>
}

const PER_VARIANT = 120
const HOUR = 3_600_000
const VARIANTS = ['control', 'test'] as const
type Variant = (typeof VARIANTS)[number]

/** What each person does after their flag call; the same function gives the expected answers. */
function plan(variant: Variant, i: number) {
  const clicks = (i % 3) + (variant === 'test' ? 1 : 0)
  const converts = i % 2 === 0 || (variant === 'test' && i % 3 === 0)
  return { clicks, converts, amount: (i % 5) * 10 + (variant === 'test' ? 5 : 0) }
}

/** Browsing before exposure (recent: within a day of it; one more 36 hours before) and after, correlated. */
function browsing(variant: Variant, i: number) {
  const recent = i % 4
  return { recent, after: recent + (i % 3 === 0 ? 1 : 0) + (variant === 'test' ? 1 : 0) }
}

const NULL_LABEL = '$$_posthog_breakdown_null_$$'
/** The first flag call's properties: Chrome for even i (60 a variant), Safari for i % 4 = 1 (30), else null or missing (30). */
function browserOf(i: number): Record<string, unknown> {
  const plan = i % 3 === 0 ? 'pro' : 'free'
  if (i % 2 === 0) return { $browser: 'Chrome', plan }
  if (i % 4 === 1) return { $browser: 'Safari', plan }
  return i % 8 === 3 ? { $browser: null, plan } : { plan }
}
const gold = (i: number) => i % 5 === 0
const groupOf = (i: number, keys: readonly string[]) => keys.map((k) => (browserOf(i)[k] ?? NULL_LABEL) as string)

interface Expected {
  n: number
  sum: number
  sum_squares: number
}

function expect(value: (variant: Variant, i: number) => number, only: (i: number) => boolean = () => true): Record<Variant, Expected> {
  const out = {} as Record<Variant, Expected>
  for (const variant of VARIANTS) {
    const values = Array.from({ length: PER_VARIANT }, (_, i) => i)
      .filter(only)
      .map((i) => value(variant, i))
    out[variant] = { n: values.length, sum: values.reduce((a, b) => a + b, 0), sum_squares: values.reduce((a, b) => a + b * b, 0) }
  }
  return out
}

/** The held-out experiment's arms: its flag's three variants and its holdout's people. */
const HELD_ARMS = ['control', 'test', 'test-2', 'holdout'] as const
const HELD_PER_ARM = 60
/** Clicks of each person of the held-out experiment after exposure: 1 or 2 in a variant, 10 held out. */
const heldClicks = (arm: (typeof HELD_ARMS)[number], i: number) => (arm === 'holdout' ? 10 : 1 + (i % 2))

export function querySuite(t: Test, setup: StoreSetup): void {
  let f: ExperimentServer
  let experimentId = 0
  let heldId = 0
  let holdoutId = 0
  const start = Date.now() - 2 * HOUR
  const exposedAt = (variant: Variant, i: number) => start + HOUR + (variant === 'test' ? 500_000 : 0) + i * 1000

  function events(): BatchEvent[] {
    const out: BatchEvent[] = []
    const call = (id: string, at: number, response: string, flag = 'q-flag', more: Record<string, unknown> = {}) =>
      out.push({ event: '$feature_flag_called', distinct_id: id, at, properties: { $feature_flag: flag, $feature_flag_response: response, ...more } })
    for (const variant of VARIANTS) {
      for (let i = 0; i < PER_VARIANT; i++) {
        const id = `q-${variant}-${i}`
        const at = exposedAt(variant, i)
        const p = plan(variant, i)
        out.push({ event: 'clicked', distinct_id: id, at: at - 60_000, properties: { $session_id: `${id}-before` } })
        // Every fifth person is a gold-tier one (a person property, for person filters), in company co-(i % 4).
        call(id, at, variant, 'q-flag', { ...browserOf(i), $set: { tier: gold(i) ? 'gold' : 'basic' }, $groups: { company: `co-${i % 4}` } })
        // A second call later, from another browser: the first one is the exposure and its group.
        call(id, at + 100_000, variant, 'q-flag', { $browser: 'Firefox', plan: 'enterprise' })
        // Each click in a company of the person's, and in one of two teams (distinct teams: min(clicks, 2)).
        for (let c = 0; c < p.clicks; c++) {
          const $groups = { company: `co-${i % 4}`, team: `team-${c % 2}` }
          out.push({ event: 'clicked', distinct_id: id, at: at + 2000 * (c + 1), properties: { $session_id: `${id}-s${Math.floor(c / 2)}`, $current_url: `https://q.test/${c}`, $groups } })
        }
        out.push({ event: 'viewed pricing', distinct_id: id, at: at + 10_000, properties: { '$feature/q-flag': variant } })
        // Browsing before exposure (CUPED's covariate): one browse 36 hours before, the rest before the start.
        const b = browsing(variant, i)
        out.push({ event: 'browsed', distinct_id: id, at: at - 36 * HOUR })
        for (let k = 0; k < b.recent; k++) out.push({ event: 'browsed', distinct_id: id, at: start - 30 * 60_000 + k * 1000 })
        for (let k = 0; k < b.after; k++) out.push({ event: 'browsed', distinct_id: id, at: at + 30_000 + k * 1000 })
        if (p.converts) out.push({ event: 'purchased', distinct_id: id, at: at + 20_000, properties: { amount: p.amount } })
        // A purchase before viewing converts nobody in an ordered funnel, and adds nothing to the sum.
        else if (i % 4 === 1) out.push({ event: 'purchased', distinct_id: id, at: at + 5000, properties: { amount: 'n/a' } })
      }
    }
    // Exposed to both variants: excluded (PostHog's default multiple_variant_handling).
    call('q-both', start + HOUR, 'control')
    call('q-both', start + HOUR + 1000, 'test')
    // Not a variant of the flag, and another flag's call.
    call('q-other', start + HOUR, 'other')
    call('q-elsewhere', start + HOUR, 'control', 'another-flag')
    for (const id of ['q-both', 'q-other', 'q-elsewhere']) {
      for (let c = 0; c < 5; c++) out.push({ event: 'clicked', distinct_id: id, at: start + HOUR + 2000 * (c + 1) })
      out.push({ event: 'purchased', distinct_id: id, at: start + HOUR + 30_000, properties: { amount: 1000 } })
    }
    // The held-out experiment's flag: each arm's people, and two exposed twice: to control and then the
    // holdout, and to control and then test-2.
    for (const arm of HELD_ARMS) {
      for (let i = 0; i < HELD_PER_ARM; i++) {
        const id = `h-${arm}-${i}`
        const at = start + HOUR + i * 1000
        call(id, at, arm === 'holdout' ? `holdout-${holdoutId}` : arm, 'h-flag')
        for (let c = 0; c < heldClicks(arm, i); c++) out.push({ event: 'clicked', distinct_id: id, at: at + 2000 * (c + 1) })
      }
    }
    for (const [id, second] of [['h-mixed', `holdout-${holdoutId}`], ['h-mixed2', 'test-2']]) {
      call(id, start + HOUR, 'control', 'h-flag')
      call(id, start + HOUR + 1000, second, 'h-flag')
      for (let c = 0; c < 4; c++) out.push({ event: 'clicked', distinct_id: id, at: start + HOUR + 10_000 + c * 1000 })
    }
    out.push(...exposureModeEvents(), ...bounceEvents())
    // The companies' sizes (a group property): co-k has k people.
    for (let k = 0; k < 4; k++) out.push({ event: '$groupidentify', distinct_id: 'q-admin', at: start, properties: { $group_type: 'company', $group_key: `co-${k}`, $group_set: { size: k } } })
    return out
  }

  /**
   * The third experiment's (a-flag) people, as PostHog's test_activation_config.py sets them up: four a
   * variant exposed by `$experiment_exposure` (1 purchase after in control, 2 in test), and for activation
   * mode four a variant called, buying before activating (no count), activating (its `$browser` the
   * activation's, the call's Flag) and buying after (1 in control, 2 in test), plus an early buyer a variant
   * (bought between call and activation only), one called and never activated, one activated only before
   * the call, and one called with both variants. The activating people's calls carry a `wave` (first: i < 2).
   */
  function exposureModeEvents(): BatchEvent[] {
    const out: BatchEvent[] = []
    const at0 = start + HOUR
    const flag = (id: string, at: number, variant: string, event = '$feature_flag_called', key = 'a-flag', more: Record<string, unknown> = {}) =>
      out.push({ event, distinct_id: id, at, properties: { $feature_flag: key, $feature_flag_response: variant, $browser: 'Flag', ...more } })
    const plain = (id: string, event: string, at: number, properties: Record<string, unknown> = {}) => out.push({ event, distinct_id: id, at, properties })
    for (const variant of VARIANTS) {
      for (let i = 0; i < 4; i++) {
        const id = `a-ee-${variant}-${i}`
        flag(id, at0 + i * 1000, variant, '$experiment_exposure')
        for (let k = 0; k < (variant === 'test' ? 2 : 1); k++) plain(id, 'a-bought', at0 + 60_000 + k * 1000)
      }
      // Another flag's copy: not this experiment's.
      flag(`a-ee-other-${variant}`, at0, variant, '$experiment_exposure', 'another-flag')
      plain(`a-ee-other-${variant}`, 'a-bought', at0 + 60_000)
      for (let i = 0; i < 4; i++) {
        const id = `a-act-${variant}-${i}`
        flag(id, at0 + i * 1000, variant, '$feature_flag_called', 'a-flag', { wave: i < 2 ? 'first' : 'second' })
        plain(id, 'a-bought', at0 + 10_000)
        plain(id, 'a-activated', at0 + 20_000, { $browser: i % 2 === 0 ? 'Activated-Chrome' : 'Activated-Safari' })
        for (let k = 0; k < (variant === 'test' ? 2 : 1); k++) plain(id, 'a-bought', at0 + 30_000 + k * 1000)
      }
      flag(`a-early-${variant}`, at0, variant)
      plain(`a-early-${variant}`, 'a-bought', at0 + 10_000)
      plain(`a-early-${variant}`, 'a-activated', at0 + 20_000, { $browser: 'Activated-Chrome' })
    }
    flag('a-flag-only', at0, 'control')
    plain('a-flag-only', 'a-bought', at0 + 10_000)
    plain('a-pre', 'a-activated', at0 - 60_000)
    flag('a-pre', at0, 'control')
    plain('a-pre', 'a-bought', at0 + 10_000)
    flag('a-both', at0, 'control')
    flag('a-both', at0 + 1000, 'test')
    plain('a-both', 'a-activated', at0 + 20_000)
    plain('a-both', 'a-bought', at0 + 30_000)
    return out
  }

  /**
   * The fourth experiment's (b-flag) people: four a variant, each seen (`b-seen`) at the start of a session of
   * its own with, by i: a pageview (a bounce however counted); a screen alone (a bounce only when screens count);
   * a pageview and an event 7 s later (a bounce under 10 s, not under 5); a pageview and an autocapture 1 s later
   * (a bounce in no mode).
   */
  function bounceEvents(): BatchEvent[] {
    const out: BatchEvent[] = []
    for (const variant of VARIANTS) {
      for (let i = 0; i < 4; i++) {
        const id = `b-${variant}-${i}`
        const at = start + HOUR + i * 1000
        const $session_id = `${id}-session`
        out.push({ event: '$feature_flag_called', distinct_id: id, at, properties: { $feature_flag: 'b-flag', $feature_flag_response: variant } })
        out.push({ event: 'b-seen', distinct_id: id, at: at + 1000, properties: { $session_id } })
        out.push({ event: i === 1 ? '$screen' : '$pageview', distinct_id: id, at: at + 1000, properties: { $session_id } })
        if (i === 2) out.push({ event: 'b-later', distinct_id: id, at: at + 8000, properties: { $session_id } })
        if (i === 3) out.push({ event: '$autocapture', distinct_id: id, at: at + 2000, properties: { $session_id } })
      }
    }
    return out
  }

  t.before(async () => {
    f = await experimentServer(setup.env())
    const res = await f.api('POST', f.experiments, { name: 'New engine', feature_flag_key: 'q-flag', start_date: new Date(start).toISOString() })
    if (res.status !== 201) throw new Error(`create: ${res.status} ${res.text}`)
    experimentId = res.body.id
    const holdout = await f.api('POST', `${f.base}/experiment_holdouts/`, { name: 'Held out', filters: [{ properties: [], rollout_percentage: 20 }] })
    if (holdout.status !== 201) throw new Error(`holdout: ${holdout.status} ${holdout.text}`)
    holdoutId = holdout.body.id
    const held = await f.api('POST', f.experiments, {
      name: 'Held out',
      feature_flag_key: 'h-flag',
      holdout_id: holdoutId,
      start_date: new Date(start).toISOString(),
      parameters: { feature_flag_variants: ['control', 'test', 'test-2'].map((key, k) => ({ key, rollout_percentage: k === 0 ? 34 : 33 })) },
    })
    if (held.status !== 201) throw new Error(`held-out experiment: ${held.status} ${held.text}`)
    heldId = held.body.id
    const all = events()
    await f.send(all)
    const byEvent = new Map<string, number>()
    for (const e of all) byEvent.set(e.event, (byEvent.get(e.event) ?? 0) + 1)
    for (const [event, n] of byEvent) await f.waitFor(`event=${encodeURIComponent(event)}`, n, 45_000)
  })
  t.teardown(() => f?.close())

  const query = async (metric: object, path = `${f.base}/query/`) => {
    const res = await f.api('POST', path, { query: { kind: 'ExperimentQuery', experiment_id: experimentId, metric } })
    if (res.status !== 200) throw new Error(`query: ${res.status} ${res.text}`)
    return res.body
  }
  const mean = (source: object, extra: object = {}) => ({ kind: 'ExperimentMetric', metric_type: 'mean', source, ...extra })
  const clicked = { kind: 'EventsNode', event: 'clicked' }
  const pricingFunnel = {
    kind: 'ExperimentMetric',
    metric_type: 'funnel',
    series: [
      { kind: 'EventsNode', event: 'viewed pricing' },
      { kind: 'EventsNode', event: 'purchased' },
    ],
  }
  const amountPerView = {
    kind: 'ExperimentMetric',
    metric_type: 'ratio',
    numerator: { kind: 'EventsNode', event: 'purchased', math: 'sum', math_property: 'amount' },
    denominator: { kind: 'EventsNode', event: 'viewed pricing' },
  }

  /** The answer's counts must be the expected ones, and its statistics those of the engine for them. */
  function checkAnswer(t: Test, body: any, expected: Record<Variant, Expected>, type: 'mean' | 'funnel', stats: Record<string, unknown> | null = null, options: ResultOptions = {}) {
    const numbers = (v: any) => ({ n: v.number_of_samples, sum: v.sum, sum_squares: v.sum_squares })
    t.same(numbers(body.baseline), expected.control, 'baseline: control counts')
    t.equal(body.baseline.key, 'control')
    t.same(body.baseline.validation_failures, [])
    t.equal(body.variant_results.length, 1)
    t.same(numbers(body.variant_results[0]), expected.test, 'test counts')
    const toStats = (key: Variant) => ({ key, number_of_samples: expected[key].n, sum: expected[key].sum, sum_squares: expected[key].sum_squares })
    const want = experimentResult(type, (stats?.method as 'frequentist') ?? 'bayesian', stats, toStats('control'), [toStats('test')], options)
    for (const field of ['chance_to_win', 'credible_interval', 'p_value', 'confidence_interval', 'significant', 'method'] as const) {
      const wanted = (want.variant_results[0] as Record<string, unknown>)[field]
      if (wanted !== undefined) t.same(body.variant_results[0][field], wanted, field)
    }
    t.equal(body.is_cached, false)
    t.type(body.last_refresh, 'string')
  }

  t.test('a mean of the event count: clicks after each person’s first exposure', async (t) => {
    const body = await query(mean(clicked))
    checkAnswer(t, body, expect((v, i) => plan(v, i).clicks), 'mean')
    t.ok(body.variant_results[0].chance_to_win > 0.99, 'test clicks more')
    t.equal(body.variant_results[0].significant, true)
    t.equal(body.variant_results[0].method, 'bayesian')
  })

  t.test('the same under /api/environments/', async (t) => {
    const body = await query(mean(clicked), `/api/environments/${f.server.boot.project_id}/query/`)
    t.equal(body.baseline.sum, expect((v, i) => plan(v, i).clicks).control.sum)
  })

  t.test("the answer names the project's timezone, as PostHog's query runner does", async (t) => {
    const project = `/api/projects/${f.server.boot.project_id}/`
    t.equal((await query(mean(clicked))).timezone, 'UTC')
    t.equal((await f.api('PATCH', project, { timezone: 'America/Sao_Paulo' })).status, 200)
    t.teardown(() => f.api('PATCH', project, { timezone: 'UTC' }))
    t.equal((await query(mean(clicked))).timezone, 'America/Sao_Paulo')
  })

  t.test('a sum of a property, unique sessions and a conversion window', async (t) => {
    const amount = (v: Variant, i: number) => (plan(v, i).converts ? plan(v, i).amount : 0)
    checkAnswer(t, await query(mean({ ...{ kind: 'EventsNode', event: 'purchased' }, math: 'sum', math_property: 'amount' })), expect(amount), 'mean')
    checkAnswer(t, await query(mean({ ...clicked, math: 'unique_session' })), expect((v, i) => Math.ceil(plan(v, i).clicks / 2)), 'mean')
    checkAnswer(t, await query(mean(clicked, { conversion_window: 5, conversion_window_unit: 'second' })), expect((v, i) => Math.min(plan(v, i).clicks, 2)), 'mean')
  })

  t.test('dau and unique_group count distinct persons and group keys per person, as PostHog’s base_query_utils', async (t) => {
    const clicks = (v: Variant, i: number) => plan(v, i).clicks
    checkAnswer(t, await query(mean({ ...clicked, math: 'dau' })), expect((v, i) => (clicks(v, i) > 0 ? 1 : 0)), 'mean')
    const types = await f.api('GET', `${f.base}/groups_types/`)
    const indexOf = (type: string) => (types.body as Array<{ group_type: string; group_type_index: number }>).find((g) => g.group_type === type)!.group_type_index
    const team = indexOf('team')
    const company = indexOf('company')
    // Type 0 is falsy to PostHog, which then counts its constant 1: whether the person clicked at all.
    const perType = (index: number, distinct: (v: Variant, i: number) => number) => (index === 0 ? (v: Variant, i: number) => (clicks(v, i) > 0 ? 1 : 0) : distinct)
    for (const [index, distinct] of [
      [team, (v: Variant, i: number) => Math.min(clicks(v, i), 2)],
      [company, (v: Variant, i: number) => (clicks(v, i) > 0 ? 1 : 0)],
    ] as const) {
      checkAnswer(t, await query(mean({ ...clicked, math: 'unique_group', math_group_type_index: index })), expect(perType(index, distinct)), 'mean')
    }
    const bad = await f.api('POST', `${f.base}/query/`, {
      query: { kind: 'ExperimentQuery', experiment_id: experimentId, metric: mean({ ...clicked, math: 'unique_group', math_group_type_index: 7 }) },
    })
    t.equal(bad.status, 400)
    t.match(bad.body, { type: 'validation_error', code: 'invalid', detail: 'math_group_type_index must be one of 0, 1, 2, 3, 4.' })
  })

  t.test('a threshold makes a mean the proportion of persons who reached it, as PostHog’s mean query builder', async (t) => {
    const reached = expect((v, i) => (plan(v, i).clicks >= 2 ? 1 : 0))
    t.same([reached.control.sum, reached.test.sum], [40, 80], 'i % 3 = 2 in control; 1 or 2 in test')
    const clicks = { ...clicked, math: 'total' }
    const body = await query(mean(clicks, { threshold: 2 }))
    checkAnswer(t, body, reached, 'mean', null, { threshold: true })
    t.equal(body.variant_results[0].significant, true)
    const amount = (v: Variant, i: number) => (plan(v, i).converts && plan(v, i).amount >= 25 ? 1 : 0)
    const frequentist = { method: 'frequentist' }
    t.equal((await f.api('PATCH', `${f.experiments}${experimentId}/`, { stats_config: frequentist })).status, 200)
    checkAnswer(t, await query(mean({ kind: 'EventsNode', event: 'purchased', math: 'sum', math_property: 'amount' }, { threshold: 25 })), expect(amount), 'mean', frequentist, {
      threshold: true,
    })
    t.equal((await f.api('PATCH', `${f.experiments}${experimentId}/`, { stats_config: { method: 'bayesian' } })).status, 200)
    const post = (metric: object) => f.api('POST', `${f.base}/query/`, { query: { kind: 'ExperimentQuery', experiment_id: experimentId, metric } })
    const avg = await post(mean({ ...clicked, math: 'avg', math_property: 'amount' }, { threshold: 2 }))
    t.equal(avg.status, 400)
    t.equal(avg.body.detail, 'Invalid metric: a threshold is only supported for sum or count (total) math types.')
    const winsorised = await post(mean(clicks, { threshold: 2, upper_bound_percentile: 0.9 }))
    t.equal(winsorised.body.detail, 'Invalid metric: a threshold cannot be combined with outlier handling (winsorization).')
    // No math is no `total` to PostHog's is_threshold_supported_math (pydantic's None), though it counts events.
    for (const source of [clicked, { ...clicked, math: null }]) {
      const noMath = await post(mean(source, { threshold: 2 }))
      t.match(noMath, { status: 400, body: { type: 'validation_error', code: 'invalid', attr: 'metric', detail: 'Invalid metric: a threshold is only supported for sum or count (total) math types.' } })
    }
  })

  t.test('CUPED, when stats_config asks for it: each person’s pre-exposure covariate over the lookback, and the adjusted statistics', async (t) => {
    const patchStats = async (stats_config: object) => t.equal((await f.api('PATCH', `${f.experiments}${experimentId}/`, { stats_config })).status, 200)
    const browsed = mean({ kind: 'EventsNode', event: 'browsed' })
    /** The covariate sums from the plan: `pre` the covariate, `post` the value of each person. */
    const covariates = (pre: (v: Variant, i: number) => number, post: (v: Variant, i: number) => number) => {
      const out = {} as Record<Variant, { covariate_sum: number; covariate_sum_squares: number; covariate_sum_product: number }>
      for (const v of VARIANTS) {
        const is = Array.from({ length: PER_VARIANT }, (_, i) => i)
        out[v] = {
          covariate_sum: is.reduce((a, i) => a + pre(v, i), 0),
          covariate_sum_squares: is.reduce((a, i) => a + pre(v, i) ** 2, 0),
          covariate_sum_product: is.reduce((a, i) => a + pre(v, i) * post(v, i), 0),
        }
      }
      return out
    }
    const checkCuped = (t: Test, body: any, expected: Record<Variant, Expected>, cov: ReturnType<typeof covariates>, type: 'mean' | 'funnel', stats: Record<string, unknown>) => {
      const sums = (v: any) => ({ covariate_sum: v.covariate_sum, covariate_sum_squares: v.covariate_sum_squares, covariate_sum_product: v.covariate_sum_product })
      t.same(sums(body.baseline), cov.control, 'control covariates')
      t.same(sums(body.variant_results[0]), cov.test, 'test covariates')
      const toStats = (key: Variant) => ({ key, number_of_samples: expected[key].n, sum: expected[key].sum, sum_squares: expected[key].sum_squares, ...cov[key] })
      const method = stats.method === 'frequentist' ? 'frequentist' : 'bayesian'
      const want = experimentResult(type, method, stats, toStats('control'), [toStats('test')], { cuped: true })
      const plain = experimentResult(type, method, stats, toStats('control'), [toStats('test')])
      const interval = method === 'frequentist' ? 'confidence_interval' : 'credible_interval'
      t.same(body.variant_results[0][interval], (want.variant_results[0] as Record<string, unknown>)[interval], 'the adjusted statistics')
      t.notSame(body.variant_results[0][interval], (plain.variant_results[0] as Record<string, unknown>)[interval], 'not the unadjusted ones')
      t.same(numbersOf(body.baseline), expected.control, 'the values are the unadjusted ones')
    }
    const numbersOf = (v: any) => ({ n: v.number_of_samples, sum: v.sum, sum_squares: v.sum_squares })
    const after = (v: Variant, i: number) => browsing(v, i).after
    const recent = (v: Variant, i: number) => browsing(v, i).recent

    // Off by default: no covariates.
    const off = await query(browsed)
    t.same([off.baseline.covariate_sum, off.variant_results[0].covariate_sum_product], [null, null])
    t.same(numbersOf(off.baseline), expect(after).control)

    // A day's lookback: the browsing before the start counts, the one 36 hours before does not.
    const bayesian = { method: 'bayesian', cuped: { enabled: true, lookback_days: 1 } }
    await patchStats(bayesian)
    const body = await query(browsed)
    checkCuped(t, body, expect(after), covariates(recent, after), 'mean', bayesian)
    const width = (b: any) => b.variant_results[0].credible_interval[1] - b.variant_results[0].credible_interval[0]
    t.ok(width(body) < width(off), 'a narrower credible interval than without CUPED')

    // Two days: the older browse too. Frequentist.
    const frequentist = { method: 'frequentist', cuped: { enabled: true, lookback_days: 2 } }
    await patchStats(frequentist)
    checkCuped(t, await query(browsed), expect(after), covariates((v, i) => recent(v, i) + 1, after), 'mean', frequentist)
    // A funnel: whether its last step's event happened in the lookback.
    const browsedAfter = (v: Variant, i: number) => (after(v, i) > 0 ? 1 : 0)
    const funnel = await query({ kind: 'ExperimentMetric', metric_type: 'funnel', series: [{ kind: 'EventsNode', event: 'browsed' }] })
    checkCuped(t, funnel, expect(browsedAfter), covariates(() => 1, browsedAfter), 'funnel', frequentist)
    // Broken down: each group's covariates, adding up to everyone's.
    const byBrowser = await query(mean({ kind: 'EventsNode', event: 'browsed' }, { breakdownFilter: { breakdowns: [{ property: '$browser' }] } }))
    t.equal(byBrowser.breakdown_results.length, 3)
    t.equal(
      byBrowser.breakdown_results.reduce((a: number, g: any) => a + g.baseline.covariate_sum_product, 0),
      byBrowser.baseline.covariate_sum_product,
      'the groups’ covariate sums add up to everyone’s',
    )
    // Ratios and thresholded means are not adjusted, as in PostHog.
    const ratio = await query(amountPerView)
    t.same([ratio.baseline.covariate_sum, ratio.variant_results[0].covariate_sum], [null, null], 'no CUPED for a ratio')
    t.equal((await query(mean({ kind: 'EventsNode', event: 'browsed', math: 'total' }, { threshold: 2 }))).baseline.covariate_sum, null, 'nor for a threshold')
    await patchStats({ method: 'bayesian' })
  })

  t.test('an ordered funnel after exposure', async (t) => {
    const body = await query(pricingFunnel)
    const converted = expect((v, i) => (plan(v, i).converts ? 1 : 0))
    checkAnswer(t, body, converted, 'funnel')
    t.same(body.baseline.step_counts, [PER_VARIANT, converted.control.sum])
    t.same(body.variant_results[0].step_counts, [PER_VARIANT, converted.test.sum])

    // A step whose property is missing on an event is no match, and leaves the event's other steps standing.
    const missing = await query({
      kind: 'ExperimentMetric',
      metric_type: 'funnel',
      series: [
        { kind: 'EventsNode', event: 'viewed pricing' },
        { kind: 'EventsNode', event: 'viewed pricing', properties: [{ key: 'absent', operator: 'exact', value: 'x', type: 'event' }] },
      ],
    })
    t.same(missing.baseline.step_counts, [PER_VARIANT, 0])
  })

  t.test('a ratio: purchase amount per pricing view', async (t) => {
    const body = await query(amountPerView)
    const amount = expect((v, i) => (plan(v, i).converts ? plan(v, i).amount : 0))
    for (const [answer, variant] of [[body.baseline, 'control'], [body.variant_results[0], 'test']] as const) {
      t.same(
        [answer.number_of_samples, answer.sum, answer.sum_squares, answer.denominator_sum, answer.denominator_sum_squares, answer.numerator_denominator_sum_product],
        [PER_VARIANT, amount[variant].sum, amount[variant].sum_squares, PER_VARIANT, PER_VARIANT, amount[variant].sum],
        `${variant}: numerator and denominator sums`,
      )
    }
    t.type(body.variant_results[0].chance_to_win, 'number')
  })

  t.test("ExperimentExposureQuery: each variant's people first exposed up to each day, the totals and the sample ratio mismatch, as PostHog's exposures runner", async (t) => {
    const res = await f.api('POST', `${f.base}/query/`, { query: { kind: 'ExperimentExposureQuery', experiment_id: experimentId, feature_flag: { key: 'q-flag' } } })
    t.equal(res.status, 200, res.text)
    t.equal(res.body.kind, 'ExperimentExposureQuery', "PostHog's ExperimentExposureQueryResponse names its kind")
    const day = (ms: number) => new Date(ms).toISOString().slice(0, 10)
    const days: string[] = []
    for (let d = day(start); d <= day(Date.now()); d = day(Date.parse(d) + 86_400_000)) days.push(d)
    const upTo = (firsts: number[]) => days.map((d) => firsts.filter((ms) => day(ms) <= d).length)
    const firsts = (variant: Variant) => Array.from({ length: PER_VARIANT }, (_, i) => exposedAt(variant, i))
    t.same(res.body.timeseries, [
      { variant: 'control', days, exposure_counts: upTo(firsts('control')) },
      { variant: 'test', days, exposure_counts: upTo(firsts('test')) },
      // q-both called control, then test: excluded as $multiple, shown last.
      { variant: '$multiple', days, exposure_counts: upTo([start + HOUR]) },
    ])
    t.same(res.body.total_exposures, { control: PER_VARIANT, test: PER_VARIANT, $multiple: 1 })
    t.same(res.body.sample_ratio_mismatch, { expected: { control: PER_VARIANT, test: PER_VARIANT }, p_value: 1 }, 'an even split, evenly exposed')
    t.equal(res.body.bias_risk, null)
    t.equal(res.body.date_range.date_from, `${new Date(start).toISOString().slice(0, 19)}${start % 1000 === 0 ? '' : `.${String(start % 1000).padStart(3, '0')}000`}+00:00`)
    t.equal(res.body.is_cached, false)
    const again = await f.api('POST', `${f.base}/query/`, { query: { kind: 'ExperimentExposureQuery', experiment_id: experimentId, feature_flag: { key: 'q-flag' } } })
    t.equal(again.body.is_cached, true, 'cached as the experiment query is')
    // The held-out experiment: its holdout's calls are no exposures (who saw control and then the holdout is
    // control's), and its share of the flag rescales the split the totals are tested against.
    const held = await f.api('POST', `${f.base}/query/`, { query: { kind: 'ExperimentExposureQuery', experiment_id: heldId } })
    t.same(held.body.total_exposures, { control: HELD_PER_ARM + 1, test: HELD_PER_ARM, 'test-2': HELD_PER_ARM, $multiple: 1 })
    t.same(Object.keys(held.body.sample_ratio_mismatch.expected), ['control', 'test', 'test-2'])
    const draft = await f.api('POST', `${f.base}/query/`, { query: { kind: 'ExperimentExposureQuery', experiment_id: experimentId, start_date: null } })
    t.same(draft.body.timeseries, [], 'no start date: no days')
  })

  t.test("HogQL math: an aggregation of an expression on each event's properties, as PostHog's mean query builder aggregates it", async (t) => {
    const hogql = (math_hogql: string) => mean({ kind: 'EventsNode', event: 'purchased', math: 'hogql', math_hogql })
    const converts = (v: Variant, i: number) => plan(v, i).converts
    // The 'n/a' purchases (no conversion, i % 4 = 1) have no number: they add nothing to a sum or a count of it.
    checkAnswer(t, await query(hogql('sum(properties.amount * 2 + 1)')), expect((v, i) => (converts(v, i) ? plan(v, i).amount * 2 + 1 : 0)), 'mean')
    checkAnswer(t, await query(hogql('count(toFloat(properties.amount))')), expect((v, i) => (converts(v, i) ? 1 : 0)), 'mean')
    checkAnswer(t, await query(hogql('count()')), expect((v, i) => (converts(v, i) || i % 4 === 1 ? 1 : 0)), 'mean')
    // An 'n/a' purchase's condition is null, so if() gives 0: a value, which avg counts.
    const big = (v: Variant, i: number) => (converts(v, i) && plan(v, i).amount > 20 ? plan(v, i).amount : 0)
    checkAnswer(t, await query(hogql('avg(if(properties.amount > 20, properties.amount, 0))')), expect(big), 'mean')
    // The event's fields: its name (purchased), and its distinct id (`q-<variant>-<i>`).
    const fields = "sum(if(event = 'purchased' and distinct_id not like '%3', toFloat(properties.amount), 0))"
    checkAnswer(t, await query(hogql(fields)), expect((v, i) => (converts(v, i) && i % 10 !== 3 ? plan(v, i).amount : 0)), 'mean')
    // One purchase a person: its amount ('n/a' too) is one distinct value, and countIf counts it where it holds.
    checkAnswer(t, await query(hogql('count(distinct properties.amount)')), expect((v, i) => (converts(v, i) || i % 4 === 1 ? 1 : 0)), 'mean')
    checkAnswer(t, await query(hogql('countIf(properties.amount > 20)')), expect((v, i) => (converts(v, i) && plan(v, i).amount > 20 ? 1 : 0)), 'mean')
    const ratio = await query({ ...amountPerView, numerator: { kind: 'EventsNode', event: 'purchased', math: 'hogql', math_hogql: 'sum(properties.amount)' } })
    t.same(ratio.variant_results, (await query(amountPerView)).variant_results, "a ratio's numerator of HogQL math answers as math_property's")
    // One purchase a person: the median of one amount is the amount.
    checkAnswer(t, await query(hogql('median(properties.amount)')), expect((v, i) => (converts(v, i) ? plan(v, i).amount : 0)), 'mean')
    const refused = await f.api('POST', `${f.base}/query/`, { query: { kind: 'ExperimentQuery', experiment_id: experimentId, metric: hogql('quantileTDigest(0.9)(properties.amount)') } })
    t.equal(refused.status, 400)
    t.match(refused.body, { type: 'validation_error', detail: 'math_hogql: The aggregation quantileTDigest() is not supported in HogQL math here; sum, avg, min, max, any, anyLast, count, countIf, sumIf, avgIf, minIf, maxIf, anyIf, uniq, uniqIf, uniqExact, uniqExactIf, uniqHLL12, uniqHLL12If, uniqTheta, uniqThetaIf, countDistinct, countDistinctIf, median, quantile(level), medianExact, medianExactLow, medianExactHigh, quantileExact(level), quantileExactLow(level), quantileExactHigh(level), quantileExactInclusive(level), quantileExactExclusive(level) and their -If are.' })
  })

  t.test("HogQL property filters and the regex operator: a metric's events are those they hold for, as PostHog's property_to_expr reads them", async (t) => {
    const where = (key: string) => mean({ kind: 'EventsNode', event: 'purchased', properties: [{ type: 'hogql', key, value: null }] })
    const converts = (v: Variant, i: number) => plan(v, i).converts
    checkAnswer(t, await query(where('properties.amount > 20')), expect((v, i) => (converts(v, i) && plan(v, i).amount > 20 ? 1 : 0)), 'mean')
    // The 'n/a' purchases are texts: in the list, not numbers.
    checkAnswer(t, await query(where("properties.amount in ('n/a', '5') or properties.amount like '1%'")), expect((v, i) => (converts(v, i) ? (plan(v, i).amount === 5 || String(plan(v, i).amount).startsWith('1') ? 1 : 0) : i % 4 === 1 ? 1 : 0)), 'mean')
    // The event's fields: its name, and its distinct id (`q-<variant>-<i>`).
    const purchased = (v: Variant, i: number) => converts(v, i) || i % 4 === 1
    checkAnswer(t, await query(where("match(distinct_id, '[05]$') and event = 'purchased'")), expect((v, i) => (purchased(v, i) && /[05]$/.test(String(i)) ? 1 : 0)), 'mean')
    const regex = mean({ kind: 'EventsNode', event: 'purchased', properties: [{ key: 'amount', operator: 'regex', value: '^[12]\\d' }] })
    checkAnswer(t, await query(regex), expect((v, i) => (converts(v, i) && /^[12]\d/.test(String(plan(v, i).amount)) ? 1 : 0)), 'mean')
    const refused = await f.api('POST', `${f.base}/query/`, { query: { kind: 'ExperimentQuery', experiment_id: experimentId, metric: where('properties.amount') } })
    t.equal(refused.status, 400)
    t.match(refused.body, { type: 'validation_error', detail: /^HogQL filter "properties.amount": The expression is a text, not a condition/ })
  })

  t.test("only_count_matured_users: a mean, funnel or ratio counts only the persons first exposed at least its conversion window ago, as PostHog's maturity HAVING on the exposures", async (t) => {
    const setMatured = async (on: boolean) => t.equal((await f.api('PATCH', `${f.experiments}${experimentId}/`, { only_count_matured_users: on })).status, 200)
    await setMatured(true)
    t.teardown(() => f.api('PATCH', `${f.experiments}${experimentId}/`, { only_count_matured_users: false }))
    // A window of whole seconds that has just passed for test's person 60: every control person (exposed 500 s
    // earlier) has matured, test's first ones too, its later ones not. Each person's second call, 100 s after the
    // first, does not hold it back: the window runs from the first exposure.
    const seconds = Math.floor((Date.now() - exposedAt('test', 60)) / 1000)
    const windowed = { conversion_window: seconds, conversion_window_unit: 'second' }
    /** The test persons matured at `now` (read to the second), the first ones: exposure times grow with i. */
    const maturedAt = (now: number) => Array.from({ length: PER_VARIANT }, (_, i) => i).filter((i) => exposedAt('test', i) + seconds * 1000 <= Math.floor(now / 1000) * 1000).length
    /** The answer, and how many test persons it counted: those matured at some instant while it ran. */
    const answer = async (metric: object) => {
      const before = Date.now()
      const body = await query(metric)
      const k = body.variant_results[0].number_of_samples
      t.ok(k >= maturedAt(before) && k <= maturedAt(Date.now()), `the ${k} test persons matured when the query ran (${maturedAt(before)} before it)`)
      return { body, k }
    }
    /** Every control person's value, and those of test's first k persons. */
    const matured = (value: (v: Variant, i: number) => number, k: number) => ({ control: expect(value).control, test: expect(value, (i) => i < k).test })

    const clicks = await answer(mean(clicked, windowed))
    checkAnswer(t, clicks.body, matured((v, i) => plan(v, i).clicks, clicks.k), 'mean')
    const funnel = await answer({ ...pricingFunnel, ...windowed })
    const converted = matured((v, i) => (plan(v, i).converts ? 1 : 0), funnel.k)
    checkAnswer(t, funnel.body, converted, 'funnel')
    t.same(funnel.body.variant_results[0].step_counts, [funnel.k, converted.test.sum], "the funnel's steps count matured persons only")
    const ratio = await answer({ ...amountPerView, ...windowed })
    const amount = matured((v, i) => (plan(v, i).converts ? plan(v, i).amount : 0), ratio.k)
    const r = ratio.body.variant_results[0]
    t.same([r.sum, r.sum_squares, r.denominator_sum, r.numerator_denominator_sum_product], [amount.test.sum, amount.test.sum_squares, ratio.k, amount.test.sum], 'the ratio’s sums over matured persons')
    t.equal(ratio.body.baseline.denominator_sum, PER_VARIANT)
    // Broken down: the groups hold the matured persons only.
    const byBrowser = await answer(mean(clicked, { ...windowed, breakdownFilter: { breakdowns: [{ property: '$browser' }] } }))
    t.equal(byBrowser.body.breakdown_results.reduce((a: number, g: any) => a + g.variants[0].number_of_samples, 0), byBrowser.k, 'the groups add up to the matured test persons')
    // Without a conversion window there is nothing to wait for (PostHog's maturity seconds are 0): everyone counts.
    const unbounded = await query(mean(clicked))
    t.same([unbounded.baseline.number_of_samples, unbounded.variant_results[0].number_of_samples], [PER_VARIANT, PER_VARIANT])
    await setMatured(false)
    t.same((await query(mean(clicked, windowed))).variant_results[0].number_of_samples, PER_VARIANT, 'without the setting, everyone counts')
  })

  t.test("retention: of those who did the start event after exposure, who did the completion event within the window, as PostHog's retention query", async (t) => {
    const retention = (start: string, completion: string, extra: object) => ({
      kind: 'ExperimentMetric',
      metric_type: 'retention',
      start_event: { kind: 'EventsNode', event: start },
      completion_event: { kind: 'EventsNode', event: completion },
      retention_window_unit: 'second',
      start_handling: 'first_seen',
      ...extra,
    })
    /** Retained (1) or not (0) for the persons counted (those with a start), as sums with a denominator of 1 each. */
    const sums = (outcome: (v: Variant, i: number) => 0 | 1 | null) =>
      VARIANTS.map((variant) => {
        const values = Array.from({ length: PER_VARIANT }, (_, i) => outcome(variant, i)).filter((x) => x !== null)
        const sum = values.reduce<number>((a, b) => a + b, 0)
        return { key: variant, number_of_samples: values.length, sum, sum_squares: sum, denominator_sum: values.length, denominator_sum_squares: values.length, numerator_denominator_sum_product: sum }
      })
    const check = (body: any, expected: ReturnType<typeof sums>, name: string) => {
      const fields = (v: any) => [v.key, v.number_of_samples, v.sum, v.sum_squares, v.denominator_sum, v.denominator_sum_squares, v.numerator_denominator_sum_product]
      t.same([fields(body.baseline), fields(body.variant_results[0])], expected.map(fields), `${name}: the sums`)
      const want = experimentResult('retention', 'bayesian', null, expected[0], [expected[1]]).variant_results[0] as Record<string, unknown>
      t.same(body.variant_results[0].chance_to_win, want.chance_to_win, `${name}: a ratio's chance to win`)
      t.same(body.variant_results[0].credible_interval, want.credible_interval, `${name}: its interval`)
    }
    // Everyone views pricing 10 s after exposure; converters purchase 10 s later (the others' early purchase, before the view, never counts).
    const viewed = await query(retention('viewed pricing', 'purchased', { retention_window_start: 0, retention_window_end: 15 }))
    check(viewed, sums((v, i) => (plan(v, i).converts ? 1 : 0)), 'view → purchase in 0–15 s')
    t.same(viewed.baseline.validation_failures, [])
    t.equal(viewed.breakdown_results, null)
    // Clicks at 2 s intervals after exposure (the one a minute before exposure is no start); a purchase at 20 s,
    // or for some who don't convert at 5 s (before the view, but after a click).
    const purchaseAt = (v: Variant, i: number) => (plan(v, i).converts ? 20 : i % 4 === 1 ? 5 : null)
    const clickToPurchase = (handling: string) => retention('clicked', 'purchased', { retention_window_start: 0, retention_window_end: 17, start_handling: handling })
    const started = (v: Variant, i: number) => plan(v, i).clicks > 0
    const retainedFrom = (startAt: (v: Variant, i: number) => number) => (v: Variant, i: number) => {
      if (!started(v, i)) return null
      const p = purchaseAt(v, i)
      return p !== null && p - startAt(v, i) >= 0 && p - startAt(v, i) <= 17 ? 1 : 0
    }
    check(await query(clickToPurchase('first_seen')), sums(retainedFrom(() => 2)), 'first click → purchase in 0–17 s')
    check(await query(clickToPurchase('last_seen')), sums(retainedFrom((v, i) => 2 * plan(v, i).clicks)), 'last click → purchase in 0–17 s')
    // The same event on both sides: the start click is never its own completion; the next, 2 s later, is.
    check(await query(retention('clicked', 'clicked', { retention_window_start: 1, retention_window_end: 3 })), sums((v, i) => (started(v, i) ? (plan(v, i).clicks > 1 ? 1 : 0) : null)), 'a click again in 1–3 s')
    // A conversion window bounds the start: only the first click (2 s after exposure) starts within 3 s.
    const windowed = await query(retention('clicked', 'clicked', { retention_window_start: 1, retention_window_end: 3, start_handling: 'last_seen', conversion_window: 3, conversion_window_unit: 'second' }))
    check(windowed, sums((v, i) => (started(v, i) ? (plan(v, i).clicks > 1 ? 1 : 0) : null)), 'the last click within 3 s of exposure, again in 1–3 s')
    // Broken down by the first exposure's plan: each group's sums and statistics, added up to the whole.
    const byPlan = await query(retention('viewed pricing', 'purchased', { retention_window_start: 0, retention_window_end: 15, breakdownFilter: { breakdowns: [{ property: 'plan' }] } }))
    check(byPlan, sums((v, i) => (plan(v, i).converts ? 1 : 0)), 'by plan, over everyone')
    for (const [k, group] of ['free', 'pro'].entries()) {
      const r = byPlan.breakdown_results[k]
      t.same(r.breakdown_value, [group])
      check({ baseline: r.baseline, variant_results: r.variants }, sums((v, i) => (groupOf(i, ['plan'])[0] === group ? (plan(v, i).converts ? 1 : 0) : null)), `the ${group} plan`)
    }
    // Too few retained is PostHog's not-enough-metric-data, and no statistics.
    const few = await query(retention('clicked', 'clicked', { retention_window_start: 1, retention_window_end: 1 }))
    t.same(few.variant_results[0].validation_failures, ['not-enough-metric-data'])
    t.equal(few.variant_results[0].chance_to_win, null)
    const unit = await f.api('POST', `${f.base}/query/`, { query: { kind: 'ExperimentQuery', experiment_id: experimentId, metric: retention('clicked', 'clicked', { retention_window_start: 1, retention_window_end: 2, retention_window_unit: 'fortnight' }) } })
    t.equal(unit.status, 400)
    t.match(unit.body, { type: 'validation_error', detail: /retention_window_unit/ })
  })

  t.test("retention started at the exposure (ExperimentExposureNode): every exposed person counts from the first flag call, which is never its own completion, as PostHog's retention query", async (t) => {
    const fromExposure = (completion: string, extra: object) => ({
      kind: 'ExperimentMetric',
      metric_type: 'retention',
      start_event: { kind: 'ExperimentExposureNode' },
      completion_event: { kind: 'EventsNode', event: completion },
      retention_window_unit: 'second',
      start_handling: 'first_seen',
      ...extra,
    })
    /** Of the 120 persons of each variant, how many were retained (a denominator of 1 each). */
    const retained = (control: number, test: number) =>
      VARIANTS.map((key, k) => {
        const sum = [control, test][k]
        return { key, number_of_samples: PER_VARIANT, sum, sum_squares: sum, denominator_sum: PER_VARIANT, denominator_sum_squares: PER_VARIANT, numerator_denominator_sum_product: sum }
      })
    const fields = (v: any) => [v.key, v.number_of_samples, v.sum, v.sum_squares, v.denominator_sum, v.denominator_sum_squares, v.numerator_denominator_sum_product]
    const check = (body: any, expected: ReturnType<typeof retained>, name: string) => {
      t.same([fields(body.baseline), fields(body.variant_results[0])], expected.map(fields), `${name}: the sums`)
      const want = experimentResult('retention', 'bayesian', null, expected[0], [expected[1]]).variant_results[0] as Record<string, unknown>
      t.same(body.variant_results[0].chance_to_win, want.chance_to_win, `${name}: a ratio's chance to win`)
      t.same(body.variant_results[0].credible_interval, want.credible_interval, `${name}: its interval`)
    }
    // By hand: a purchase 5 s after the flag call for the non-converters with i % 4 = 1 (control: 30 of 120; test:
    // 20, its i % 12 = 9 converting at 20 s), too late for everyone else (20 s) or never.
    check(await query(fromExposure('purchased', { retention_window_start: 0, retention_window_end: 15 })), retained(30, 20), 'exposure → purchase in 0–15 s')
    // Clicks at 2 s, 4 s… after the call: a second click (4 s) is within 3–5 s for control's i % 3 = 2 (40) and
    // test's i % 3 ≥ 1 (80); those who never click still count, unlike a start on the click.
    check(await query(fromExposure('clicked', { retention_window_start: 3, retention_window_end: 5 })), retained(40, 80), 'exposure → a second click in 3–5 s')
    const byClick = await query({ ...fromExposure('clicked', { retention_window_start: 3, retention_window_end: 5 }), start_event: { kind: 'EventsNode', event: 'clicked' } })
    t.same([byClick.baseline.number_of_samples, byClick.variant_results[0].number_of_samples], [80, 120], 'started on a click, only clickers count')
    // The flag call as the completion: the first call (the exposure) is not its own; the second, 100 s later, is.
    const calls = await query(fromExposure('$feature_flag_called', { retention_window_start: 0, retention_window_end: 99 }))
    t.same([fields(calls.baseline), fields(calls.variant_results[0])], retained(0, 0).map(fields), 'no other call within 99 s')
    // Broken down by the first call's plan, each group's sums adding up to the whole.
    const byPlan = await query(fromExposure('purchased', { retention_window_start: 0, retention_window_end: 15, breakdownFilter: { breakdowns: [{ property: 'plan' }] } }))
    check(byPlan, retained(30, 20), 'by plan, over everyone')
    t.same(
      byPlan.breakdown_results.map((r: any) => [r.breakdown_value, r.baseline.number_of_samples + r.variants[0].number_of_samples]),
      [
        [['free'], 160],
        [['pro'], 80],
      ],
    )
    // only_count_matured_users (PostHog's maturity gate): a person counts once the window's end has passed since
    // the start. Everyone was exposed 50–60 minutes ago: a 30-minute window has ended for all, a 2-hour one for none.
    const setMatured = async (on: boolean) => t.equal((await f.api('PATCH', `${f.experiments}${experimentId}/`, { only_count_matured_users: on })).status, 200)
    await setMatured(true)
    t.teardown(() => f.api('PATCH', `${f.experiments}${experimentId}/`, { only_count_matured_users: false }))
    const samples = (body: any) => [body.baseline.number_of_samples, body.variant_results[0].number_of_samples]
    const lasting = (minutes: number) => ({ retention_window_start: 0, retention_window_end: minutes, retention_window_unit: 'minute' })
    t.same(samples(await query(fromExposure('purchased', lasting(30)))), [120, 120], 'every window of 30 minutes has ended')
    t.same(samples(await query(fromExposure('purchased', lasting(120)))), [0, 0], 'no window of 2 hours has')
    t.same(samples(await query({ ...fromExposure('purchased', lasting(120)), start_event: { kind: 'EventsNode', event: 'clicked' } })), [0, 0], 'nor from a click')
    await setMatured(false)
    t.same(samples(await query(fromExposure('purchased', lasting(120)))), [120, 120], 'without the setting, everyone counts')
    // PostHog's retention_metric_error: a conversion window or last seen does not go with an exposure start.
    for (const [extra, detail] of [
      [{ conversion_window: 3, conversion_window_unit: 'second' }, "Invalid metric: a conversion window cannot be combined with an experiment exposure start. Retention already anchors on each user's first exposure."],
      [{ start_handling: 'last_seen' }, "Invalid metric: start_handling 'last_seen' cannot be combined with an experiment exposure start. Retention always anchors on each user's first exposure."],
    ] as const) {
      const res = await f.api('POST', `${f.base}/query/`, { query: { kind: 'ExperimentQuery', experiment_id: experimentId, metric: fromExposure('purchased', { retention_window_start: 0, retention_window_end: 15, ...extra }) } })
      t.equal(res.status, 400)
      t.match(res.body, { type: 'validation_error', detail })
    }
  })

  t.test('breakdowns: each group of the first exposure’s $browser with its own counts and statistics', async (t) => {
    const byBrowser = { breakdownFilter: { breakdowns: [{ property: '$browser', type: 'event' }] } }
    const body = await query(mean(clicked, byBrowser))
    // The sums over everyone are those without a breakdown.
    checkAnswer(t, body, expect((v, i) => plan(v, i).clicks), 'mean')
    t.same(
      body.breakdown_results.map((r: any) => r.breakdown_value),
      [[NULL_LABEL], ['Chrome'], ['Safari']],
      'null and missing are one group; the later call’s Firefox is none',
    )
    const numbers = (v: any) => [v.key, v.number_of_samples, v.sum, v.sum_squares]
    // By hand: i % 3 is 0, 1, 2 equally often in each group, and test clicks once more.
    const [none, chrome, safari] = body.breakdown_results
    t.same(numbers(chrome.baseline), ['control', 60, 60, 100])
    t.same(numbers(chrome.variants[0]), ['test', 60, 120, 280])
    t.same(numbers(safari.baseline), ['control', 30, 30, 50])
    t.same(numbers(safari.variants[0]), ['test', 30, 60, 140])
    t.same(numbers(none.baseline), ['control', 30, 30, 50])
    t.same(numbers(none.variants[0]), ['test', 30, 60, 140])
    // 60 a variant: statistics; 30: PostHog's validation says too few.
    const want = experimentResult('mean', 'bayesian', null, { key: 'control', number_of_samples: 60, sum: 60, sum_squares: 100 }, [
      { key: 'test', number_of_samples: 60, sum: 120, sum_squares: 280 },
    ])
    const wanted = want.variant_results[0] as Record<string, unknown>
    t.same([chrome.variants[0].chance_to_win, chrome.variants[0].credible_interval], [wanted.chance_to_win, wanted.credible_interval], 'the group’s statistics')
    t.same(safari.variants[0].validation_failures, ['not-enough-exposures'])
    t.equal(safari.variants[0].chance_to_win, null)
    t.equal((await query(mean(clicked))).breakdown_results, null, 'no breakdowns: null')

    // A funnel and a ratio, by two breakdowns: every group against the plan.
    const keys = ['$browser', 'plan']
    const byTwo = { breakdownFilter: { breakdowns: keys.map((property) => ({ property })) } }
    const funnel = await query({ ...pricingFunnel, ...byTwo })
    const ratio = await query({ ...amountPerView, ...byTwo })
    const groups = [...new Set(Array.from({ length: PER_VARIANT }, (_, i) => JSON.stringify(groupOf(i, keys))))].sort()
    t.equal(groups.length, 6)
    t.same(
      funnel.breakdown_results.map((r: any) => JSON.stringify(r.breakdown_value)),
      groups,
    )
    t.same(
      ratio.breakdown_results.map((r: any) => JSON.stringify(r.breakdown_value)),
      groups,
    )
    groups.forEach((g, k) => {
      const inGroup = (i: number) => JSON.stringify(groupOf(i, keys)) === g
      const converted = expect((v, i) => (plan(v, i).converts ? 1 : 0), inGroup)
      const amount = expect((v, i) => (plan(v, i).converts ? plan(v, i).amount : 0), inGroup)
      for (const [fr, rr, variant] of [
        [funnel.breakdown_results[k].baseline, ratio.breakdown_results[k].baseline, 'control'],
        [funnel.breakdown_results[k].variants[0], ratio.breakdown_results[k].variants[0], 'test'],
      ] as const) {
        const n = converted[variant].n
        t.same([fr.key, fr.number_of_samples, fr.sum, fr.step_counts], [variant, n, converted[variant].sum, [n, converted[variant].sum]], `funnel ${g} ${variant}`)
        t.same(
          [rr.number_of_samples, rr.sum, rr.sum_squares, rr.denominator_sum, rr.numerator_denominator_sum_product],
          [n, amount[variant].sum, amount[variant].sum_squares, n, amount[variant].sum],
          `ratio ${g} ${variant}`,
        )
      }
    })
    checkAnswer(t, funnel, expect((v, i) => (plan(v, i).converts ? 1 : 0)), 'funnel')
  })

  t.test('breakdowns skylark cannot compute, or more than 3, are a 400', async (t) => {
    const post = (breakdowns: unknown[]) =>
      f.api('POST', `${f.base}/query/`, { query: { kind: 'ExperimentQuery', experiment_id: experimentId, metric: mean(clicked, { breakdownFilter: { breakdowns } }) } })
    const session = await post([{ property: '$session_duration', type: 'session' }])
    t.equal(session.status, 400)
    t.match(session.body, { type: 'validation_error', code: 'invalid', attr: null, detail: /type "session" are not supported/ })
    const unindexed = await post([{ property: 'name', type: 'group' }])
    t.match([unindexed.status, unindexed.body.detail], [400, 'A group breakdown needs a group_type_index from 0 to 4.'])
    const four = await post(['a', 'b', 'c', 'd'].map((property) => ({ property })))
    t.equal(four.status, 400)
    t.equal(four.body.detail, 'Maximum of 3 breakdowns are supported for experiment metrics')
  })

  t.test("frequentist when the experiment's stats_config says so", async (t) => {
    const stats = { method: 'frequentist' }
    const res = await f.api('PATCH', `${f.experiments}${experimentId}/`, { stats_config: stats })
    t.equal(res.status, 200, res.text)
    const body = await query(mean(clicked))
    checkAnswer(t, body, expect((v, i) => plan(v, i).clicks), 'mean', stats)
    t.equal(body.variant_results[0].method, 'frequentist')
    t.ok(body.variant_results[0].p_value < 0.001)
    await f.api('PATCH', `${f.experiments}${experimentId}/`, { stats_config: { method: 'bayesian' } })
  })

  t.test("person property and cohort filters match the persons' current properties, on a metric's source and on the exposure", async (t) => {
    const person = { key: 'tier', operator: 'exact', value: 'gold', type: 'person' }
    const goldClicks = expect((v, i) => (gold(i) ? plan(v, i).clicks : 0))
    checkAnswer(t, await query(mean({ ...clicked, properties: [person] })), goldClicks, 'mean')
    // A dynamic cohort of the same persons: the same answer.
    const cohort = await f.api('POST', `${f.base}/cohorts/`, { name: 'Gold', filters: { properties: { type: 'OR', values: [{ type: 'AND', values: [person] }] } } })
    t.equal(cohort.status, 201, cohort.text)
    checkAnswer(t, await query(mean({ ...clicked, properties: [{ key: 'id', value: cohort.body.id, type: 'cohort' }] })), goldClicks, 'mean')
    // A regex on the tier, and a cohort negating the condition: the gold tier again, and the others.
    checkAnswer(t, await query(mean({ ...clicked, properties: [{ key: 'tier', operator: 'regex', value: '^go', type: 'person' }] })), goldClicks, 'mean')
    const others = await f.api('POST', `${f.base}/cohorts/`, { name: 'Not gold', filters: { properties: { type: 'AND', values: [{ ...person, negation: true }] } } })
    t.equal(others.status, 201, others.text)
    checkAnswer(t, await query(mean({ ...clicked, properties: [{ key: 'id', value: others.body.id, type: 'cohort' }] })), expect((v, i) => (gold(i) ? 0 : plan(v, i).clicks)), 'mean')
    // Behavioural cohorts, read from this store's events: who clicked in the last week (everyone with a click),
    // and who did not (no click to count, so PostHog's check of a zero baseline fails).
    const performed = (negation: boolean) => ({ type: 'behavioral', key: 'clicked', value: 'performed_event', event_type: 'events', time_value: 7, time_interval: 'day', negation })
    const inCohort = async (negation: boolean) => {
      const cohort = await f.api('POST', `${f.base}/cohorts/`, { name: negation ? 'Never clicked' : 'Clicked', filters: { properties: { type: 'AND', values: [{ type: 'AND', values: [performed(negation)] }] } } })
      t.equal(cohort.status, 201, cohort.text)
      return query(mean({ ...clicked, properties: [{ key: 'id', value: cohort.body.id, type: 'cohort' }] }))
    }
    checkAnswer(t, await inCohort(false), expect((v, i) => plan(v, i).clicks), 'mean')
    const never = await inCohort(true)
    t.same([never.baseline.sum, never.variant_results[0].sum, never.baseline.number_of_samples], [0, 0, PER_VARIANT], 'no clicks counted, every exposure kept')
    t.same(never.baseline.validation_failures, ['baseline-mean-is-zero'])
    // Who clicked at least three times this week (performed_event_multiple), counted in this store: the click
    // before the exposure and at least two of the metric's.
    const twice = await f.api('POST', `${f.base}/cohorts/`, { name: 'Clicked thrice', filters: { properties: { type: 'AND', values: [{ type: 'AND', values: [{ ...performed(false), value: 'performed_event_multiple', operator: 'gte', operator_value: 3 }] }] } } })
    t.equal(twice.status, 201, twice.text)
    checkAnswer(t, await query(mean({ ...clicked, properties: [{ key: 'id', value: twice.body.id, type: 'cohort' }] })), expect((v, i) => (plan(v, i).clicks >= 2 ? plan(v, i).clicks : 0)), 'mean')
    // Whose first click ever was this week: everyone's (the store's first event of each distinct id).
    const firstTime = await f.api('POST', `${f.base}/cohorts/`, { name: 'New clickers', filters: { properties: { type: 'AND', values: [{ type: 'AND', values: [{ ...performed(false), value: 'performed_event_first_time' }] }] } } })
    checkAnswer(t, await query(mean({ ...clicked, properties: [{ key: 'id', value: firstTime.body.id, type: 'cohort' }] })), expect((v, i) => plan(v, i).clicks), 'mean')
    const patch = (exposure_criteria: object) => f.api('PATCH', `${f.experiments}${experimentId}/`, { exposure_criteria })
    t.equal((await patch({ exposure_config: { kind: 'ExperimentEventExposureConfig', event: '$feature_flag_called', properties: [person] } })).status, 200)
    const goldOnly = await query(mean(clicked))
    const want = expect((v, i) => plan(v, i).clicks, gold)
    const sums = (v: any) => ({ n: v.number_of_samples, sum: v.sum, sum_squares: v.sum_squares })
    t.same([sums(goldOnly.baseline), sums(goldOnly.variant_results[0])], [want.control, want.test], 'only the gold tier is exposed')
    t.same(goldOnly.baseline.validation_failures, ['not-enough-exposures'], '24 a variant: under the 50 PostHog asks for')
    const exposures = await f.api('POST', `${f.base}/query/`, { query: { kind: 'ExperimentExposureQuery', experiment_id: experimentId } })
    t.same(exposures.body.total_exposures, { control: PER_VARIANT / 5, test: PER_VARIANT / 5 }, 'the exposures tab counts the gold tier only')
    t.equal((await patch({ filterTestAccounts: true })).status, 200)
  })

  t.test("a group property filter counts the events of the groups it matches now, as PostHog's joined group properties", async (t) => {
    const types = await f.api('GET', `${f.base}/groups_types/`)
    const company = (types.body as Array<{ group_type: string; group_type_index: number }>).find((g) => g.group_type === 'company')!.group_type_index
    const big = { key: 'size', operator: 'gte', value: 2, type: 'group', group_type_index: company }
    // Each person clicks in company co-(i % 4): co-2 and co-3 are the big ones.
    checkAnswer(t, await query(mean({ ...clicked, properties: [big] })), expect((v, i) => (i % 4 >= 2 ? plan(v, i).clicks : 0)), 'mean')
  })

  t.test("a breakdown by a person property: each group of the persons' tier now, as PostHog's joined person properties", async (t) => {
    const body = await query(mean(clicked, { breakdownFilter: { breakdowns: [{ property: 'tier', type: 'person' }] } }))
    t.same(body.breakdown_results.map((r: any) => r.breakdown_value), [['basic'], ['gold']], 'q-both, with no tier, is $multiple and left out')
    const sums = (v: any) => ({ n: v.number_of_samples, sum: v.sum, sum_squares: v.sum_squares })
    for (const [group, tier] of [[body.breakdown_results[0], (i: number) => !gold(i)], [body.breakdown_results[1], gold]] as const) {
      const want = expect((v, i) => plan(v, i).clicks, tier)
      t.same([sums(group.baseline), sums(group.variants[0])], [want.control, want.test], group.breakdown_value[0])
    }
  })

  t.test("HogQL math on person properties reads each event's person's current properties, as the person filters do (PostHog's joined person properties)", async (t) => {
    const hogql = (math_hogql: string) => mean({ ...clicked, math: 'hogql', math_hogql })
    const goldClicks = expect((v, i) => (gold(i) ? plan(v, i).clicks : 0))
    const math = await query(hogql("sum(if(person.properties.tier = 'gold', 1, 0))"))
    checkAnswer(t, math, goldClicks, 'mean')
    const filtered = await query(mean({ ...clicked, properties: [{ key: 'tier', operator: 'exact', value: 'gold', type: 'person' }] }))
    t.same(math.variant_results, filtered.variant_results, 'the same persons as the person filter on the tier')
    // Beside the event's own properties: a gold person's clicks count 10, the others' 1 (every exposed person has a tier).
    checkAnswer(t, await query(hogql("sum(if(person.properties['tier'] = 'gold' and properties.$session_id != '', 10, 1))")), expect((v, i) => plan(v, i).clicks * (gold(i) ? 10 : 1)), 'mean')
  })

  t.test("a breakdown by a group property: each group of the size the exposure's company has now, as PostHog's joined group properties", async (t) => {
    const types = await f.api('GET', `${f.base}/groups_types/`)
    const company = (types.body as Array<{ group_type: string; group_type_index: number }>).find((g) => g.group_type === 'company')!.group_type_index
    const body = await query(mean(clicked, { breakdownFilter: { breakdowns: [{ property: 'size', type: 'group', group_type_index: company }] } }))
    t.same(body.breakdown_results.map((r: any) => r.breakdown_value), [['0'], ['1'], ['2'], ['3']], "co-k's size is k; q-both, with no company, is $multiple and left out")
    const sums = (v: any) => ({ n: v.number_of_samples, sum: v.sum, sum_squares: v.sum_squares })
    for (const [k, group] of body.breakdown_results.entries()) {
      const want = expect((v, i) => plan(v, i).clicks, (i) => i % 4 === k)
      t.same([sums(group.baseline), sums(group.variants[0])], [want.control, want.test], `size ${k}`)
    }
  })

  t.test("a mean of a session property counts each session once, whole, and only the people with a session after exposure", async (t) => {
    const body = await query(mean({ ...clicked, math: 'sum', math_property: '$session_duration', math_property_type: 'session_properties' }))
    // Clicks 2k and 2k + 1 share a session 2 s long; the click a minute before exposure is a session of its own,
    // not counted. Control people with no click after exposure (i % 3 = 0) have no session: not counted.
    const seconds = (v: Variant, i: number) => 2 * Math.floor(plan(v, i).clicks / 2)
    const sums = (v: any) => ({ n: v.number_of_samples, sum: v.sum, sum_squares: v.sum_squares })
    t.same([sums(body.baseline), sums(body.variant_results[0])], [expect(seconds, (i) => i % 3 !== 0).control, expect(seconds).test])
    // Each click is on a URL of its own: a person's sessions hold as many distinct URLs as it clicked.
    const urls = await query(mean({ ...clicked, math: 'sum', math_property: '$num_uniq_urls', math_property_type: 'session_properties' }))
    const clicks = (v: Variant, i: number) => plan(v, i).clicks
    t.same([sums(urls.baseline), sums(urls.variant_results[0])], [expect(clicks, (i) => i % 3 !== 0).control, expect(clicks).test], '$num_uniq_urls')
  })

  t.test("filterTestAccounts leaves out what the project's test_account_filters do not keep, as PostHog's exposure predicate", async (t) => {
    const project = `/api/projects/${f.server.boot.project_id}/`
    // Real users are the basic tier: the gold one are the team's own test accounts.
    const filters = [{ key: 'tier', operator: 'is_not', value: 'gold', type: 'person' }]
    const set = await f.api('PATCH', project, { test_account_filters: filters })
    t.same([set.status, set.body.test_account_filters], [200, filters])
    const criteria = (filterTestAccounts: boolean) => f.api('PATCH', `${f.experiments}${experimentId}/`, { exposure_criteria: { filterTestAccounts } })
    t.equal((await criteria(true)).status, 200)
    checkAnswer(t, await query(mean(clicked)), expect((v, i) => plan(v, i).clicks, (i) => !gold(i)), 'mean')
    // The same test accounts as a cohort they are not in.
    const cohort = await f.api('POST', `${f.base}/cohorts/`, { name: 'Staff', filters: { properties: { type: 'OR', values: [{ type: 'AND', values: [{ key: 'tier', operator: 'exact', value: 'gold', type: 'person' }] }] } } })
    t.equal(cohort.status, 201, cohort.text)
    const staff = await f.api('PATCH', project, { test_account_filters: [{ key: 'id', value: cohort.body.id, type: 'cohort', operator: 'not_in' }] })
    t.equal(staff.status, 200, staff.text)
    checkAnswer(t, await query(mean(clicked)), expect((v, i) => plan(v, i).clicks, (i) => !gold(i)), 'mean')
    t.equal((await criteria(false)).status, 200)
    checkAnswer(t, await query(mean(clicked)), expect((v, i) => plan(v, i).clicks), 'mean', null, {})
    t.same((await f.api('PATCH', project, { test_account_filters: [] })).body.test_account_filters, [])
    t.equal((await criteria(true)).status, 200)
  })

  t.test('exposure criteria: the first-seen variant, and a custom exposure event', async (t) => {
    const patch = (exposure_criteria: object) => f.api('PATCH', `${f.experiments}${experimentId}/`, { exposure_criteria })
    t.equal((await patch({ multiple_variant_handling: 'first_seen' })).status, 200)
    const firstSeen = await query(mean(clicked))
    const clicks = expect((v, i) => plan(v, i).clicks)
    t.same([firstSeen.baseline.number_of_samples, firstSeen.baseline.sum], [clicks.control.n + 1, clicks.control.sum + 5], 'the person exposed to both counts under control, seen first')
    t.same([firstSeen.variant_results[0].number_of_samples, firstSeen.variant_results[0].sum], [clicks.test.n, clicks.test.sum])

    // Exposed when viewing pricing (variant in `$feature/q-flag`): clicks came before, purchases after.
    t.equal((await patch({ exposure_config: { kind: 'ExperimentEventExposureConfig', event: 'viewed pricing', properties: [] } })).status, 200)
    const purchases = await query(mean({ kind: 'EventsNode', event: 'purchased' }))
    checkAnswer(t, purchases, expect((v, i) => (plan(v, i).converts ? 1 : 0)), 'mean')
    t.equal((await query(mean(clicked))).baseline.sum, 0, 'no click follows the custom exposure')
    t.equal((await patch({ filterTestAccounts: true })).status, 200)
  })

  t.test("exposure modes: $experiment_exposure named as the exposure event, and activation mode, as PostHog's exposure query builder counts them", async (t) => {
    const id = await f.createExperiment({ name: 'Exposure modes', feature_flag_key: 'a-flag', start_date: new Date(start).toISOString() })
    const patch = async (exposure_criteria: object) => t.equal((await f.api('PATCH', `${f.experiments}${id}/`, { exposure_criteria })).status, 200)
    const run = async (metric: object) => {
      const res = await f.api('POST', `${f.base}/query/`, { query: { kind: 'ExperimentQuery', experiment_id: id, metric } })
      t.equal(res.status, 200, res.text)
      return res.body
    }
    const counts = (body: any) => [body.baseline.number_of_samples, body.baseline.sum, body.variant_results[0].number_of_samples, body.variant_results[0].sum]
    const bought = mean({ kind: 'EventsNode', event: 'a-bought' })

    // `$experiment_exposure` carries the flag call's properties: its variant is `$feature_flag_response`, and
    // only this flag's count (a custom event's `$feature/a-flag` would find no exposure at all).
    await patch({ exposure_config: { kind: 'ExperimentEventExposureConfig', event: '$experiment_exposure', properties: [] } })
    t.same(counts(await run(bought)), [4, 4, 4, 8], '$experiment_exposure: four a variant')

    // The config's property filters narrow the default event too: the first wave's calls alone, and every
    // purchase after them (before activating too, there being no activation here).
    await patch({ exposure_config: { kind: 'ExperimentEventExposureConfig', event: '$feature_flag_called', properties: [{ key: 'wave', value: 'first', operator: 'exact', type: 'event' }] } })
    t.same(counts(await run(bought)), [2, 4, 2, 6], "the default event's property filter")

    // Activation mode: exposed at the first activation after the first call, so the purchase before it counts
    // for nobody and the early buyer counts with 0; never activated, activated only before, and $multiple: no one.
    await patch({ activation_config: { kind: 'ExperimentEventExposureConfig', event: 'a-activated', properties: [] } })
    t.same(counts(await run(bought)), [5, 4, 5, 8], 'activation mode')
    // The funnel's step 0 is the activation: the early buyer never converts.
    const funnel = await run({ kind: 'ExperimentMetric', metric_type: 'funnel', series: [{ kind: 'EventsNode', event: 'a-bought' }] })
    t.same(counts(funnel), [5, 4, 5, 4], 'activation mode funnel')
    t.same([funnel.baseline.step_counts, funnel.variant_results[0].step_counts], [[4], [4]])
    // Broken down by the activation event's properties, not the call's.
    const byBrowser = await run(mean({ kind: 'EventsNode', event: 'a-bought' }, { breakdownFilter: { breakdowns: [{ property: '$browser' }] } }))
    t.same(
      byBrowser.breakdown_results.map((r: any) => [r.breakdown_value, r.baseline.number_of_samples, r.variants[0].number_of_samples]),
      [
        [['Activated-Chrome'], 3, 3],
        [['Activated-Safari'], 2, 2],
      ],
    )
    // One PostHog's runner can't read is its invalid-setup 400.
    await patch({ activation_config: { kind: 'ActionsNode' } })
    const unreadable = await f.api('POST', `${f.base}/query/`, { query: { kind: 'ExperimentQuery', experiment_id: id, metric: bought } })
    t.match(unreadable, { status: 400, body: { type: 'validation_error', code: 'invalid', detail: 'Invalid experiment configuration detected. Please check your experiment setup.' } })
  })

  t.test("$is_bounce follows the project's bounce rate modifiers, as PostHog's sessions table", async (t) => {
    const id = await f.createExperiment({ name: 'Bounces', feature_flag_key: 'b-flag', start_date: new Date(start).toISOString() })
    const project = `/api/projects/${f.server.boot.project_id}/`
    const bounces = async () => {
      const metric = mean({ kind: 'EventsNode', event: 'b-seen', math: 'sum', math_property: '$is_bounce', math_property_type: 'session_properties' })
      const res = await f.api('POST', `${f.base}/query/`, { query: { kind: 'ExperimentQuery', experiment_id: id, metric } })
      t.equal(res.status, 200, res.text)
      return [res.body.baseline, res.body.variant_results[0]].map((v: any) => [v.number_of_samples, v.sum])
    }
    const modifiers = async (value: object | null) => {
      const res = await f.api('PATCH', project, { modifiers: value })
      if (res.status !== 200) t.fail(`PATCH modifiers: ${res.status} ${res.text}`)
      return res.body.modifiers
    }
    t.same(await bounces(), [[4, 2], [4, 2]], 'by default: a pageview and no autocapture, under 10 s')
    t.same(await modifiers({ bounceRateDurationSeconds: 5 }), { bounceRateDurationSeconds: 5 })
    t.same(await bounces(), [[4, 1], [4, 1]], 'under 5 s')
    t.same(await modifiers({ bounceRatePageViewMode: 'uniq_page_screen_autocaptures' }), { bounceRateDurationSeconds: 5, bounceRatePageViewMode: 'uniq_page_screen_autocaptures' })
    t.same(await bounces(), [[4, 2], [4, 2]], 'one pageview, screen or autocapture, under 5 s')
    await modifiers({ bounceRateDurationSeconds: 10 })
    t.same(await bounces(), [[4, 3], [4, 3]], 'one pageview, screen or autocapture, under 10 s')
    const refused = await f.api('PATCH', project, { modifiers: { bounceRateDurationSeconds: 500 } })
    t.match(refused, { status: 400, body: { type: 'validation_error', code: 'invalid', detail: 'Must be between 1 and 120 seconds.', attr: 'modifiers__bounceRateDurationSeconds' } })
    t.equal(await modifiers(null), null)
    t.same(await bounces(), [[4, 2], [4, 2]], 'cleared: the defaults again')
  })

  t.test("a variant whose statistics PostHog's engine refuses keeps its sums without statistics, and the query answers", async (t) => {
    // Every person views pricing once: no variance in either variant, which both tests refuse.
    const views = mean({ kind: 'EventsNode', event: 'viewed pricing' })
    const patchStats = async (stats_config: object) => t.equal((await f.api('PATCH', `${f.experiments}${experimentId}/`, { stats_config })).status, 200)
    const flat = { number_of_samples: PER_VARIANT, sum: PER_VARIANT, sum_squares: PER_VARIANT, validation_failures: [] }
    const bayesian = await query(views)
    t.match(bayesian.baseline, { key: 'control', ...flat })
    t.match(bayesian.variant_results[0], { key: 'test', ...flat, method: 'bayesian', significant: null, chance_to_win: null, credible_interval: null })
    await patchStats({ method: 'frequentist' })
    t.match((await query(views)).variant_results[0], { key: 'test', ...flat, method: 'frequentist', significant: null, p_value: null, confidence_interval: null })
    await patchStats({ method: 'bayesian' })
    // In each breakdown group too: Chrome's 60 a variant pass validation and get no statistics either.
    const byBrowser = await query(mean({ kind: 'EventsNode', event: 'viewed pricing' }, { breakdownFilter: { breakdowns: [{ property: '$browser' }] } }))
    const chrome = byBrowser.breakdown_results.find((r: any) => r.breakdown_value[0] === 'Chrome')
    t.match(chrome.variants[0], { key: 'test', number_of_samples: 60, sum: 60, validation_failures: [], chance_to_win: null, significant: null })
    t.match(byBrowser.variant_results[0], { key: 'test', ...flat, chance_to_win: null })
    // A ci_level PostHog's BayesianConfig refuses fails the whole query, through its error handler.
    await patchStats({ bayesian: { ci_level: 1 } })
    const refused = await f.api('POST', `${f.base}/query/`, { query: { kind: 'ExperimentQuery', experiment_id: experimentId, metric: mean(clicked) } })
    t.match(refused, {
      status: 400,
      body: { type: 'validation_error', code: 'invalid', attr: null, detail: 'Unable to calculate experiment statistics. Please ensure your experiment has sufficient data and try again.' },
    })
    await patchStats({ method: 'bayesian' })
  })

  t.test("the variants are the flag's less excluded_variants, never the holdout's, against stats_config's baseline, as PostHog's runner", async (t) => {
    const patch = async (body: object) => t.equal((await f.api('PATCH', `${f.experiments}${heldId}/`, body)).status, 200)
    const run = async () => {
      const res = await f.api('POST', `${f.base}/query/`, { query: { kind: 'ExperimentQuery', experiment_id: heldId, metric: mean(clicked) } })
      t.equal(res.status, 200, res.text)
      return res.body
    }
    const counts = (v: any) => [v.key, v.number_of_samples, v.sum]
    const arm = (key: 'control' | 'test' | 'test-2', extra: number[] = []) => {
      const clicks = Array.from({ length: HELD_PER_ARM }, (_, i) => heldClicks(key, i)).concat(extra)
      return [key, clicks.length, clicks.reduce((a, b) => a + b, 0)]
    }
    // The holdout's calls are no exposures: its people count nowhere, and who saw control then the holdout is
    // control's (not two variants' $multiple); who saw control and test-2 is left out.
    const all = await run()
    t.same(counts(all.baseline), arm('control', [4]))
    t.same(all.variant_results.map(counts), [arm('test'), arm('test-2')], 'no holdout variant')
    // An excluded variant's calls are no exposures either: the second mixed person is control's too.
    await patch({ excluded_variants: ['test-2'] })
    const excluded = await run()
    t.same(counts(excluded.baseline), arm('control', [4, 4]))
    t.same(excluded.variant_results.map(counts), [arm('test')])
    // Another baseline: the others are the test variants, in the flag's order.
    await patch({ stats_config: { baseline_variant_key: 'test' } })
    const againstTest = await run()
    t.same(counts(againstTest.baseline), arm('test'))
    t.same(againstTest.variant_results.map(counts), [arm('control', [4, 4])])
    t.type(againstTest.variant_results[0].chance_to_win, 'number')
    await patch({ excluded_variants: [] })
    t.same((await run()).variant_results.map(counts), [arm('control', [4]), arm('test-2')])
    // A null baseline_variant_key names no variant (Python's `.get(key, "control")` gives None): PostHog's
    // ExperimentDataError, through its error handler.
    await patch({ stats_config: { baseline_variant_key: null } })
    const noBaseline = await f.api('POST', `${f.base}/query/`, { query: { kind: 'ExperimentQuery', experiment_id: heldId, metric: mean(clicked) } })
    t.match(noBaseline, {
      status: 400,
      body: { type: 'validation_error', code: 'invalid', attr: null, detail: 'Unable to calculate experiment results from the collected data. This usually resolves once more exposures are recorded.' },
    })
    await patch({ stats_config: {} })
    t.equal((await run()).baseline.key, 'control')
  })

  t.test('refusals: other query kinds, unknown experiments, bad metrics', async (t) => {
    const post = (body: unknown) => f.api('POST', `${f.base}/query/`, body)
    const trends = await post({ query: { kind: 'TrendsQuery', series: [] } })
    t.equal(trends.status, 400)
    t.match(trends.body, { type: 'validation_error', attr: 'kind', detail: /ExperimentQuery, ExperimentExposureQuery, HogQLQuery/ })
    const unknown = await post({ query: { kind: 'ExperimentQuery', experiment_id: 999999, metric: mean(clicked) } })
    t.equal(unknown.status, 400)
    t.equal(unknown.body.detail, 'Experiment with id 999999 not found')
    const missing = await post({ query: { kind: 'ExperimentQuery', metric: mean(clicked) } })
    t.equal(missing.body.detail, 'experiment_id is required')
    const badMetric = await post({ query: { kind: 'ExperimentQuery', experiment_id: experimentId, metric: { kind: 'ExperimentMetric', metric_type: 'mean' } } })
    t.equal(badMetric.status, 400)
    t.match(badMetric.body.detail, /Field required/)
    const noQuery = await post({})
    t.match(noQuery.body, { attr: 'query', detail: 'This field is required.' })
  })
}
