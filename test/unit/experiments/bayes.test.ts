import t, { type Test } from 'tap'
import {
  MONTE_CARLO_DRAWS,
  conversionPosterior,
  countPosterior,
  credibleInterval,
  expectedLoss,
  probabilityGreater,
  winProbabilities,
} from '../../../src/experiments/stats/bayes.js'
import { countTestPValue } from '../../../src/experiments/stats/frequentist.js'
import { Random } from '../../../src/experiments/stats/random.js'

/** Passes when |found − wanted| ≤ max(abs, rel·|wanted|); on failure reports all three numbers. */
function near(t: Test, found: number, wanted: number, tolerance: { abs?: number; rel?: number }, message: string) {
  const allowed = Math.max(tolerance.abs ?? 0, (tolerance.rel ?? 0) * Math.abs(wanted))
  t.ok(Math.abs(found - wanted) <= allowed, message, { found, wanted, allowed })
}

// Bayesian reference values come from scipy 1.17.1 by numerical integration (scipy.integrate.quad), a
// method independent of the closed forms under test. Common setup, for posteriors A, B:
//   from scipy import stats, integrate, special; import numpy as np
//   lo = min(A.ppf(1e-15), B.ppf(1e-15)); hi = max(A.isf(1e-15), B.isf(1e-15)); pts = np.linspace(lo, hi, 60)
//   quad(f, lo, hi, points=pts, limit=1000, epsabs=1e-14, epsrel=1e-12)[0]

const beta = conversionPosterior
const gamma = countPosterior

t.test('probabilityGreater for conversions', async (t) => {
  // A = stats.beta(s1 + 1, f1 + 1), B = stats.beta(s2 + 1, f2 + 1); f = lambda x: B.pdf(x) * A.cdf(x)
  const table: [s1: number, f1: number, s2: number, f2: number, wanted: number][] = [
    [100, 18, 100, 10, 0.9183406587022939],
    [0, 0, 5, 3, 0.6],
    [267, 2031, 286, 2014, 0.8022775951300477],
    [5000, 95000, 5200, 94800, 0.9789617174805312],
    [3, 200, 0, 150, 0.1076774217723253],
    [500_000, 500_000, 501_000, 499_000, 0.92135040512282],
  ]
  for (const [s1, f1, s2, f2, wanted] of table) {
    const found = probabilityGreater(beta(s2, f2), beta(s1, f1))
    near(t, found, wanted, { abs: 1e-9 }, `P(${s2}/${f2} beats ${s1}/${f1})`)
    near(t, probabilityGreater(beta(s1, f1), beta(s2, f2)), 1 - wanted, { abs: 1e-9 }, 'and its complement')
  }
  near(t, probabilityGreater(beta(7, 7), beta(7, 7)), 0.5, { abs: 1e-12 }, 'equal posteriors are a coin flip')
})

t.test('probabilityGreater matches the published A/B example', async (t) => {
  // PostHog's funnel test evaluates E. Miller's closed form ("Formulas for Bayesian A/B testing") for
  // 100 successes / 10 failures against 100 / 18 and expects 0.918.
  near(t, probabilityGreater(beta(100, 10), beta(100, 18)), 0.918, { abs: 5e-4 }, '100/10 beats 100/18')
  // PostHog's trend test, Miller's count formula: 30 events against 20 on equal exposure → 0.92.
  near(t, probabilityGreater(gamma(30, 1), gamma(20, 1)), 0.92, { abs: 5e-3 }, '30 events beat 20')
})

t.test('probabilityGreater for counts', async (t) => {
  // special.betainc(c1 + 1, c2 + 1, e1 / (e1 + e2)); quad with A = stats.gamma(c1 + 1, scale=1/e1),
  // B = stats.gamma(c2 + 1, scale=1/e2), f = lambda x: B.pdf(x) * A.cdf(x) agrees to 1e-11 on the first four.
  const table: [c1: number, e1: number, c2: number, e2: number, wanted: number][] = [
    [20, 1, 30, 1, 0.9196101990940058],
    [2, 1, 1, 1, 0.3125],
    [0, 1, 0, 1.3, 0.4347826086956522],
    [1000, 1, 1100, 1.2, 0.023194766097467706],
    [1e7, 1, 1.001e7, 1, 0.9873080292471275],
  ]
  for (const [c1, e1, c2, e2, wanted] of table) {
    near(t, probabilityGreater(gamma(c2, e2), gamma(c1, e1)), wanted, { abs: 1e-9 }, `${c2}/${e2} beats ${c1}/${e1}`)
  }
  t.throws(() => probabilityGreater(gamma(1, 1), beta(1, 1)), RangeError, 'refuses to compare families')
})

t.test('expectedLoss', async (t) => {
  t.test('is exact against one other variant', async (t) => {
    // T = stats.beta(sT + 1, fT + 1), O = stats.beta(sO + 1, fO + 1), Op = stats.beta(sO + 2, fO + 1),
    // mO = (sO + 1) / (sO + fO + 2); f = lambda t: T.pdf(t) * (mO * Op.sf(t) - t * O.sf(t))
    // (E[max(0, O − t)] = mO·P(O⁺ > t) − t·P(O > t), integrated over T).
    const table: [sT: number, fT: number, sO: number, fO: number, wanted: number][] = [
      [100, 10, 100, 18, 0.0016470279417602866],
      [100, 18, 100, 10, 0.06176607556080748],
      [286, 2014, 267, 2031, 0.0010560813212140998],
      [0, 0, 5, 3, 0.1909090909090902],
      [5200, 94800, 5000, 95000, 7.64900103565757e-6],
    ]
    for (const [sT, fT, sO, fO, wanted] of table) {
      near(t, expectedLoss(beta(sT, fT), [beta(sO, fO)]), wanted, { abs: 1e-10 }, `choosing ${sT}/${fT} over ${sO}/${fO}`)
    }
  })

  t.test('is a seeded Monte Carlo mean against several', async (t) => {
    // Reference: quad(lambda t: T.pdf(t) * inner(t), lo, hi, ...) with
    // inner(t) = quad(lambda m: 1 - np.prod([o.cdf(m) for o in O]), t, hi)[0] = E[max(0, max(O) − t)].
    // With 100,000 draws the Monte Carlo standard error is below 1e-4 here; the tolerance is 5e-4.
    const cases: [target: [number, number], others: [number, number][], wanted: number][] = [
      [[100, 3], [[100, 18], [100, 10]], 0.0004585653420593811],
      [[110, 52], [[130, 65], [120, 60]], 0.0221473496206181],
    ]
    for (const [target, others, wanted] of cases) {
      const posteriors = others.map((o) => beta(...o))
      const found = expectedLoss(beta(...target), posteriors, Random.fromSeed('loss'), 100_000)
      near(t, found, wanted, { abs: 5e-4 }, `choosing ${target.join('/')}`)
    }
    t.throws(() => expectedLoss(beta(1, 1), [beta(1, 1), beta(2, 2)]), RangeError, 'needs a random source')
  })
})

t.test('winProbabilities', async (t) => {
  // Exact multi-variant reference: P(i is best) = quad(lambda x: D[i].pdf(x) * prod(D[j].cdf(x) for j != i),
  // lo, hi, points=np.linspace(lo, hi, 80), limit=2000, epsabs=1e-13, epsrel=1e-11), lo/hi over all D.
  const cases: [name: string, posteriors: ReturnType<typeof beta>[], wanted: number[]][] = [
    [
      'three conversion variants, one clearly best',
      [beta(100, 18), beta(100, 10), beta(100, 3)],
      [0.00037181952832871174, 0.03286458470060936, 0.9667635957710604],
    ],
    [
      'four nearly equal conversion variants',
      [beta(130, 65), beta(120, 60), beta(110, 52), beta(100, 46)],
      [0.16803457895891874, 0.17446131511401983, 0.29222142922040534, 0.36528267670665504],
    ],
    [
      'three count variants on unequal exposure',
      [gamma(1000, 1), gamma(1040, 1.02), gamma(990, 0.98)],
      [0.21092720470941997, 0.4635670896287883, 0.325505705660932],
    ],
  ]

  t.test('are within 0.005 of the exact values', async (t) => {
    for (const [name, posteriors, wanted] of cases) {
      const found = winProbabilities(posteriors, Random.fromSeed(name))
      found.forEach((p, i) => near(t, p, wanted[i], { abs: 0.005 }, `${name}: variant ${i}`))
      near(t, found.reduce((a, b) => a + b, 0), 1, { abs: 1e-12 }, `${name}: sum to 1`)
    }
  })

  t.test('are identical for the same seed', async (t) => {
    // The draw count does not matter for determinism; fewer draws keep the test quick.
    const [, posteriors] = cases[1]
    const run = () => winProbabilities(posteriors, Random.fromSeed('exp-7:primary'), 20_000)
    t.same(run(), run())
  })

  t.test('move by less than 0.005 between seeds', async (t) => {
    // With N draws the standard error is at most 0.5/√N = 0.001 (N = 250,000), so three seeds spread
    // over much less than 0.005; this guards against a draw count or sampler that is too noisy.
    t.equal(MONTE_CARLO_DRAWS, 250_000)
    const [, posteriors] = cases[2]
    const runs = ['a', 'b', 'c'].map((seed) => winProbabilities(posteriors, Random.fromSeed(seed)))
    for (let i = 0; i < posteriors.length; i++) {
      const values = runs.map((run) => run[i])
      t.ok(Math.max(...values) - Math.min(...values) < 0.005, `variant ${i} spread`, { values })
    }
  })

  t.test('are exact for two variants, whatever the seed', async (t) => {
    const two = [beta(100, 18), beta(100, 10)]
    t.same(winProbabilities(two, Random.fromSeed('x')), winProbabilities(two, Random.fromSeed('y')))
    near(t, winProbabilities(two, Random.fromSeed('x'))[1], 0.9183406587022939, { abs: 1e-9 }, 'test wins')
  })
})

t.test('credibleInterval', async (t) => {
  // stats.beta.ppf([0.025, 0.975], s + 1, f + 1) and stats.gamma.ppf([0.025, 0.975], c + 1, scale=1/exposure)
  const table: [posterior: ReturnType<typeof beta>, wanted: [number, number]][] = [
    [beta(100, 18), [0.7715170020965111, 0.901048214714197]],
    [beta(0, 0), [0.025, 0.975]],
    [gamma(20, 200), [0.06499665492038094, 0.15444188951337298]],
    [gamma(1000, 1000), [0.9399420337524416, 1.063952136016302]],
  ]
  for (const [posterior, [lo, hi]] of table) {
    const [foundLo, foundHi] = credibleInterval(posterior)
    near(t, foundLo, lo, { rel: 1e-9 }, `${JSON.stringify(posterior)} lower`)
    near(t, foundHi, hi, { rel: 1e-9 }, `${JSON.stringify(posterior)} upper`)
  }
  // PostHog's trend test (published to four decimals): 30 events over 200 users → [0.1053, 0.2141].
  const [lo, hi] = credibleInterval(gamma(30, 200))
  near(t, lo, 0.1053, { abs: 1e-4 }, '30 over 200 lower')
  near(t, hi, 0.2141, { abs: 1e-4 }, '30 over 200 upper')
})

t.test('countTestPValue', async (t) => {
  t.test('matches the exact binomial test', async (t) => {
    // n = kc + kt, r = et / (ec + et);
    // python3 -c "from scipy.stats import binom; print(repr(float(min(1, 2 * min(binom.cdf(kt, n, r), binom.sf(kt - 1, n, r))))))"
    const table: [kc: number, ec: number, kt: number, et: number, wanted: number][] = [
      [20, 1, 30, 1, 0.20263875106454066],
      [2, 1, 1, 1, 1],
      [1000, 1, 1100, 1, 0.03072070786424249],
      [100, 1, 160, 1.1, 0.0036275192895195096],
      [0, 1, 0, 1, 1],
      [5000, 1, 5150, 0.97, 0.002584124025856406],
      [30, 1, 20, 1, 0.20263875106454066],
    ]
    for (const [kc, ec, kt, et, wanted] of table) {
      const found = countTestPValue({ count: kc, exposure: ec }, { count: kt, exposure: et })
      near(t, found, wanted, { rel: 1e-9 }, `${kt} events at exposure ${et} against ${kc} at ${ec}`)
    }
  })

  t.test('matches the published Poisson-means example', async (t) => {
    // PostHog's trend test: 20 against 30 events on equal exposure gives 0.20, "matches
    // https://www.evanmiller.org/ab-testing/poisson-means.html" (two decimals).
    near(t, countTestPValue({ count: 20, exposure: 1 }, { count: 30, exposure: 1 }), 0.2, { abs: 0.005 }, '20 vs 30')
  })
})
