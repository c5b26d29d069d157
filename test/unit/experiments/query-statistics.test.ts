import t, { type Test } from 'tap'
import { normalCdf, normalPpf, normalSf, studentTCdf, studentTPpf } from '../../../src/experiments/stats/gaussian.js'
import {
  bayesianTest,
  experimentResult,
  frequentistTest,
  StatisticError,
  statsMethod,
  toStatistic,
  validationFailures,
  type VariantStats,
} from '../../../src/experiments/query/statistics.js'

function near(t: Test, found: number, wanted: number, tolerance: number, message: string) {
  t.ok(Math.abs(found - wanted) <= tolerance, message, { found, wanted, tolerance })
}

const mean = (n: number, sum: number, sum_squares: number, key = 'v'): VariantStats => ({ key, number_of_samples: n, sum, sum_squares })

// Reference values from scipy 1.17.1 (norm.sf, norm.ppf, t.cdf, t.ppf), which PostHog's engine calls.
t.test('the normal and t distributions agree with scipy', async (t) => {
  for (const [z, sf] of [[-8, 0.9999999999999993], [-1.5, 0.9331927987311419], [0, 0.5], [0.3, 0.3820885778110474], [2.5, 0.006209665325776132]] as const) {
    near(t, normalSf(z), sf, 1e-14, `norm.sf(${z})`)
    near(t, normalCdf(-z), sf, 1e-14, `norm.cdf(${-z})`)
  }
  t.ok(Math.abs(normalSf(9) / 1.1285884059538324e-19 - 1) < 1e-10, 'the far tail keeps its relative precision')
  for (const [p, z] of [[1e-10, -6.361340902404056], [0.025, -1.9599639845400545], [0.3, -0.5244005127080409], [0.975, 1.959963984540054], [1 - 1e-9, 5.997807019601637]] as const) {
    near(t, normalPpf(p), z, 1e-9, `norm.ppf(${p})`)
  }
  t.equal(normalPpf(0.5), 0)
  for (const [x, df, p] of [[1.2, 3.5, 0.8474927573110678], [-2, 10, 0.03669401738537018], [0.5, 4000.7, 0.6914487116602215], [4, 2.2, 0.975634686636118]] as const) {
    near(t, studentTCdf(x, df), p, 1e-12, `t.cdf(${x}, ${df})`)
  }
  for (const [p, df, x] of [[0.975, 3.5, 2.9400886379827282], [0.975, 4955.3, 1.9604428336362285], [0.9, 12, 1.356217334023205], [0.995, 1.5, 17.820310514462804]] as const) {
    near(t, studentTPpf(p, df), x, 1e-8 * Math.abs(x), `t.ppf(${p}, ${df})`)
    near(t, studentTPpf(1 - p, df), -x, 1e-8 * Math.abs(x), `t.ppf(${1 - p}, ${df})`)
  }
})

t.test('what PostHog refuses is a StatisticError', async (t) => {
  t.throws(() => bayesianTest(toStatistic('mean', mean(100, 100, 100)), toStatistic('mean', mean(100, 0, 0))), StatisticError, 'control mean 0, relative')
  t.throws(() => bayesianTest(toStatistic('funnel', mean(100, 3, 3)), toStatistic('funnel', mean(100, 50, 50))), StatisticError, 'fewer than 5 successes')
  t.throws(() => bayesianTest(toStatistic('funnel', mean(100, 98, 98)), toStatistic('funnel', mean(100, 50, 50))), StatisticError, 'fewer than 5 failures')
  t.throws(() => frequentistTest(toStatistic('mean', mean(100, 100, 100)), toStatistic('mean', mean(100, 100, 100))), StatisticError, 'no variance anywhere')
  t.throws(() => toStatistic('mean', mean(10, 10, 5)), StatisticError, 'sum_squares below sum²/n')
})

t.test('variants are validated as PostHog validates them before any statistics', async (t) => {
  t.same(validationFailures(mean(49, 10, 10), 'mean', false), ['not-enough-exposures'])
  t.same(validationFailures(mean(60, 4, 4), 'funnel', false), ['not-enough-metric-data'])
  t.same(validationFailures(mean(60, 0, 0), 'funnel', true), ['not-enough-metric-data', 'baseline-mean-is-zero'])
  t.same(validationFailures(mean(60, 0, 0), 'mean', false), [])

  const control = { ...mean(2507, 1196.87, 37377.9767, 'control') }
  const small = { ...mean(20, 30, 60, 'small') }
  const test = { ...mean(2461, 1922.7, 94698.29, 'test') }
  const answer = experimentResult('mean', 'bayesian', null, control, [test, small])
  t.same(answer.baseline.validation_failures, [])
  t.equal(answer.baseline.step_counts, null)
  t.equal(answer.variant_results[0].method, 'bayesian')
  const first = answer.variant_results[0] as { chance_to_win: number | null }
  near(t, first.chance_to_win!, 0.95759, 5e-5, 'the test variant has its chance to win')
  t.same(answer.variant_results[1].validation_failures, ['not-enough-exposures'])
  t.equal((answer.variant_results[1] as { chance_to_win: number | null }).chance_to_win, null, 'a variant with too few samples has no statistics')

  const frequentist = experimentResult('mean', statsMethod({ method: 'frequentist', frequentist: { alpha: 0.1 } }), { method: 'frequentist', frequentist: { alpha: 0.1 } }, control, [test])
  t.equal(frequentist.variant_results[0].method, 'frequentist')
  t.equal(frequentist.variant_results[0].significant, true, 'p = 0.085 is significant at the configured alpha 0.1')
  const zeroBaseline = experimentResult('mean', 'bayesian', null, mean(100, 0, 0, 'control'), [test])
  t.same(zeroBaseline.baseline.validation_failures, ['baseline-mean-is-zero'])
  t.equal(zeroBaseline.variant_results[0].significant, null, 'no statistics against a failed baseline')
})

t.test('a mean with a threshold is validated as a mean and tested as a proportion of who reached it', async (t) => {
  const control = mean(200, 40, 40, 'control')
  const test = mean(200, 60, 60, 'test')
  for (const method of ['bayesian', 'frequentist'] as const) {
    const thresholded = experimentResult('mean', method, { method }, control, [test], { threshold: true })
    const funnel = experimentResult('funnel', method, { method }, control, [test])
    const { step_counts: _, ...statistics } = funnel.variant_results[0]
    t.match(thresholded.variant_results[0], { ...statistics, step_counts: null }, `${method}: the proportion's statistics`)
    t.not(thresholded.variant_results[0].significant, null)
  }
  const plain = experimentResult('mean', 'bayesian', null, control, [test])
  t.not((plain.variant_results[0] as { credible_interval: unknown }).credible_interval, null)
  t.notSame(plain.variant_results[0], experimentResult('mean', 'bayesian', null, control, [test], { threshold: true }).variant_results[0], 'a sample mean’s variance is not p(1 − p)')
  // Few who reached it is no funnel's not-enough-metric-data, but the proportion's normal approximation refuses it:
  // that variant is answered without statistics.
  const few = mean(100, 3, 3, 'test')
  t.same(validationFailures(few, 'mean', false), [])
  const refused = experimentResult('mean', 'bayesian', null, control, [few], { threshold: true }).variant_results[0]
  t.match(refused, { key: 'test', number_of_samples: 100, sum: 3, validation_failures: [], chance_to_win: null, credible_interval: null, significant: null })
})

t.test("a variant whose statistics PostHog's engine refuses keeps its sums without statistics, as its result builders skip it", async (t) => {
  const control = mean(2507, 1196.87, 37377.9767, 'control')
  const good = mean(2461, 1922.7, 94698.29, 'test')
  // Every value equal in a variant and in control: no variance, which both tests refuse.
  const flat = mean(100, 100, 100, 'flat')
  const flatControl = mean(100, 100, 100, 'control')
  // Sums no set of values has (sum_squares below sum²/n): SampleMeanStatistic refuses them.
  const impossible = mean(100, 100, 50, 'impossible')
  for (const method of ['bayesian', 'frequentist'] as const) {
    const [interval, chance] = method === 'bayesian' ? ['credible_interval', 'chance_to_win'] : ['confidence_interval', 'p_value']
    const answer = experimentResult('mean', method, { method }, control, [good, impossible])
    const [kept, skipped] = answer.variant_results as Array<Record<string, unknown>>
    t.type(kept[chance], 'number', `${method}: the other variant keeps its statistics`)
    t.same(kept, experimentResult('mean', method, { method }, control, [good]).variant_results[0], `${method}: the same as without the failing variant`)
    t.match(skipped, { key: 'impossible', number_of_samples: 100, sum: 100, sum_squares: 50, validation_failures: [], method, significant: null, [chance]: null, [interval]: null })
    const zero = experimentResult('mean', method, { method }, flatControl, [flat]).variant_results[0] as Record<string, unknown>
    t.match(zero, { key: 'flat', sum: 100, validation_failures: [], significant: null, [chance]: null, [interval]: null }, `${method}: no variance`)
    // A control whose statistic fails leaves every variant without statistics; the baseline is answered as it is.
    const noControl = experimentResult('mean', method, { method }, mean(100, 100, 50, 'control'), [good])
    t.match(noControl.baseline, { key: 'control', sum_squares: 50, validation_failures: [] })
    t.match(noControl.variant_results[0], { key: 'test', sum: 1922.7, significant: null, [chance]: null })
  }
})

t.test("a ci_level or alpha PostHog's method configs refuse fails the whole answer, whatever the data", async (t) => {
  const control = mean(100, 0, 0, 'control')
  t.throws(() => experimentResult('mean', 'bayesian', { bayesian: { ci_level: 1 } }, control, []), new StatisticError('ci_level must be between 0 and 1'))
  t.throws(() => experimentResult('mean', 'frequentist', { frequentist: { alpha: 0 } }, control, []), new StatisticError('Alpha must be between 0 and 1'))
  // Out of [0, 1] is the default instead (`_validate_numeric_range`).
  t.doesNotThrow(() => experimentResult('mean', 'bayesian', { bayesian: { ci_level: 1.5 } }, control, []))
})

t.test("a retention metric is validated as a funnel and tested as PostHog's ratio statistic: retained over started, each denominator 1", async (t) => {
  const retention = (n: number, retained: number, key: string): VariantStats => ({
    key,
    number_of_samples: n,
    sum: retained,
    sum_squares: retained,
    denominator_sum: n,
    denominator_sum_squares: n,
    numerator_denominator_sum_product: retained,
  })
  t.same(validationFailures(retention(60, 4, 'v'), 'retention', false), ['not-enough-metric-data'])
  t.same(validationFailures(retention(60, 0, 'v'), 'retention', true), ['not-enough-metric-data', 'baseline-mean-is-zero'])
  const control = retention(100, 40, 'control')
  const test = retention(100, 60, 'test')
  const answer = experimentResult('retention', 'bayesian', null, control, [test])
  t.match(answer.baseline, { number_of_samples: 100, sum: 40, denominator_sum: 100, denominator_sum_squares: 100, numerator_denominator_sum_product: 40, step_counts: null })
  // The delta method with a constant denominator: each variant's sample variance of its 0/1 outcomes.
  const variance = (n: number, k: number) => (k - (k * k) / n) / (n - 1)
  const effect = (0.6 - 0.4) / 0.4
  const sd = Math.sqrt(variance(100, 60) / (100 * 0.4 ** 2) + (0.6 ** 2 * variance(100, 40)) / (100 * 0.4 ** 4))
  const result = answer.variant_results[0] as { chance_to_win: number; credible_interval: [number, number] }
  near(t, result.chance_to_win, normalSf(-effect / sd), 1e-12, 'the chance to win')
  near(t, result.credible_interval[0], effect + sd * normalPpf(0.025), 1e-12, 'the interval')
  near(t, result.credible_interval[1], effect + sd * normalPpf(0.975), 1e-12, 'the interval')
  t.not(toStatistic('retention', test).variance, 0.6 * 0.4, 'not a proportion’s p(1 − p)')
  t.equal(toStatistic('retention', test).kind, 'ratio')
})

t.test("a sum of squares below sum²/n by a rounding is refused as PostHog's SampleMeanStatistic refuses it", async (t) => {
  // Sixty entities of 0.3 each, summed in order: sum² / n is 5.400000000000014, the sum of squares 5.399999999999996.
  let sum = 0
  let squares = 0
  for (let i = 0; i < 60; i++) {
    sum += 0.3
    squares += 0.3 * 0.3
  }
  t.ok(squares < (sum * sum) / 60)
  t.throws(() => toStatistic('mean', mean(60, sum, squares)), StatisticError)
  const answer = experimentResult('mean', 'bayesian', null, mean(2507, 1196.87, 37377.9767, 'control'), [mean(60, sum, squares, 'flat')])
  t.match(answer.variant_results[0], { key: 'flat', validation_failures: [], chance_to_win: null, credible_interval: null, significant: null })
})

t.test('the Bayesian test refuses sums beyond overflow range, as validate_test_inputs does, where the frequentist test does not', async (t) => {
  const control = mean(100, 5e14, 5e27, 'control')
  const huge = mean(100, 2e15, 8e28, 'huge')
  const bayesian = experimentResult('mean', 'bayesian', null, control, [huge]).variant_results[0]
  t.match(bayesian, { key: 'huge', chance_to_win: null, significant: null }, '|sum| above 1e15')
  const frequentist = experimentResult('mean', 'frequentist', { method: 'frequentist' }, control, [huge]).variant_results[0]
  t.type((frequentist as { p_value: unknown }).p_value, 'number')
  const squares = experimentResult('mean', 'bayesian', null, mean(100, 1e14, 2e30, 'control'), [mean(100, 1e14, 1e29, 'test')]).variant_results[0]
  t.match(squares, { chance_to_win: null }, 'a control sum of squares above 1e30')
})
