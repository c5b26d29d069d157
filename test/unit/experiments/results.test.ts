import t, { type Test } from 'tap'
import { ValidationError } from '../../../src/common/errors.js'
import {
  funnelResult,
  funnelSignificance,
  trendResult,
  trendSignificance,
  type FunnelVariant,
  type TrendVariant,
} from '../../../src/experiments/stats/index.js'
import { SRM_P_VALUE_THRESHOLD, sampleRatioMismatch } from '../../../src/experiments/stats/srm.js'

/** Passes when |found − wanted| ≤ max(abs, rel·|wanted|); on failure reports all three numbers. */
function near(t: Test, found: number, wanted: number, tolerance: { abs?: number; rel?: number }, message: string) {
  const allowed = Math.max(tolerance.abs ?? 0, (tolerance.rel ?? 0) * Math.abs(wanted))
  t.ok(Math.abs(found - wanted) <= allowed, message, { found, wanted, allowed })
}

// Reference numbers are scipy 1.17.1 results quoted in bayes.test.ts and in the SRM table below, plus
// (same quad set-up as the expected-loss table in bayes.test.ts):
//   loss of 100/46 over 130/65 = 0.012753064155868469; loss of 50/50 over 46/54 = 0.01248492759032155;
//   P(46/54 beats four 50/50) = quad(lambda x: C.pdf(x) * T.cdf(x)**4, 0, 1) = 0.06607658889885037 with
//   C = stats.beta(47, 55), T = stats.beta(51, 51); chisquare([118, 110]).pvalue = 0.5962416305866569.

const funnel = (key: string, success_count: number, failure_count: number): FunnelVariant => ({
  key,
  success_count,
  failure_count,
})
const trend = (key: string, count: number, exposure: number, absolute_exposure: number): TrendVariant => ({
  key,
  count,
  exposure,
  absolute_exposure,
})
const fiftyFifty = [
  { key: 'control', rollout_percentage: 50 },
  { key: 'test', rollout_percentage: 50 },
]

t.test('funnelSignificance', async (t) => {
  // Probabilities are crafted, as in PostHog's own tests, so each row isolates one check.
  const rows: [name: string, control: FunnelVariant, tests: FunnelVariant[], probabilities: number[], code: string, loss: number][] = [
    ['a small test variant', funnel('control', 100, 18), [funnel('test', 60, 39)], [0.01, 0.99], 'not_enough_exposure', 1],
    ['a small control', funnel('control', 60, 39), [funnel('test', 100, 18)], [0.99, 0.01], 'not_enough_exposure', 1],
    ['nobody at 90%', funnel('control', 100, 18), [funnel('test', 100, 10)], [0.2, 0.8], 'low_win_probability', 1],
    [
      'the best test close to control',
      funnel('control', 130, 65),
      [funnel('a', 120, 60), funnel('b', 110, 52), funnel('c', 100, 46)],
      [1, 0, 0, 0],
      'high_loss',
      0.012753064155868469,
    ],
    ['a clear test winner', funnel('control', 100, 18), [funnel('test', 100, 10)], [0.08, 0.92], 'significant', 0.0016470279417602866],
    ['a clear control winner', funnel('control', 100, 10), [funnel('test', 100, 18)], [0.92, 0.08], 'significant', 0.0016470279417602866],
  ]
  for (const [name, control, tests, probabilities, code, loss] of rows) {
    const found = funnelSignificance(control, tests, probabilities)
    t.equal(found.code, code, `${name} → ${code}`)
    near(t, found.expectedLoss, loss, { abs: 1e-10 }, `${name}: expected loss`)
  }
})

t.test('trendSignificance', async (t) => {
  const rows: [name: string, control: TrendVariant, tests: TrendVariant[], probabilities: number[], code: string, p: number][] = [
    ['a small test variant', trend('control', 20, 1, 200), [trend('test', 30, 0.495, 99)], [0.01, 0.99], 'not_enough_exposure', 1],
    ['a small control', trend('control', 20, 1, 99), [trend('test', 30, 1, 99)], [0.01, 0.99], 'not_enough_exposure', 1],
    ['nobody at 90%', trend('control', 20, 1, 200), [trend('test', 22, 1, 200)], [0.4, 0.6], 'low_win_probability', 1],
    ['a likely winner with a high p-value', trend('control', 20, 1, 200), [trend('test', 30, 1, 200)], [0.08, 0.92], 'high_p_value', 0.20263875106454066],
    ['a clear winner', trend('control', 1000, 1, 1000), [trend('test', 1100, 1, 1000)], [0.01, 0.99], 'significant', 0.03072070786424249],
    [
      'the largest count among tests',
      trend('control', 1000, 1, 1000),
      [trend('a', 1010, 1, 1000), trend('b', 1100, 1, 1000)],
      [0.0, 0.2, 0.8],
      'significant',
      0.03072070786424249,
    ],
  ]
  for (const [name, control, tests, probabilities, code, p] of rows) {
    const found = trendSignificance(control, tests, probabilities)
    t.equal(found.code, code, `${name} → ${code}`)
    near(t, found.pValue, p, { rel: 1e-9 }, `${name}: p-value`)
  }
})

t.test('funnelResult', async (t) => {
  t.test('reports two variants exactly in PostHog v1 shape', async (t) => {
    const result = funnelResult([funnel('control', 100, 18), funnel('test', 100, 10)], { seed: 's', split: fiftyFifty })
    t.same(Object.keys(result).sort(), [
      'credible_intervals',
      'expected_loss',
      'probability',
      'significance_code',
      'significant',
      'srm',
      'variants',
    ])
    near(t, result.probability.test, 0.9183406587022939, { abs: 1e-9 }, 'test probability')
    t.equal(result.probability.control, 1 - result.probability.test, 'control is 1 − Σ tests')
    t.equal(result.significance_code, 'significant')
    t.equal(result.significant, true)
    near(t, result.expected_loss, 0.0016470279417602866, { abs: 1e-10 }, 'expected loss')
    t.same(result.variants, [funnel('control', 100, 18), funnel('test', 100, 10)])
    near(t, result.credible_intervals.control[0], 0.7715170020965111, { rel: 1e-9 }, 'control interval')
    near(t, result.srm?.p_value ?? Number.NaN, 0.5962416305866569, { rel: 1e-9 }, 'SRM on funnel entrants')
    t.equal(result.srm?.mismatch, false)
  })

  t.test('gives each significance code from counts alone', async (t) => {
    const code = (variants: FunnelVariant[]) => funnelResult(variants, { seed: 'codes' }).significance_code
    t.equal(code([funnel('control', 50, 40), funnel('test', 100, 10)]), 'not_enough_exposure')
    t.equal(code([funnel('control', 267, 2031), funnel('test', 286, 2014)]), 'low_win_probability')
    t.equal(code([funnel('control', 100, 10), funnel('test', 100, 18)]), 'significant')
    // Four equal tests share 93% between them (control is best with P = 0.066), but the best of them is
    // no clear improvement on control: its expected loss is 0.0125.
    const five = [funnel('control', 46, 54), ...Array.from({ length: 4 }, (_, i) => funnel(`t${i}`, 50, 50))]
    const result = funnelResult(five, { seed: 'codes' })
    near(t, result.probability.control, 0.06607658889885037, { abs: 0.005 }, 'control probability')
    t.equal(result.significance_code, 'high_loss')
    near(t, result.expected_loss, 0.01248492759032155, { abs: 1e-10 }, 'loss of the best test over control')
  })

  t.test('is identical on repeated calls and follows the control convention', async (t) => {
    const variants = [funnel('control', 100, 18), funnel('a', 100, 10), funnel('b', 100, 3)]
    const first = funnelResult(variants, { seed: 'exp-1:primary' })
    t.same(funnelResult(variants, { seed: 'exp-1:primary' }), first)
    t.equal(first.probability.control, Math.max(0, 1 - (first.probability.a + first.probability.b)))
    near(t, first.probability.b, 0.9667635957710604, { abs: 0.005 }, 'Monte Carlo probability')
    t.equal(first.srm, null, 'no split, no SRM check')
  })

  t.test('keeps values with their keys whatever the key looks like', async (t) => {
    const result = funnelResult([funnel('control', 100, 18), funnel('2', 100, 10)], { seed: 's' })
    near(t, result.probability['2'], 0.9183406587022939, { abs: 1e-9 }, 'variant "2"')
  })

  t.test('rejects what PostHog rejects', async (t) => {
    const tests = Array.from({ length: 10 }, (_, i) => funnel(`t${i}`, 1, 1))
    t.throws(() => funnelResult([funnel('control', 1, 1), ...tests], { seed: 's' }), {
      code: 'too_much_data',
      message: "Can't calculate experiment results for more than 10 variants",
    })
    t.throws(() => funnelResult([funnel('control', 1, 1)], { seed: 's' }), {
      code: 'no_data',
      message: "Can't calculate experiment results for less than 2 variants",
    })
    t.throws(() => funnelResult([funnel('a', 1, 1), funnel('b', 1, 1)], { seed: 's' }), ValidationError)
  })

  t.test('rejects counts that are not non-negative integers or duplicate keys', async (t) => {
    t.throws(() => funnelResult([funnel('control', -1, 1), funnel('t', 1, 1)], { seed: 's' }), RangeError)
    t.throws(() => funnelResult([funnel('control', 1.5, 1), funnel('t', 1, 1)], { seed: 's' }), RangeError)
    t.throws(() => funnelResult([funnel('control', 1, 1), funnel('control', 1, 1)], { seed: 's' }), RangeError)
  })
})

t.test('trendResult', async (t) => {
  t.test('reports two variants exactly in PostHog v1 shape', async (t) => {
    const variants = [trend('control', 20, 1, 200), trend('test', 30, 1, 200)]
    const result = trendResult(variants, { seed: 's', split: fiftyFifty })
    t.same(Object.keys(result).sort(), [
      'credible_intervals',
      'p_value',
      'probability',
      'significance_code',
      'significant',
      'srm',
      'variants',
    ])
    near(t, result.probability.test, 0.9196101990940058, { abs: 1e-9 }, 'test probability')
    t.equal(result.significance_code, 'high_p_value')
    t.equal(result.significant, false)
    near(t, result.p_value, 0.20263875106454066, { rel: 1e-9 }, 'p-value')
    near(t, result.credible_intervals.control[0], 0.06499665492038094, { rel: 1e-9 }, 'control interval lower')
    near(t, result.credible_intervals.control[1], 0.15444188951337298, { rel: 1e-9 }, 'control interval upper')
    t.same(result.srm, { p_value: 1, expected: { control: 200, test: 200 }, observed: { control: 200, test: 200 }, mismatch: false })
  })

  t.test('flags a sample ratio mismatch on absolute exposures', async (t) => {
    const result = trendResult([trend('control', 500, 1, 1000), trend('test', 600, 1.2, 1200)], {
      seed: 's',
      split: fiftyFifty,
    })
    near(t, result.srm?.p_value ?? Number.NaN, 2.007865612426481e-5, { rel: 1e-9 }, 'chi-square p-value')
    t.equal(result.srm?.mismatch, true)
  })

  t.test('is identical on repeated calls with three variants', async (t) => {
    const variants = [trend('control', 1000, 1, 1000), trend('a', 1040, 1.02, 1020), trend('b', 990, 0.98, 980)]
    const first = trendResult(variants, { seed: 'exp-2:secondary:0' })
    t.same(trendResult(variants, { seed: 'exp-2:secondary:0' }), first)
    near(t, first.probability.a, 0.4635670896287883, { abs: 0.005 }, 'Monte Carlo probability')
  })

  t.test('rejects non-positive exposures', async (t) => {
    t.throws(() => trendResult([trend('control', 1, 0, 1), trend('t', 1, 1, 1)], { seed: 's' }), RangeError)
    t.throws(() => trendResult([trend('control', 1, 1, 1), trend('t', 1, 1, 0)], { seed: 's' }), RangeError)
  })
})

t.test('sampleRatioMismatch', async (t) => {
  t.test('computes Pearson chi-square p-values', async (t) => {
    // expected = [sum(obs) * p / sum(pct) for p in pct];
    // python3 -c "from scipy.stats import chisquare; print(repr(float(chisquare(obs, f_exp=expected).pvalue)))"
    const table: [observed: number[], split: number[], wanted: number][] = [
      [[1000, 1150], [50, 50], 0.0012164989001555205],
      [[1000, 1200], [50, 50], 2.007865612426481e-5],
      [[1000, 1010], [50, 50], 0.8234966946547395],
      [[5000, 5100, 4900], [34, 33, 33], 0.030027408969380286],
      [[4800, 5000, 5300], [34, 33, 33], 7.761971200563717e-10],
      [[900, 2100], [30, 70], 1],
      [[500, 1100], [30, 70], 0.27523352407483115],
      [[10000, 10300], [50, 50], 0.035240223824274594],
    ]
    for (const [observed, shares, wanted] of table) {
      const keys = shares.map((_, i) => (i === 0 ? 'control' : `test-${i}`))
      const result = sampleRatioMismatch(
        Object.fromEntries(keys.map((key, i) => [key, observed[i]])),
        keys.map((key, i) => ({ key, rollout_percentage: shares[i] })),
      )
      near(t, result?.p_value ?? Number.NaN, wanted, { rel: 1e-9 }, `${observed.join(' / ')} on ${shares.join('/')}`)
    }
  })

  t.test('flags a skewed 50/50 split', async (t) => {
    const result = sampleRatioMismatch({ control: 1000, test: 1200 }, fiftyFifty)
    t.same(result?.expected, { control: 1100, test: 1100 })
    t.same(result?.observed, { control: 1000, test: 1200 })
    t.equal(result?.mismatch, true)
  })

  t.test('does not flag a fair split, nor 1000 vs 1150 (p = 0.0012, just above 0.001)', async (t) => {
    t.equal(SRM_P_VALUE_THRESHOLD, 0.001)
    t.equal(sampleRatioMismatch({ control: 1000, test: 1010 }, fiftyFifty)?.mismatch, false)
    t.equal(sampleRatioMismatch({ control: 1000, test: 1150 }, fiftyFifty)?.mismatch, false)
  })

  t.test('counts a variant without exposures as zero', async (t) => {
    const result = sampleRatioMismatch({ control: 2000, 'test-1': 2000 }, [
      { key: 'control', rollout_percentage: 33 },
      { key: 'test-1', rollout_percentage: 33 },
      { key: 'test-2', rollout_percentage: 34 },
    ])
    t.same(result?.observed, { control: 2000, 'test-1': 2000, 'test-2': 0 })
    t.equal(result?.mismatch, true)
  })

  t.test('leaves out keys outside the split and 0% variants', async (t) => {
    const result = sampleRatioMismatch({ control: 1000, test: 1010, 'holdout-3': 90, off: 5 }, [
      ...fiftyFifty,
      { key: 'off', rollout_percentage: 0 },
    ])
    t.same(Object.keys(result?.expected ?? {}), ['control', 'test'])
    t.equal(result?.mismatch, false)
  })

  t.test('returns null when there is nothing to test', async (t) => {
    t.equal(sampleRatioMismatch({ control: 0, test: 0 }, fiftyFifty), null, 'no exposures')
    t.equal(sampleRatioMismatch({ control: 10 }, [{ key: 'control', rollout_percentage: 100 }]), null, 'one variant')
  })
})
