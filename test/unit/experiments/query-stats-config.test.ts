import t from 'tap'
import { methodSettings, statsMethod } from '../../../src/experiments/query/stats-config.js'
import { experimentResult, StatisticError } from '../../../src/experiments/query/statistics.js'

t.test("each method's level and difference fall back as PostHog's _validate_numeric_range and _parse_enum_config do", async (t) => {
  t.same(methodSettings(null, 'bayesian'), { level: 0.95, difference: 'RELATIVE' })
  t.same(methodSettings({}, 'frequentist'), { level: 0.05, difference: 'RELATIVE' })
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
