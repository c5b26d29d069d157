import t, { type Test } from 'tap'
import {
  betaCdf,
  betaPdf,
  betaPpf,
  binomialCdf,
  binomialPmf,
  binomialTailAtLeast,
  chiSquareSf,
  gammaCdf,
  gammaPdf,
  gammaPpf,
} from '../../../src/experiments/stats/distributions.js'
import {
  logGamma,
  regularizedBeta,
  regularizedGammaP,
  regularizedGammaQ,
} from '../../../src/experiments/stats/special-functions.js'

/** Passes when |found − wanted| ≤ max(abs, rel·|wanted|); on failure reports all three numbers. */
function near(t: Test, found: number, wanted: number, tolerance: { abs?: number; rel?: number }, message: string) {
  const allowed = Math.max(tolerance.abs ?? 0, (tolerance.rel ?? 0) * Math.abs(wanted))
  t.ok(Math.abs(found - wanted) <= allowed, message, { found, wanted, allowed })
}

// Reference values: scipy 1.17.1, printed with repr(float(...)). Never computed by the code under test.

t.test('logGamma', async (t) => {
  // python3 -c "from scipy.special import gammaln; print(repr(float(gammaln(x))))"
  const table: [x: number, wanted: number][] = [
    [1e-8, 18.42068073818021],
    [0.1, 2.252712651734206],
    [0.5, 0.5723649429247],
    [1, 0],
    [2.5, 0.2846828704729192],
    [9.99, 12.779315214350195],
    [10, 12.801827480081469],
    [10.5, 13.940625219403763],
    [171.3, 708.1149470389971],
    [1e5, 1051287.7089736569],
    [1e9, 19723265827.503716],
  ]
  for (const [x, wanted] of table) near(t, logGamma(x), wanted, { abs: 1e-13, rel: 1e-14 }, `ln Γ(${x})`)
  t.equal(logGamma(0), Number.POSITIVE_INFINITY, 'ln Γ(0) is +∞')
  t.ok(Number.isNaN(logGamma(-1)), 'negative arguments are outside the domain')
})

t.test('regularizedBeta', async (t) => {
  // python3 -c "from scipy.special import betainc; print(repr(float(betainc(a, b, x))))"
  const table: [x: number, a: number, b: number, wanted: number][] = [
    [0.3, 2, 5, 0.5798250000000003],
    [0.5, 0.5, 0.5, 0.5000000000000001],
    [0.9, 30, 3, 0.36668351908062025],
    [0.05, 101, 19, 1.4608040438662208e-111],
    [0.5, 1e6 + 1, 1.001e6 + 1, 0.7601949726871684],
    [0.999, 2, 3, 0.999999996003],
    [0.01, 50, 50, 3.1130219337164244e-72],
    [0.4999, 5e6, 5e6, 0.26354463153140545],
  ]
  for (const [x, a, b, wanted] of table) {
    near(t, regularizedBeta(x, a, b), wanted, { rel: 1e-10 }, `I_${x}(${a}, ${b})`)
  }
  t.same([regularizedBeta(0, 2, 3), regularizedBeta(1, 2, 3)], [0, 1], 'is 0 and 1 at the ends')
})

t.test('regularizedGammaP and regularizedGammaQ', async (t) => {
  // python3 -c "from scipy.special import gammainc; print(repr(float(gammainc(a, x))))"
  const lower: [a: number, x: number, wanted: number][] = [
    [0.5, 0.2, 0.47291074313446196],
    [1, 1, 0.6321205588285577],
    [3, 10, 0.9972306042844884],
    [10, 5, 0.03182805730620481],
    [100, 120, 0.9721362601094793],
    [1e6, 1e6 + 1000, 0.8413447863683402],
    [2.5, 0.001, 9.50853459860793e-9],
  ]
  for (const [a, x, wanted] of lower) near(t, regularizedGammaP(a, x), wanted, { rel: 1e-10 }, `P(${a}, ${x})`)
  // python3 -c "from scipy.special import gammaincc; print(repr(float(gammaincc(a, x))))"
  const upper: [a: number, x: number, wanted: number][] = [
    [0.5, 0.2, 0.5270892568655381],
    [1, 1, 0.36787944117144245],
    [3, 10, 0.0027693957155115775],
    [10, 5, 0.9681719426937951],
    [100, 120, 0.027863739890520652],
    [1e6, 1e6 + 1000, 0.15865521363165971],
    [5, 80, 3.2402154044224763e-29],
  ]
  for (const [a, x, wanted] of upper) near(t, regularizedGammaQ(a, x), wanted, { rel: 1e-9 }, `Q(${a}, ${x})`)
})

t.test('betaPpf', async (t) => {
  // python3 -c "from scipy.stats import beta; print(repr(float(beta.ppf(p, a, b))))"
  const table: [p: number, a: number, b: number, wanted: number][] = [
    [0.025, 101, 19, 0.7715170020965111],
    [0.975, 101, 19, 0.901048214714197],
    [0.025, 1, 1, 0.025],
    [0.975, 1, 201, 0.01818525005438626],
    [0.5, 2, 1e6, 1.6783447424217972e-6],
    [0.025, 5001, 95001, 0.048666639945278665],
    [0.975, 5001, 95001, 0.051368407566739105],
    [1e-10, 1e6, 2, 0.9999736663782973],
    [0.3, 0.5, 0.5, 0.2061073738537634],
    [0.975, 2, 2, 0.9057006759497539],
  ]
  for (const [p, a, b, wanted] of table) near(t, betaPpf(p, a, b), wanted, { rel: 1e-9 }, `Beta(${a}, ${b}).ppf(${p})`)
  t.same([betaPpf(0, 3, 4), betaPpf(1, 3, 4)], [0, 1], 'is 0 and 1 at p = 0 and p = 1')
  t.throws(() => betaPpf(1.5, 3, 4), RangeError, 'rejects p outside [0, 1]')
})

t.test('betaPpf matches published credible intervals', async (t) => {
  // PostHog's funnel tests, "cross-checked with https://www.causascientia.org/math_stat/ProportionCI.html",
  // four decimals: 100 successes and 18 failures → [0.7715, 0.9010]; 100 and 10 → [0.8405, 0.9494].
  // Those digits are truncated, not rounded (scipy gives 0.840558 and 0.949484), hence 1e-4.
  near(t, betaPpf(0.025, 101, 19), 0.7715, { abs: 1e-4 }, '100/18 lower')
  near(t, betaPpf(0.975, 101, 19), 0.901, { abs: 1e-4 }, '100/18 upper')
  near(t, betaPpf(0.025, 101, 11), 0.8405, { abs: 1e-4 }, '100/10 lower')
  near(t, betaPpf(0.975, 101, 11), 0.9494, { abs: 1e-4 }, '100/10 upper')
})

t.test('gammaPpf', async (t) => {
  // python3 -c "from scipy.stats import gamma; print(repr(float(gamma.ppf(p, a, scale=scale))))"
  const table: [p: number, a: number, scale: number, wanted: number][] = [
    [0.025, 21, 1 / 200, 0.06499665492038094],
    [0.975, 21, 1 / 200, 0.15444188951337298],
    [0.025, 1, 1, 0.025317807984289876],
    [0.975, 1, 1, 3.6888794541139354],
    [0.5, 0.3, 1, 0.07313113586695198],
    [0.9, 1e-3, 1, 9.82165964406889e-47],
    [1e-12, 5, 1, 0.0103893448525018],
    [0.975, 1e9 + 1, 1e-9, 1.000061981450409],
    [0.025, 1001, 1 / 1000, 0.9399420337524416],
    [0.975, 3, 2.5, 18.0617191693099],
  ]
  for (const [p, a, scale, wanted] of table) {
    near(t, gammaPpf(p, a, scale), wanted, { rel: 1e-9 }, `Gamma(${a}, scale=${scale}).ppf(${p})`)
  }
  t.equal(gammaPpf(1, 2), Number.POSITIVE_INFINITY, 'is +∞ at p = 1')
})

t.test('ppf inverts cdf', async (t) => {
  for (const [a, b] of [[1, 1], [3, 70], [250, 4], [40_001, 160_001]]) {
    for (const p of [0.001, 0.025, 0.5, 0.975, 0.999]) {
      near(t, betaCdf(betaPpf(p, a, b), a, b), p, { rel: 1e-10 }, `Beta(${a}, ${b}) at ${p}`)
    }
  }
  for (const a of [1, 2.5, 31, 1e6]) {
    for (const p of [0.001, 0.025, 0.5, 0.975, 0.999]) {
      near(t, gammaCdf(gammaPpf(p, a, 0.01), a, 0.01), p, { rel: 1e-10 }, `Gamma(${a}) at ${p}`)
    }
  }
})

t.test('densities', async (t) => {
  // python3 -c "from scipy.stats import beta, gamma; print(repr(float(beta.pdf(0.3, 2, 5))),
  //   repr(float(beta.pdf(0.85, 101, 19))), repr(float(gamma.pdf(0.1, 21, scale=1/200))))"
  near(t, betaPdf(0.3, 2, 5), 2.1608999999999994, { rel: 1e-12 }, 'Beta(2, 5) at 0.3')
  near(t, betaPdf(0.85, 101, 19), 12.061551086616289, { rel: 1e-10 }, 'Beta(101, 19) at 0.85')
  near(t, gammaPdf(0.1, 21, 1 / 200), 17.76706347841696, { rel: 1e-10 }, 'Gamma(21, scale=1/200) at 0.1')
  t.equal(betaPdf(0, 1, 4), 4, 'Beta(1, b) at 0 is b')
})

t.test('chiSquareSf', async (t) => {
  // python3 -c "from scipy.stats import chi2; print(repr(float(chi2.sf(x, k))))"
  const table: [x: number, k: number, wanted: number][] = [
    [3.841458820694124, 1, 0.04999999999999989],
    [10.827566170662733, 1, 0.0010000000000000007],
    [0.5, 1, 0.47950012218695337],
    [7.5, 3, 0.0575584519726364],
    [200, 1, 2.0884875837625688e-45],
    [30, 9, 0.00043872177097947936],
    [0, 2, 1],
  ]
  for (const [x, k, wanted] of table) near(t, chiSquareSf(x, k), wanted, { rel: 1e-10 }, `χ²(${k}) beyond ${x}`)
})

t.test('binomial tails', async (t) => {
  // python3 -c "from scipy.stats import binom; print(repr(float(binom.cdf(k, n, p))),
  //   repr(float(binom.sf(k - 1, n, p))), repr(float(binom.pmf(k, n, p))))"
  const table: [k: number, n: number, p: number, cdf: number, atLeast: number, pmf: number][] = [
    [3, 10, 0.5, 0.171875, 0.9453125, 0.1171875],
    [30, 50, 0.5, 0.9405397737202819, 0.10131937553227033, 0.04185914925255223],
    [1100, 2100, 0.5, 0.9862497202462123, 0.015360353932121245, 0.0016100741783332583],
    [0, 20, 0.3, 0.0007979226629761204, 1, 0.0007979226629761171],
    [160, 260, 0.5238095238095238, 0.9987965835150018, 0.0018137596447597548, 0.0006103431597615941],
    [5, 1000, 0.001, 0.999411929898237, 0.003636878029521792, 0.003048807927758811],
    [40000, 100000, 0.41, 6.199231287027261e-11, 0.9999999999405845, 2.5768816913207828e-12],
  ]
  for (const [k, n, p, cdf, atLeast, pmf] of table) {
    near(t, binomialCdf(k, n, p), cdf, { rel: 1e-9 }, `P(X ≤ ${k}), X ~ Bin(${n}, ${p})`)
    near(t, binomialTailAtLeast(k, n, p), atLeast, { rel: 1e-9 }, `P(X ≥ ${k}), X ~ Bin(${n}, ${p})`)
    near(t, binomialPmf(k, n, p), pmf, { rel: 1e-9 }, `P(X = ${k}), X ~ Bin(${n}, ${p})`)
  }
})

t.test('binomial tails agree with summed log-gamma terms', async (t) => {
  // The incomplete-beta identity must equal PostHog's direct sum of C(n, i) rⁱ (1 − r)ⁿ⁻ⁱ terms.
  for (const [k, n, p] of [[7, 40, 0.3], [55, 90, 0.5], [0, 15, 0.2], [300, 310, 0.97]]) {
    let low = 0
    for (let i = 0; i <= k; i++) low += binomialPmf(i, n, p)
    let high = 0
    for (let i = k; i <= n; i++) high += binomialPmf(i, n, p)
    near(t, binomialCdf(k, n, p), low, { rel: 1e-11 }, `lower tail at ${k} of ${n}`)
    near(t, binomialTailAtLeast(k, n, p), high, { rel: 1e-11 }, `upper tail at ${k} of ${n}`)
  }
})
