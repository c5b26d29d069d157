/**
 * End to end, once per event store: experiments are created and launched over the API, exposures
 * (`$feature_flag_called`) and metric events (carrying `$feature/<key>`) go through /batch/ for
 * generated users with a known true effect, and the results endpoints must find it: the right winner,
 * significant, when there is a difference; not significant when there is none; a sample ratio mismatch
 * when exposure is skewed. Users and outcomes come from a seeded generator, so every run sends the same
 * events and the expected counts are computed here exactly.
 */
import type { Test } from 'tap'
import { experimentServer, poisson, seeded, type BatchEvent, type ExperimentServer } from './fixture.js'

export interface StoreSetup {
  env: () => Record<string, string>
}

const USERS_PER_VARIANT = 1000
const HOUR = 3_600_000

interface FunnelPlan {
  key: string
  rates: Record<string, number>
}

interface TrendPlan {
  key: string
  means: Record<string, number>
  /** Users per variant that call the flag (default all). */
  exposed?: Record<string, number>
}

/** A variant's clicks, users who called the flag, and users who clicked at least once. */
interface TrendCount {
  count: number
  exposed: number
  clickers: number
}

export function resultsSuite(t: Test, setup: StoreSetup): void {
  let f: ExperimentServer
  const start = Date.now() - 2 * HOUR
  const at = (offset: number) => start + HOUR + offset
  const ids: Record<string, number> = {}
  const funnelCounts: Record<string, Record<string, { entered: number; converted: number }>> = {}
  const trendCounts: Record<string, Record<string, TrendCount>> = {}

  // Users are per experiment: later funnel steps count whatever flag they carry (first-touch attribution).
  const users = (key: string, variants: string[]) =>
    variants.flatMap((variant) => Array.from({ length: USERS_PER_VARIANT }, (_, i) => ({ variant, id: `${key}-${variant}-${i}` })))

  /** Each user calls the flag, views the page (funnel step 1) and buys (step 2) with the variant's rate. */
  function funnelEvents(plan: FunnelPlan, random: () => number): BatchEvent[] {
    const events: BatchEvent[] = []
    const counts: Record<string, { entered: number; converted: number }> = {}
    users(plan.key, Object.keys(plan.rates)).forEach(({ variant, id }, i) => {
      const feature = { [`$feature/${plan.key}`]: variant }
      counts[variant] ??= { entered: 0, converted: 0 }
      events.push({ event: '$feature_flag_called', distinct_id: id, at: at(i), properties: { $feature_flag: plan.key, $feature_flag_response: variant } })
      events.push({ event: 'viewed pricing', distinct_id: id, at: at(10_000 + i), properties: feature })
      counts[variant].entered++
      if (random() < plan.rates[variant]) {
        events.push({ event: 'purchased', distinct_id: id, at: at(20_000 + i), properties: { ...feature, amount: 10 } })
        counts[variant].converted++
      }
    })
    funnelCounts[plan.key] = counts
    return events
  }

  /** Exposed users call the flag; every user clicks a Poisson number of times with the variant's mean. */
  function trendEvents(plan: TrendPlan, random: () => number): BatchEvent[] {
    const events: BatchEvent[] = []
    const counts: Record<string, TrendCount> = {}
    const seen: Record<string, number> = {}
    users(plan.key, Object.keys(plan.means)).forEach(({ variant, id }, i) => {
      counts[variant] ??= { count: 0, exposed: 0, clickers: 0 }
      seen[variant] = (seen[variant] ?? 0) + 1
      if (seen[variant] > (plan.exposed?.[variant] ?? USERS_PER_VARIANT)) return
      counts[variant].exposed++
      events.push({ event: '$feature_flag_called', distinct_id: id, at: at(i), properties: { $feature_flag: plan.key, $feature_flag_response: variant } })
      const clicks = poisson(random, plan.means[variant])
      for (let c = 0; c < clicks; c++) {
        events.push({ event: 'clicked', distinct_id: id, at: at(30_000 + i * 10 + c), properties: { [`$feature/${plan.key}`]: variant } })
      }
      counts[variant].count += clicks
      if (clicks > 0) counts[variant].clickers++
    })
    trendCounts[plan.key] = counts
    return events
  }

  const FUNNEL = { insight: 'FUNNELS', events: [{ id: 'viewed pricing', order: 0 }, { id: 'purchased', order: 1 }] }
  const TREND = { insight: 'TRENDS', events: [{ id: 'clicked', order: 0 }] }

  t.before(async () => {
    f = await experimentServer(setup.env())
    const launch = new Date(start).toISOString()
    const create = async (name: string, key: string, filters: object, extra: object = {}) => {
      const res = await f.api('POST', f.experiments, { name, feature_flag_key: key, filters, start_date: launch, ...extra })
      if (res.status !== 201) throw new Error(`create ${name}: ${res.status} ${res.text}`)
      ids[key] = res.body.id
    }
    await create('Funnel with a winner', 'funnel-win', FUNNEL, {
      secondary_metrics: [
        { name: 'Purchases', filters: { insight: 'TRENDS', events: [{ id: 'purchased', order: 0 }] } },
        { name: 'Big purchases', filters: { ...FUNNEL, events: [FUNNEL.events[0], { ...FUNNEL.events[1], properties: [{ key: 'amount', operator: 'gt', value: 5, type: 'event' }] }] } },
      ],
    })
    await create('Funnel without a difference', 'funnel-same', FUNNEL)
    await create('Trend with a winner', 'trend-win', TREND)
    await create('Trend without a difference', 'trend-same', TREND)
    await create('Skewed exposure', 'trend-skew', TREND)
    // PostHog's legacy custom exposure: who clicked, counted once (dau), instead of who called the flag.
    await create('Custom exposure', 'trend-custom', TREND, { parameters: { custom_exposure_filter: { events: [{ id: 'clicked', order: 0, math: 'dau' }] } } })
    await create('Three-way funnel', 'three-way', FUNNEL, {
      parameters: {
        feature_flag_variants: [
          { key: 'control', rollout_percentage: 34 },
          { key: 'a', rollout_percentage: 33 },
          { key: 'b', rollout_percentage: 33 },
        ],
      },
    })
    const random = seeded(20240501)
    const events = [
      ...funnelEvents({ key: 'funnel-win', rates: { control: 0.1, test: 0.2 } }, random),
      ...funnelEvents({ key: 'funnel-same', rates: { control: 0.15, test: 0.15 } }, random),
      ...trendEvents({ key: 'trend-win', means: { control: 1.0, test: 1.3 } }, random),
      ...trendEvents({ key: 'trend-same', means: { control: 1.2, test: 1.2 } }, random),
      ...trendEvents({ key: 'trend-skew', means: { control: 1.0, test: 1.0 }, exposed: { control: 1000, test: 700 } }, random),
      ...trendEvents({ key: 'trend-custom', means: { control: 0.5, test: 1.0 } }, random),
      ...funnelEvents({ key: 'three-way', rates: { control: 0.1, a: 0.12, b: 0.2 } }, random),
    ]
    await f.send(events)
    const byEvent = new Map<string, number>()
    for (const e of events) byEvent.set(e.event, (byEvent.get(e.event) ?? 0) + 1)
    for (const [event, n] of byEvent) await f.waitFor(`event=${encodeURIComponent(event)}`, n, 45_000)
  })
  t.teardown(() => f?.close())

  const results = async (key: string, action = 'results', query = '') => {
    const res = await f.api('GET', `${f.experiments}${ids[key]}/${action}/${query}`)
    if (res.status !== 200) throw new Error(`${action} of ${key}: ${res.status} ${res.text}`)
    return res.body
  }

  t.test('funnel: 10% vs 20% conversion — test wins, significantly', async (t) => {
    const body = await results('funnel-win')
    t.match(body, { result: Object, last_refresh: String, is_cached: false })
    const r = body.result
    const c = funnelCounts['funnel-win']
    t.same(r.variants, [
      { key: 'control', success_count: c.control.converted, failure_count: c.control.entered - c.control.converted },
      { key: 'test', success_count: c.test.converted, failure_count: c.test.entered - c.test.converted },
    ])
    t.equal(r.significance_code, 'significant')
    t.equal(r.significant, true)
    t.ok(r.probability.test > 0.99, `P(test wins) = ${r.probability.test}`)
    t.ok(r.expected_loss < 0.01)
    t.equal(r.srm.mismatch, false)
    t.same(r.insight.map((steps: any[]) => steps.map((s) => s.count)), [
      [c.control.entered, c.control.converted],
      [c.test.entered, c.test.converted],
    ])
    t.same((await results('funnel-win')).result, r, 'a second call gives the same answer')
  })

  t.test('funnel: no true difference — not significant', async (t) => {
    const r = (await results('funnel-same')).result
    const c = funnelCounts['funnel-same']
    t.same(r.variants.map((v: any) => v.success_count), [c.control.converted, c.test.converted])
    t.equal(r.significant, false)
    t.not(r.significance_code, 'significant')
    t.equal(r.srm.mismatch, false)
  })

  t.test('trend: Poisson means 1.0 vs 1.3 — test wins, significantly', async (t) => {
    const r = (await results('trend-win')).result
    const c = trendCounts['trend-win']
    t.same(r.variants, [
      { key: 'control', count: c.control.count, exposure: 1, absolute_exposure: 1000 },
      { key: 'test', count: c.test.count, exposure: 1, absolute_exposure: 1000 },
    ])
    t.equal(r.significance_code, 'significant')
    t.ok(r.probability.test > 0.99)
    t.ok(r.p_value < 0.05)
  })

  t.test('trend: no true difference — not significant', async (t) => {
    const r = (await results('trend-same')).result
    t.equal(r.significant, false)
    t.not(r.significance_code, 'significant')
    t.equal(r.srm.mismatch, false)
  })

  t.test('trend: 1000 vs 700 exposed on a 50/50 flag — sample ratio mismatch', async (t) => {
    const r = (await results('trend-skew')).result
    t.same(r.variants.map((v: any) => v.absolute_exposure), [1000, 700])
    t.equal(r.variants[1].exposure, 0.7)
    t.match(r.srm, { mismatch: true, observed: { control: 1000, test: 700 }, expected: { control: 850, test: 850 } })
    t.ok(r.srm.p_value < 0.001)
  })

  t.test('trend with a custom exposure filter: the exposed are who performed its event, once each; its cohort holds them', async (t) => {
    const r = (await results('trend-custom')).result
    const c = trendCounts['trend-custom']
    t.ok(c.control.clickers < 1000 && c.test.clickers < 1000, 'some users called the flag and never clicked')
    t.same(r.variants.map((v: any) => [v.key, v.count, v.absolute_exposure]), [
      ['control', c.control.count, c.control.clickers],
      ['test', c.test.count, c.test.clickers],
    ])
    t.match(r.exposure_filters, { events: [{ id: 'clicked', math: 'dau' }], breakdown: '$feature/trend-custom' })
    const res = await f.api('POST', `${f.experiments}${ids['trend-custom']}/create_exposure_cohort_for_experiment/`)
    t.equal(res.status, 200)
    // Whoever clicked since launch, in any experiment: PostHog's cohort puts no condition on the flag then (its
    // test_create_exposure_cohort_for_experiment_with_custom_event_exposure).
    const clickers = Object.values(trendCounts).flatMap((variants) => Object.values(variants)).reduce((n, v) => n + v.clickers, 0)
    t.ok(clickers > c.control.clickers + c.test.clickers)
    t.equal(res.body.cohort.count, clickers)
  })

  t.test('three variants: computed in the pool, the best one wins, the same on every call', async (t) => {
    const first = (await results('three-way')).result
    const c = funnelCounts['three-way']
    t.same(first.variants.map((v: any) => v.key), ['control', 'a', 'b'])
    t.same(first.variants.map((v: any) => v.success_count), [c.control.converted, c.a.converted, c.b.converted])
    t.ok(first.probability.b > 0.9, `P(b wins) = ${first.probability.b}`)
    t.equal(first.significance_code, 'significant')
    t.same((await results('three-way')).result, first)
  })

  t.test('secondary results: every metric, or one by id', async (t) => {
    const all = (await results('funnel-win', 'secondary_results')).result
    const c = funnelCounts['funnel-win']
    t.equal(all.length, 2)
    t.match(all[0], { name: 'Purchases', result: { control: c.control.converted, test: c.test.converted }, p_value: Number })
    t.match(all[1], {
      name: 'Big purchases',
      result: {
        control: Math.round((c.control.converted / c.control.entered) * 1000) / 1000,
        test: Math.round((c.test.converted / c.test.entered) * 1000) / 1000,
      },
      significance_code: 'significant',
    })
    t.same((await results('funnel-win', 'secondary_results', '?id=1')).result, all[1])
  })

  t.test('exposure cohort of a big experiment holds every exposed person', async (t) => {
    const res = await f.api('POST', `${f.experiments}${ids['trend-skew']}/create_exposure_cohort_for_experiment/`)
    t.equal(res.status, 200)
    const n = f.persons.prepare('SELECT COUNT(*) AS n FROM cohort_people WHERE cohort_id = ?').get(res.body.cohort.id) as { n: number }
    t.equal(n.n, 1700)
  })
}
