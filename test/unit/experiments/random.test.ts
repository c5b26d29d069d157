import t, { type Test } from 'tap'
import { gammaPpf, betaPpf } from '../../../src/experiments/stats/distributions.js'
import { Random } from '../../../src/experiments/stats/random.js'
import { sampleBeta, sampleGamma } from '../../../src/experiments/stats/sampling.js'

/** Passes when |found − wanted| ≤ max(abs, rel·|wanted|); on failure reports all three numbers. */
function near(t: Test, found: number, wanted: number, tolerance: { abs?: number; rel?: number }, message: string) {
  const allowed = Math.max(tolerance.abs ?? 0, (tolerance.rel ?? 0) * Math.abs(wanted))
  t.ok(Math.abs(found - wanted) <= allowed, message, { found, wanted, allowed })
}

/** Mean, variance and the share of draws below `cut` of n draws. */
function summarize(n: number, draw: () => number, cut: number): { mean: number; variance: number; below: number } {
  let sum = 0
  let sumSquares = 0
  let below = 0
  for (let i = 0; i < n; i++) {
    const x = draw()
    sum += x
    sumSquares += x * x
    if (x < cut) below += 1
  }
  const mean = sum / n
  return { mean, variance: sumSquares / n - mean * mean, below: below / n }
}

t.test('Random', async (t) => {
  t.test('reproduces the xoshiro128** reference output', async (t) => {
    // First outputs of the authors' xoshiro128starstar.c from state {1, 2, 3, 4}, reproduced with a
    // plain Python transcription of that C code (unbounded ints masked to 32 bits).
    const random = new Random([1, 2, 3, 4])
    t.same(
      Array.from({ length: 5 }, () => random.uint32()),
      [11520, 0, 5927040, 70819200, 2031721883],
    )
  })

  t.test('gives equal streams for equal seeds and different streams otherwise', async (t) => {
    const take = (seed: string) => {
      const random = Random.fromSeed(seed)
      return Array.from({ length: 8 }, () => random.uniform())
    }
    t.same(take('exp-42:primary'), take('exp-42:primary'))
    t.notSame(take('exp-42:primary'), take('exp-42:secondary:0'))
    t.notSame(take(''), take(' '))
  })

  t.test('draws uniforms in [0, 1) with the uniform mean and variance', async (t) => {
    const random = Random.fromSeed('uniform')
    const n = 200_000
    const { mean, variance, below } = summarize(n, () => random.uniform(), 0.1)
    // Standard errors: mean √(1/12n) ≈ 6.5e-4, share below 0.1 √(0.09/n) ≈ 6.7e-4; five of each.
    near(t, mean, 0.5, { abs: 5 * Math.sqrt(1 / 12 / n) }, 'mean 1/2')
    near(t, variance, 1 / 12, { abs: 0.002 }, 'variance 1/12')
    near(t, below, 0.1, { abs: 5 * Math.sqrt(0.09 / n) }, '10% below 0.1')
    let inRange = true
    for (let i = 0; i < 10_000; i++) {
      const u = random.uniform()
      if (!(u >= 0 && u < 1)) inRange = false
    }
    t.ok(inRange, 'never leaves [0, 1)')
  })

  t.test('draws normals with mean 0, variance 1 and 2.5% below −1.959964', async (t) => {
    const random = Random.fromSeed('normal')
    const n = 200_000
    const { mean, variance, below } = summarize(n, () => random.normal(), -1.959963984540054)
    near(t, mean, 0, { abs: 5 / Math.sqrt(n) }, 'mean')
    near(t, variance, 1, { abs: 5 * Math.sqrt(2 / n) }, 'variance')
    near(t, below, 0.025, { abs: 5 * Math.sqrt((0.025 * 0.975) / n) }, 'lower 2.5% tail')
  })
})

t.test('sampleGamma', async (t) => {
  // Moments within five standard errors, and the share below the 2.5% quantile from gammaPpf (an
  // independent check that sampler and quantile function describe the same distribution).
  const n = 100_000
  for (const [shape, scale] of [[0.4, 1], [1, 2], [21, 1 / 200], [5000, 1e-3]] as const) {
    const random = Random.fromSeed(`gamma:${shape}`)
    const cut = gammaPpf(0.025, shape, scale)
    const { mean, variance, below } = summarize(n, () => sampleGamma(random, shape, scale), cut)
    const sd = Math.sqrt(shape) * scale
    near(t, mean, shape * scale, { abs: (5 * sd) / Math.sqrt(n) }, `Gamma(${shape}) mean`)
    near(t, variance, shape * scale * scale, { rel: 5 * Math.sqrt((2 + 6 / shape) / n) }, `Gamma(${shape}) variance`)
    near(t, below, 0.025, { abs: 5 * Math.sqrt((0.025 * 0.975) / n) }, `Gamma(${shape}) lower 2.5% tail`)
  }
  t.throws(() => sampleGamma(Random.fromSeed('x'), 0), RangeError, 'rejects shape 0')
})

t.test('sampleBeta', async (t) => {
  const n = 100_000
  for (const [a, b] of [[1, 1], [101, 19], [3, 400]] as const) {
    const random = Random.fromSeed(`beta:${a}:${b}`)
    const cut = betaPpf(0.025, a, b)
    const { mean, variance, below } = summarize(n, () => sampleBeta(random, a, b), cut)
    const exactVariance = (a * b) / ((a + b) ** 2 * (a + b + 1))
    near(t, mean, a / (a + b), { abs: 5 * Math.sqrt(exactVariance / n) }, `Beta(${a}, ${b}) mean`)
    near(t, variance, exactVariance, { rel: 0.03 }, `Beta(${a}, ${b}) variance`)
    near(t, below, 0.025, { abs: 5 * Math.sqrt((0.025 * 0.975) / n) }, `Beta(${a}, ${b}) lower 2.5% tail`)
  }
})
