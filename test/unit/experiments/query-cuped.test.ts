import t from 'tap'
import { almostEqual as places } from '../../helpers/almost-equal.js'
import { cupedAdjust, cupedAdjustGroup, cupedLookbackDays, cupedTheta, type Covariate } from '../../../src/experiments/query/cuped.js'
import { bayesianTest, experimentResult, frequentistTest, toStatistic, type VariantStats } from '../../../src/experiments/query/statistics.js'

const mean = (n: number, sum: number, sum_squares: number) => toStatistic('mean', { key: 'v', number_of_samples: n, sum, sum_squares })
const proportion = (n: number, sum: number) => toStatistic('funnel', { key: 'v', number_of_samples: n, sum, sum_squares: sum })
const covariate = (sum: number, sumSquares: number, crossProducts: number): Covariate => ({ sum, sumSquares, crossProducts })

// PostHog's products/experiments/stats/tests/test_cuped.py, TestCupedReferenceData.
const post5 = mean(5, 14, 48)
const pre5 = covariate(28.5, 520.3, 85.2)
const control = mean(2801, 280, 560)
const treatment = mean(2800, 205, 510)
const controlPre = covariate(195, 390, -18)
const treatmentPre = covariate(110, 380, -8)
/** A variant's sums as the event store gives them with CUPED: its values' and its covariate's. */
const sums = (key: string, n: number, sum: number, sumSquares: number, c: Covariate): VariantStats => ({
  key,
  number_of_samples: n,
  sum,
  sum_squares: sumSquares,
  covariate_sum: c.sum,
  covariate_sum_squares: c.sumSquares,
  covariate_sum_product: c.crossProducts,
})

t.test("one group's adjustment matches PostHog's reference data", async (t) => {
  const unadjusted = cupedAdjustGroup(post5, pre5, 0)
  places(t, unadjusted.mean, 2.8, 9, 'θ = 0: the mean')
  places(t, unadjusted.variance, 2.2, 9, 'θ = 0: the variance')
  const adjusted = cupedAdjustGroup(post5, pre5, 0.31)
  places(t, adjusted.mean, 1.033, 5, 'θ = 0.31: the mean')
  places(t, adjusted.variance, 9.960346, 4, 'θ = 0.31: the variance (with the covariance (85.2 − 14 × 28.5 / 5) / 4 = 1.35)')
  const single = cupedAdjustGroup(mean(1, 8, 64), covariate(15.3, 15.3 ** 2, 50), 0.4)
  places(t, single.variance, 0, 9, 'one observation: no variance')
  places(t, cupedTheta(post5, post5, pre5, pre5), 0.015090122, 7, 'θ pooled over two identical groups')
})

t.test('θ is 0 when the covariate is constant, and then only the variance floor changes anything', async (t) => {
  const constant = covariate(500, 2500, 2500)
  t.equal(cupedTheta(mean(100, 500, 3000), mean(100, 480, 2800), constant, covariate(500, 2500, 2400)), 0)
  const r = cupedAdjust(mean(100, 500, 3000), mean(100, 480, 2800), constant, covariate(500, 2500, 2400))
  places(t, r.treatment.mean, 5, 10, 'the treatment mean unchanged')
  places(t, r.control.mean, 4.8, 10, 'the control mean unchanged')
})

t.test("a mean metric's θ, adjusted means and relative effect match PostHog's, frequentist and Bayesian", async (t) => {
  const r = cupedAdjust(treatment, control, treatmentPre, controlPre)
  places(t, r.controlUnadjustedMean, 0.099964299, 7, 'the control’s unadjusted mean')
  places(t, r.theta, -0.069566052, 7, 'θ')
  places(t, r.control.mean, 0.104807347, 7, 'the control’s adjusted mean')
  places(t, r.treatment.mean, 0.075947238, 7, 'the treatment’s adjusted mean')
  t.ok(r.control.variance < control.variance && r.treatment.variance < treatment.variance, 'both variances shrink')

  const frequentist = frequentistTest(r.treatment, r.control, 0.05, 'RELATIVE', r.controlUnadjustedMean)
  places(t, (frequentist.confidence_interval[0] + frequentist.confidence_interval[1]) / 2, -0.288704169, 5, 'the point estimate over the unadjusted control mean')
  places(t, frequentist.confidence_interval[0], -0.486775, 5, 'the confidence interval’s lower end')
  places(t, frequentist.confidence_interval[1], -0.090633, 5, 'its upper end')
  t.equal(frequentist.significant, true)

  const bayesian = bayesianTest(r.treatment, r.control, 0.95, 'RELATIVE', r.controlUnadjustedMean)
  places(t, (bayesian.credible_interval[0] + bayesian.credible_interval[1]) / 2, -0.288704169, 4, 'the effect size')
  places(t, bayesian.credible_interval[0], -0.486732, 5, 'the credible interval’s lower end')
  places(t, bayesian.credible_interval[1], -0.090676, 5, 'its upper end')
})

t.test('a binomial metric is adjusted into sample means, and its relative effect is significant as in PostHog', async (t) => {
  const r = cupedAdjust(proportion(2800, 205), proportion(2801, 280), covariate(110, 110, -8), covariate(195, 195, -18))
  t.equal(r.treatment.kind, 'mean')
  places(t, r.controlUnadjustedMean, 280 / 2801, 9, 'the unadjusted control proportion')
  t.ok(r.treatment.variance < proportion(2800, 205).variance, 'the treatment’s variance shrinks')
  const outcome = frequentistTest(r.treatment, r.control, 0.05, 'RELATIVE', r.controlUnadjustedMean)
  t.equal(outcome.significant, true)
  t.ok(outcome.confidence_interval[0] + outcome.confidence_interval[1] < 0, 'a negative point estimate')
})

t.test("three arms: each treatment's θ is its pair's with the control, as PostHog's adjusted standard deviations", async (t) => {
  const treatment2 = mean(3500, 420, 840)
  const treatment2Pre = covariate(280, 560, -25)
  const cases: Array<[string, ReturnType<typeof mean>, Covariate, ReturnType<typeof mean>, Covariate, number]> = [
    ['control with θ from treatment 2', control, controlPre, treatment2, treatment2Pre, 0.434365539],
    ['treatment 1 with θ from treatment 1', treatment, treatmentPre, treatment, treatmentPre, 0.420353709],
    ['treatment 2 with θ from treatment 2', treatment2, treatment2Pre, treatment2, treatment2Pre, 0.473119119],
  ]
  for (const [name, target, targetPre, partner, partnerPre, sd] of cases) {
    const theta = cupedTheta(partner, control, partnerPre, controlPre)
    places(t, Math.sqrt(cupedAdjustGroup(target, targetPre, theta).variance), sd, 5, name)
  }
})

t.test('experiment results with CUPED carry the covariate sums and test the adjusted statistics', async (t) => {
  const stats = { method: 'frequentist' }
  const answer = experimentResult('mean', 'frequentist', stats, sums('control', 2801, 280, 560, controlPre), [sums('test', 2800, 205, 510, treatmentPre)], { cuped: true })
  t.match(answer.baseline, { covariate_sum: 195, covariate_sum_squares: 390, covariate_sum_product: -18 })
  t.match(answer.variant_results[0], { covariate_sum: 110, covariate_sum_squares: 380, covariate_sum_product: -8, significant: true })
  const interval = (answer.variant_results[0] as { confidence_interval: [number, number] }).confidence_interval
  places(t, interval[0], -0.486775, 5, 'the adjusted confidence interval')
  const plain = experimentResult('mean', 'frequentist', stats, { key: 'control', number_of_samples: 2801, sum: 280, sum_squares: 560 }, [
    { key: 'test', number_of_samples: 2800, sum: 205, sum_squares: 510 },
  ])
  t.match(plain.baseline, { covariate_sum: null, covariate_sum_squares: null, covariate_sum_product: null }, 'without CUPED: null, as pydantic dumps an unset field')
  t.notSame((plain.variant_results[0] as { confidence_interval: unknown }).confidence_interval, interval)
})

t.test("whether CUPED applies is PostHog's get_cuped_config with the team default off", async (t) => {
  const mean = { kind: 'ExperimentMetric', metric_type: 'mean', source: { kind: 'EventsNode', event: 'purchase', math: 'sum', math_property: 'amount' } }
  const funnel = { kind: 'ExperimentMetric', metric_type: 'funnel', series: [{ kind: 'EventsNode', event: 'purchase' }] }
  const ratio = { kind: 'ExperimentMetric', metric_type: 'ratio' }
  const on = (cuped: unknown, metric: Record<string, unknown> = mean) => cupedLookbackDays({ cuped }, metric)
  t.equal(cupedLookbackDays(null, mean), null, 'no stats_config: the team default, off')
  t.equal(on(undefined), null)
  t.equal(on({ lookback_days: 7 }), null, 'no enabled key: off')
  t.equal(on({ enabled: false, lookback_days: 7 }), null)
  t.equal(on({ enabled: true }), 14, 'the default lookback')
  t.equal(on({ enabled: 'false' }), 14, 'Python’s truth: a non-empty text is true')
  t.equal(on({ enabled: 0 }), null)
  t.equal(on({ enabled: true, lookback_days: 7 }), 7)
  t.equal(on({ enabled: true, lookback_days: 0 }), 1, 'clamped to 1')
  t.equal(on({ enabled: true, lookback_days: 90 }), 30, 'clamped to 30')
  t.equal(on({ enabled: true, lookback_days: 7.9 }), 7, 'int() truncates')
  t.equal(on({ enabled: true, lookback_days: ' 5 ' }), 5)
  t.equal(on({ enabled: true, lookback_days: '5.5' }), 14, 'not an int: the default')
  t.equal(on({ enabled: true, lookback_days: [3] }), 14)
  t.equal(on('yes'), null, 'a cuped that is no object is none')
  t.equal(on({ enabled: true }, funnel), 14, 'funnels')
  t.equal(on({ enabled: true }, { ...funnel, funnel_order_type: 'strict' }), 14, 'strict ones too')
  t.equal(on({ enabled: true }, { ...funnel, funnel_order_type: 'unordered' }), null, 'not unordered ones')
  t.equal(on({ enabled: true }, ratio), null, 'not ratios')
  t.equal(on({ enabled: true }, { ...mean, threshold: 10 }), null, 'not a thresholded mean, a proportion')
  t.equal(on({ enabled: true }, { ...mean, source: { kind: 'EventsNode', math: 'avg', math_property: '$session_duration' } }), null, 'not session property math')
  t.equal(on({ enabled: true }, { ...mean, source: { kind: 'EventsNode', math: 'avg', math_property: '$pageview_count', math_property_type: 'session_properties' } }), null)
})

t.test("covariate sums no values have skip the variant, as PostHog's metric_variant_to_cuped_data refuses them", async (t) => {
  const control = sums('control', 2801, 280, 560, controlPre)
  const good = sums('good', 2800, 205, 510, treatmentPre)
  // A covariate sum of squares below sum²/n (110² / 2800 ≈ 4.3).
  const impossible = sums('impossible', 2800, 205, 510, covariate(110, 1, -8))
  for (const method of ['bayesian', 'frequentist'] as const) {
    const [interval, chance] = method === 'bayesian' ? ['credible_interval', 'chance_to_win'] : ['confidence_interval', 'p_value']
    const answer = experimentResult('mean', method, { method }, control, [good, impossible], { cuped: true })
    t.type((answer.variant_results[0] as Record<string, unknown>)[chance], 'number', `${method}: the other variant is adjusted and tested`)
    t.match(answer.variant_results[1], { key: 'impossible', covariate_sum_squares: 1, significant: null, [chance]: null, [interval]: null })
    const badControl = experimentResult('mean', method, { method }, sums('control', 2801, 280, 560, covariate(195, 1, -18)), [good], { cuped: true })
    t.match(badControl.variant_results[0], { key: 'good', significant: null, [chance]: null }, `${method}: the control's covariate fails every variant`)
    t.type((experimentResult('mean', method, { method }, sums('control', 2801, 280, 560, covariate(195, 1, -18)), [good]).variant_results[0] as Record<string, unknown>)[chance], 'number', `${method}: without CUPED the covariate is not read`)
  }
})
