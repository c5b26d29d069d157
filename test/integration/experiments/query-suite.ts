/**
 * The new engine's results end to end, once per event store: an experiment with a control/test flag is
 * launched over the API, flag calls and metric events for 120 persons per variant go through /batch/ (plus a
 * person exposed to both variants, one with an unknown variant, clicks before exposure and another flag's
 * calls, none of which may count), and `POST …/query/` with an ExperimentQuery must answer the counts, sums
 * and sums of squares computed here from the same plan, and the statistics the engine's formulas give for
 * them.
 */
import type { Test } from 'tap'
import { experimentResult } from '../../../src/experiments/query/statistics.js'
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

interface Expected {
  n: number
  sum: number
  sum_squares: number
}

function expect(value: (variant: Variant, i: number) => number): Record<Variant, Expected> {
  const out = {} as Record<Variant, Expected>
  for (const variant of VARIANTS) {
    const values = Array.from({ length: PER_VARIANT }, (_, i) => value(variant, i))
    out[variant] = { n: values.length, sum: values.reduce((a, b) => a + b, 0), sum_squares: values.reduce((a, b) => a + b * b, 0) }
  }
  return out
}

export function querySuite(t: Test, setup: StoreSetup): void {
  let f: ExperimentServer
  let experimentId = 0
  const start = Date.now() - 2 * HOUR
  const exposedAt = (variant: Variant, i: number) => start + HOUR + (variant === 'test' ? 500_000 : 0) + i * 1000

  function events(): BatchEvent[] {
    const out: BatchEvent[] = []
    const call = (id: string, at: number, response: string, flag = 'q-flag') =>
      out.push({ event: '$feature_flag_called', distinct_id: id, at, properties: { $feature_flag: flag, $feature_flag_response: response } })
    for (const variant of VARIANTS) {
      for (let i = 0; i < PER_VARIANT; i++) {
        const id = `q-${variant}-${i}`
        const at = exposedAt(variant, i)
        const p = plan(variant, i)
        out.push({ event: 'clicked', distinct_id: id, at: at - 60_000, properties: { $session_id: `${id}-before` } })
        call(id, at, variant)
        // A second call later: the first one is the exposure.
        call(id, at + 100_000, variant)
        for (let c = 0; c < p.clicks; c++) out.push({ event: 'clicked', distinct_id: id, at: at + 2000 * (c + 1), properties: { $session_id: `${id}-s${Math.floor(c / 2)}` } })
        out.push({ event: 'viewed pricing', distinct_id: id, at: at + 10_000, properties: { '$feature/q-flag': variant } })
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
    return out
  }

  t.before(async () => {
    f = await experimentServer(setup.env())
    const res = await f.api('POST', f.experiments, { name: 'New engine', feature_flag_key: 'q-flag', start_date: new Date(start).toISOString() })
    if (res.status !== 201) throw new Error(`create: ${res.status} ${res.text}`)
    experimentId = res.body.id
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

  /** The answer's counts must be the expected ones, and its statistics those of the engine for them. */
  function checkAnswer(t: Test, body: any, expected: Record<Variant, Expected>, type: 'mean' | 'funnel', stats: Record<string, unknown> | null = null) {
    const numbers = (v: any) => ({ n: v.number_of_samples, sum: v.sum, sum_squares: v.sum_squares })
    t.same(numbers(body.baseline), expected.control, 'baseline: control counts')
    t.equal(body.baseline.key, 'control')
    t.same(body.baseline.validation_failures, [])
    t.equal(body.variant_results.length, 1)
    t.same(numbers(body.variant_results[0]), expected.test, 'test counts')
    const toStats = (key: Variant) => ({ key, number_of_samples: expected[key].n, sum: expected[key].sum, sum_squares: expected[key].sum_squares })
    const want = experimentResult(type, (stats?.method as 'frequentist') ?? 'bayesian', stats, toStats('control'), [toStats('test')])
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

  t.test('a sum of a property, unique sessions and a conversion window', async (t) => {
    const amount = (v: Variant, i: number) => (plan(v, i).converts ? plan(v, i).amount : 0)
    checkAnswer(t, await query(mean({ ...{ kind: 'EventsNode', event: 'purchased' }, math: 'sum', math_property: 'amount' })), expect(amount), 'mean')
    checkAnswer(t, await query(mean({ ...clicked, math: 'unique_session' })), expect((v, i) => Math.ceil(plan(v, i).clicks / 2)), 'mean')
    checkAnswer(t, await query(mean(clicked, { conversion_window: 5, conversion_window_unit: 'second' })), expect((v, i) => Math.min(plan(v, i).clicks, 2)), 'mean')
  })

  t.test('an ordered funnel after exposure', async (t) => {
    const body = await query({
      kind: 'ExperimentMetric',
      metric_type: 'funnel',
      series: [
        { kind: 'EventsNode', event: 'viewed pricing' },
        { kind: 'EventsNode', event: 'purchased' },
      ],
    })
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
    const body = await query({
      kind: 'ExperimentMetric',
      metric_type: 'ratio',
      numerator: { kind: 'EventsNode', event: 'purchased', math: 'sum', math_property: 'amount' },
      denominator: { kind: 'EventsNode', event: 'viewed pricing' },
    })
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

  t.test('refusals: other query kinds, unknown experiments, bad metrics', async (t) => {
    const post = (body: unknown) => f.api('POST', `${f.base}/query/`, body)
    const hogql = await post({ query: { kind: 'HogQLQuery', query: 'select 1' } })
    t.equal(hogql.status, 400)
    t.match(hogql.body, { type: 'validation_error', attr: 'kind', detail: /ExperimentQuery/ })
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
