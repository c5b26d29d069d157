import t from 'tap'
import { methodSettings, statsMethod } from '../../../src/experiments/query/stats-config.js'
import { experimentResult, frequentistTest, StatisticError, toStatistic, type VariantStats } from '../../../src/experiments/query/statistics.js'

const sums = (key: string, n: number, sum: number, sum_squares: number): VariantStats => ({ key, number_of_samples: n, sum, sum_squares })

t.test("each method's level and difference fall back as PostHog's _validate_numeric_range and _parse_enum_config do", async (t) => {
  t.same(methodSettings(null, 'bayesian'), { level: 0.95, difference: 'RELATIVE', sequentialTuning: null })
  t.same(methodSettings({}, 'frequentist'), { level: 0.05, difference: 'RELATIVE', sequentialTuning: null })
  const level = (value: unknown) => methodSettings({ frequentist: { alpha: value } }, 'frequentist').level
  t.equal(level(0.1), 0.1)
  t.equal(level(' 1e-1 '), 0.1, 'float() reads text with spaces and exponents')
  t.equal(level('.2'), 0.2)
  t.equal(level('0_1'), 1, 'float("0_1") is 1.0, in range, for the config to refuse')
  t.equal(level('1_5'), 0.05, 'float("1_5") is 15.0, out of range')
  t.equal(level('1__5'), 0.05, 'float() refuses a doubled underscore')
  t.equal(level('0x1'), 0.05, 'float() reads no hexadecimal')
  t.equal(level('nan'), 0.05, 'NaN is in no range')
  t.equal(level(null), 0.05, 'float(None) raises')
  t.equal(level([0.1]), 0.05)
  t.equal(level(true), 1, 'float(True) is 1.0, kept for the config to refuse')
  t.equal(level(false), 0)
  t.equal(level(1.5), 0.05)
  t.equal(methodSettings({ bayesian: { difference_type: 'ABSOLUTE' } }, 'bayesian').difference, 'ABSOLUTE')
  t.equal(methodSettings({ bayesian: { difference_type: 'absolute' } }, 'bayesian').difference, 'RELATIVE', 'members by name only')
  t.equal(methodSettings({ bayesian: 'x' }, 'bayesian').level, 0.95, 'a section that is no object is empty')
  t.equal(statsMethod({ method: 'frequentist' }), 'frequentist')
  t.equal(statsMethod({ method: 'FREQUENTIST' }), 'bayesian')
})

t.test('a level float() reads as 1 is refused for the whole answer, as the method configs refuse it', async (t) => {
  const control = { key: 'control', number_of_samples: 100, sum: 50, sum_squares: 60 }
  t.throws(() => experimentResult('mean', 'frequentist', { method: 'frequentist', frequentist: { alpha: true } }, control, []), StatisticError, 'alpha true')
  t.throws(() => experimentResult('mean', 'bayesian', { bayesian: { ci_level: '1' } }, control, []), StatisticError, "ci_level '1'")
  t.doesNotThrow(() => experimentResult('mean', 'bayesian', { bayesian: { ci_level: '0x1' } }, control, []), 'no float: the default')
})

t.test('sequential testing is on when the frequentist section says so in Python’s truth, its tuning parameter within 1 to 1e9', async (t) => {
  const tuning = (frequentist: Record<string, unknown>) => methodSettings({ method: 'frequentist', frequentist }, 'frequentist').sequentialTuning
  t.equal(tuning({}), null, 'absent: the team default, off')
  t.equal(tuning({ sequential_testing_enabled: false }), null)
  t.equal(tuning({ sequential_testing_enabled: true }), 5000, 'the default tuning parameter')
  t.equal(tuning({ sequential_testing_enabled: 'false' }), 5000, 'a non-empty text is true')
  t.equal(tuning({ sequential_testing_enabled: 1, sequential_tuning_parameter: 1000 }), 1000)
  t.equal(tuning({ sequential_testing_enabled: true, sequential_tuning_parameter: '250.5' }), 250.5)
  t.equal(tuning({ sequential_testing_enabled: true, sequential_tuning_parameter: 0 }), 5000, 'below 1: the default')
  t.equal(tuning({ sequential_testing_enabled: true, sequential_tuning_parameter: 2e9 }), 5000, 'above 1e9: the default')
  t.equal(methodSettings({ bayesian: { sequential_testing_enabled: true } }, 'bayesian').sequentialTuning, null, 'the Bayesian method has none')
})

t.test('with sequential testing the frequentist answer carries the always-valid p-value and interval', async (t) => {
  const control = sums('control', 3000, 1400, 52000)
  const test = sums('test', 3500, 2500, 135000)
  const stats = { method: 'frequentist', frequentist: { sequential_testing_enabled: true, sequential_tuning_parameter: 1000 } }
  const answer = experimentResult('mean', 'frequentist', stats, control, [test]).variant_results[0] as Record<string, unknown>
  const direct = frequentistTest(toStatistic('mean', test), toStatistic('mean', control), 0.05, 'RELATIVE', 1400 / 3000, 1000)
  t.match(answer, { method: 'frequentist', p_value: direct.p_value, confidence_interval: direct.confidence_interval, significant: false })
  t.equal(answer.p_value, 1, 'PostHog’s golden value: the evidence has not yet outweighed the mixture')
  const fixed = experimentResult('mean', 'frequentist', { method: 'frequentist' }, control, [test]).variant_results[0] as Record<string, unknown>
  t.ok((fixed.p_value as number) < 1, 'without it, the t-test’s p-value')
})
