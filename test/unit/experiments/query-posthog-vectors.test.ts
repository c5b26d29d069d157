/**
 * PostHog's own test vectors for products/experiments/stats, each with the inputs, PostHog's expected outputs and
 * its tolerance (assertAlmostEqual's places, or the bound its test asserts), cited by the file they come from.
 */
import t from 'tap'
import { almostEqual } from '../../helpers/almost-equal.js'
import { bayesianTest, effect, frequentistTest, StatisticError, toStatistic, welchDegreesOfFreedom, type VariantStats } from '../../../src/experiments/query/statistics.js'
import { sequentialHalfwidth, sequentialPValue, sequentialRho } from '../../../src/experiments/stats/sequential.js'

const sums = (n: number, sum: number, sum_squares: number): VariantStats => ({ key: 'v', number_of_samples: n, sum, sum_squares })
const mean = (n: number, sum: number, sumSquares: number) => toStatistic('mean', sums(n, sum, sumSquares))
const proportion = (n: number, successes: number) => toStatistic('funnel', sums(n, successes, successes))
/** A ratio whose denominator is 1 or 0 per entity (PostHog's fixtures: d_sum_squares = d_sum, products = m_sum). */
const ratio = (n: number, sum: number, sumSquares: number, denominator: number) =>
  toStatistic('ratio', { ...sums(n, sum, sumSquares), denominator_sum: denominator, denominator_sum_squares: denominator, numerator_denominator_sum_product: sum })
const midpoint = (interval: [number, number]) => (interval[0] + interval[1]) / 2
/** The test's `uplift.stddev`: (upper − lower) / (2 × 1.96)², as its create_test_result_dict computes it. */
const upliftStddev = (interval: [number, number]) => (interval[1] - interval[0]) / (2 * 1.96) ** 2

// products/experiments/stats/tests/test_frequentist.py, TestTwoSidedTTest (places=4).
const twoSided = [
  ['a sample mean', mean(2461, 1922.7, 94698.29), mean(2507, 1196.87, 37377.9767), { expected: 0.63646, ci: [-0.0875, 1.36048], p: 0.08487, stddev: 0.094233 }],
  ['a proportion', proportion(1471, 62), proportion(1529, 87), { expected: -0.25925, ci: [-0.49475, -0.02376], p: 0.03096, stddev: 0.03065 }],
  [
    'a ratio',
    ratio(2034, 99673.9364269569, 11298745.182728939, 947),
    ratio(1966, 94605.79858780127, 10463129.505392816, 936),
    { expected: 0.041333, ci: [0.01378609, 0.0689], p: 0.0032826, stddev: 0.00358537 },
  ],
] as const

t.test("Welch's t-test gives PostHog's estimate, interval, p-value and uplift for a mean, a proportion and a ratio", async (t) => {
  for (const [name, treatment, control, wanted] of twoSided) {
    const result = frequentistTest(treatment, control)
    almostEqual(t, midpoint(result.confidence_interval), wanted.expected, 4, `${name}: the point estimate`)
    almostEqual(t, result.p_value, wanted.p, 4, `${name}: the p-value`)
    almostEqual(t, result.confidence_interval[0], wanted.ci[0], 4, `${name}: the lower bound`)
    almostEqual(t, result.confidence_interval[1], wanted.ci[1], 4, `${name}: the upper bound`)
    almostEqual(t, upliftStddev(result.confidence_interval), wanted.stddev, 4, `${name}: the uplift's stddev`)
    t.equal(result.significant, result.p_value < 0.05, `${name}: significant is p < alpha`)
  }
})

// products/experiments/stats/tests/test_utils.py (places=3).
t.test('the Welch–Satterthwaite degrees of freedom are PostHog’s', async (t) => {
  almostEqual(t, welchDegreesOfFreedom(mean(2461, 1922.7, 94698.29), mean(2507, 1196.87, 37377.9767)), 4105.07, 3, 'df')
})

// products/experiments/stats/tests/test_frequentist.py, TestSequentialMath.
t.test('the sequential primitives: ρ from its formula, a half-width beyond the fixed horizon, a p-value clamped to 1 or small', async (t) => {
  const l = -2 * Math.log(0.05)
  almostEqual(t, sequentialRho(0.05, 5000), Math.sqrt((l + Math.log(l + 1)) / 5000), 10, 'ρ (places=10)')
  // Per-observation variance 1 over 5000 entities: the estimator's variance is 1/5000.
  t.ok(sequentialHalfwidth(1 / 5000, 5000, 0.05, sequentialRho(0.05, 5000)) > 1.96 * Math.sqrt(1 / 5000), 'wider than 1.96 standard errors')
  t.equal(sequentialPValue(0.01, 1, 10, sequentialRho(0.05, 5000)), 1, 'a tiny effect on 10 entities: the e-value is below 1')
  t.ok(sequentialPValue(0.5, 0.0001, 10000, sequentialRho(0.05, 5000)) < 0.05, 'an effect 50 standard errors out')
})

// products/experiments/stats/tests/test_frequentist.py, TestSequentialTwoSidedTTest.
t.test('the sequential test keeps the estimate, widens the interval, and gives p = 1 without an effect', async (t) => {
  const treatment = mean(2461, 1922.7, 94698.29)
  const control = mean(2507, 1196.87, 37377.9767)
  const fixed = frequentistTest(treatment, control)
  const sequential = frequentistTest(treatment, control, 0.05, 'RELATIVE', control.mean, 5000)
  t.ok(sequential.confidence_interval[1] - sequential.confidence_interval[0] > fixed.confidence_interval[1] - fixed.confidence_interval[0], 'wider')
  almostEqual(t, midpoint(sequential.confidence_interval), midpoint(fixed.confidence_interval), 6, 'the same point estimate (places=6)')
  const none = frequentistTest(proportion(2000, 100), proportion(2000, 100), 0.05, 'ABSOLUTE', undefined, 5000)
  t.equal(none.p_value, 1)
  t.equal(none.significant, false)
  t.throws(() => frequentistTest(treatment, control, 0.05, 'RELATIVE', control.mean, 0), StatisticError, 'a tuning parameter of 0')
})

// products/experiments/stats/tests/test_frequentist.py, TestSequentialTwoSidedTTestGoldenValues (places=5).
t.test("the sequential test matches PostHog's golden values", async (t) => {
  const golden = [
    ['a sample mean, tuning 1000', mean(3500, 2500, 135000), mean(3000, 1400, 52000), 1000, { expected: 0.53061, ci: [-0.5323, 1.59353], stddev: 0.33368, p: 1 }],
    // The p-value is ≈6e-56, 0 at five places: the log-space e-value keeps it from underflowing to exactly 0.
    ['a proportion, the default tuning', proportion(3500, 2600), proportion(3050, 1450), 5000, { expected: 0.56256, ci: [0.46064, 0.66448], stddev: 0.03354, p: 0 }],
  ] as const
  for (const [name, treatment, control, tuning, wanted] of golden) {
    const result = frequentistTest(treatment, control, 0.05, 'RELATIVE', control.mean, tuning)
    almostEqual(t, midpoint(result.confidence_interval), wanted.expected, 5, `${name}: the point estimate`)
    almostEqual(t, result.confidence_interval[0], wanted.ci[0], 5, `${name}: the lower bound`)
    almostEqual(t, result.confidence_interval[1], wanted.ci[1], 5, `${name}: the upper bound`)
    almostEqual(t, result.p_value, wanted.p, 5, `${name}: the p-value`)
    almostEqual(t, Math.sqrt(effect(treatment, control, 'RELATIVE', false).variance), wanted.stddev, 5, `${name}: the standard error`)
  }
  const treatment = mean(3500, 2500, 135000)
  const control = mean(3000, 1400, 52000)
  const [below, near, above] = [10, 6500, 10000].map((tuning) => frequentistTest(treatment, control, 0.05, 'RELATIVE', control.mean, tuning).confidence_interval)
  t.ok(below[0] < near[0] && below[1] > near[1] && below[0] < above[0] && below[1] > above[1], 'an underestimated sample size gives the widest interval')
  t.ok(above[0] < near[0] && above[1] > near[1], 'an overestimate is wider than the true 6500 entities')
})

// products/experiments/stats/tests/test_bayesian.py, TestBayesianMethod.test_realistic_example (places=4).
t.test("the Bayesian test matches PostHog's realistic example, significant as is_decisive though its interval holds 0", async (t) => {
  const treatment = mean(2461, 1922.7, 94698.29)
  const control = mean(2507, 1196.87, 37377.9767)
  const result = bayesianTest(treatment, control)
  almostEqual(t, effect(treatment, control, 'RELATIVE', true).estimate, 0.63646, 4, 'the effect size')
  almostEqual(t, result.credible_interval[0], -0.0873, 4, 'the lower bound')
  almostEqual(t, result.credible_interval[1], 1.36026, 4, 'the upper bound')
  almostEqual(t, result.chance_to_win, 0.95759, 4, 'the chance to win')
  t.ok(result.credible_interval[0] < 0, 'the 95% interval holds 0')
  t.equal(result.significant, true, 'a chance to win beyond ci_level is decisive')
  t.equal(bayesianTest(treatment, control, 0.96).significant, false, 'not beyond 0.96')
  t.equal(bayesianTest(control, treatment).significant, true, 'a chance below 1 − ci_level is decisive too')
})

// products/experiments/stats/tests/test_bayesian.py, TestBayesianUtils, TestBayesianGaussianTest, TestEdgeCases and
// TestNumericalStability (bounds as asserted there).
t.test("the Bayesian effect sizes, intervals and edge cases hold PostHog's assertions", async (t) => {
  const treatment = mean(100, 550, 3050)
  const control = mean(100, 500, 2550)
  const absolute = effect(treatment, control, 'ABSOLUTE', true)
  t.ok(Math.abs(absolute.estimate - 0.5) < 1e-10, 'absolute: 5.5 − 5.0')
  t.ok(Math.abs(absolute.variance - ((3050 - 550 ** 2 / 100) / 99 / 100 + (2550 - 500 ** 2 / 100) / 99 / 100)) < 1e-6, 'absolute: Var_T/n_T + Var_C/n_C')
  const relative = effect(proportion(1000, 110), proportion(1000, 100), 'RELATIVE', true)
  t.ok(Math.abs(relative.estimate - 0.1) < 1e-10, 'relative: (0.11 − 0.10) / 0.10')
  t.ok(relative.variance > 0)
  // A flat prior: the posterior is the likelihood, so the interval is the effect ± z·√variance.
  const flat = bayesianTest(treatment, control, 0.95, 'ABSOLUTE')
  almostEqual(t, (flat.credible_interval[1] - flat.credible_interval[0]) / (2 * 1.959963984540054), Math.sqrt(absolute.variance), 12, 'the posterior variance is the effect variance')
  const wide = bayesianTest(treatment, control, 0.99, 'ABSOLUTE')
  t.ok(wide.credible_interval[1] - wide.credible_interval[0] > flat.credible_interval[1] - flat.credible_interval[0], 'a 99% interval is wider')

  const basic = bayesianTest(treatment, control)
  t.ok(basic.chance_to_win >= 0 && basic.chance_to_win <= 1 && basic.credible_interval[0] < basic.credible_interval[1], 'a mean: a probability and an ordered interval')
  t.ok(basic.chance_to_win > 0.5, 'the better treatment is favoured')
  t.ok(bayesianTest(proportion(1000, 110), proportion(1000, 100)).chance_to_win > 0.5, 'conversion 11% against 10%')
  t.throws(() => bayesianTest(mean(100, 100, 100), mean(100, 0, 0)), StatisticError, 'a zero control mean, relative')
  t.doesNotThrow(() => bayesianTest(mean(1000, 10000, 100001), mean(1000, 9999, 99990.001)), 'very small variances')
  const tiny = bayesianTest(mean(2, 3, 5), mean(2, 2, 2))
  t.ok(tiny.chance_to_win > 0.1 && tiny.chance_to_win < 0.9, 'two entities each: uncertain')
  const large = bayesianTest(mean(1_000_000, 10_500_000, 110_250_001), mean(1_000_000, 10_000_000, 100_000_001))
  t.ok(Number.isFinite(large.credible_interval[0]) && large.chance_to_win >= 0 && large.chance_to_win <= 1, 'large sums')
  t.ok(midpoint(bayesianTest(mean(10000, 10001, 10002.0002), mean(10000, 10000, 10000.0001)).credible_interval) > 0, 'a tiny positive effect')
  const rare = bayesianTest(proportion(1000, 10), proportion(1000, 5), 0.95, 'ABSOLUTE')
  t.ok(Number.isFinite(midpoint(rare.credible_interval)) && rare.credible_interval[1] > rare.credible_interval[0], '1% against 0.5%')
})

// products/experiments/stats/tests/test_statistics.py.
t.test("the sample mean, proportion and ratio statistics are PostHog's, refusing what it refuses", async (t) => {
  t.match(mean(5, 15, 55), { mean: 3, variance: 2.5 }, '[1, 2, 3, 4, 5]')
  t.match(mean(1, 10, 100), { mean: 10, variance: 0 }, 'one observation')
  t.match(mean(3, 15, 75), { mean: 5, variance: 0 }, 'all equal')
  t.throws(() => mean(-1, 10, 100), StatisticError)
  t.throws(() => mean(0, 10, 100), StatisticError)
  t.throws(() => mean(5, 15, 40), StatisticError, '40 < 15²/5')
  t.match(proportion(100, 25), { mean: 0.25, variance: 0.25 * 0.75 })
  t.match(proportion(10, 10), { mean: 1, variance: 0 })
  t.match(proportion(10, 0), { mean: 0, variance: 0 })
  t.throws(() => proportion(-1, 5), StatisticError)
  t.throws(() => proportion(10, -1), StatisticError)
  t.throws(() => proportion(10, 15), StatisticError)
  // Revenue [10, 20, 30] per user: the covariance (60 − 60 × 3 / 3) / 2 is 0, so the delta method leaves Var(M)/D².
  t.match(ratio(3, 60, 1400, 3), { mean: 20, variance: 100 })
  t.throws(() => ratio(5, 25, 125, 0), StatisticError, 'a zero denominator')
})
