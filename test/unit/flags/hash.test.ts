import t from 'tap'
import { hash } from 'node:crypto'
import { compileFlags, evaluateAll, sha1Hash } from '../../../src/flags/index.js'
import { flag, input, MULTIVARIATE_55, MULTIVARIATE_VARIANTS, SIMPLE_FLAG_45 } from './fixtures/vectors.js'

/** The reference: the 60-bit prefix as an exact integer, converted once (correct rounding), over 2^60. */
function reference(s: string): number {
  return Number(BigInt('0x' + hash('sha1', s, 'hex').slice(0, 15))) / 2 ** 60
}

t.test('sha1Hash', async (t) => {
  t.test('matches the first-20 table of the research notes', async (t) => {
    const rows: [number, string, number, number, number][] = [
      [0, 'c8a05362b9f414f', 0.783696376422, 0.502037796131, 0.618645453793],
      [1, '56f70997ddf6067', 0.3397069927, 0.318030323173, 0.64731651573],
      [2, '5f3e3d121e822df', 0.372043435024, 0.356604117043, 0.063901062814],
      [3, 'e859e70821b6266', 0.907621802793, 0.701012555519, 0.3954305085],
      [4, '0a223dabfacb59d', 0.039584974754, 0.93311919867, 0.549291331791],
      [9, '247dc84b1106922', 0.14254428704, 0.873172294021, 0.98012228954],
      [14, '017aed35dcde49d', 0.005781961107, 0.244220797072, 0.638640820349],
      [19, '40d40f6ef100210', 0.253235783181, 0.453364035116, 0.119509864067],
    ]
    for (const [i, hex, simple, multi, variant] of rows) {
      t.equal(hash('sha1', `simple-flag.distinct_id_${i}`, 'hex').slice(0, 15), hex, `hex prefix of id ${i}`)
      t.equal(+sha1Hash(`simple-flag.distinct_id_${i}`).toFixed(12), simple, `rollout hash of id ${i}`)
      t.equal(+sha1Hash(`multivariate-flag.distinct_id_${i}`).toFixed(12), multi, `multivariate rollout hash of id ${i}`)
      t.equal(+sha1Hash(`multivariate-flag.distinct_id_${i}variant`).toFixed(12), variant, `variant hash of id ${i}`)
    }
  })

  t.test('is bit-identical to exact 60-bit integer rounding', async (t) => {
    let mismatches = 0
    for (let i = 0; i < 20_000; i++) {
      const s = `flag-${i % 97}.user-${i}${i % 3 === 0 ? 'variant' : ''}`
      if (sha1Hash(s) !== reference(s)) mismatches++
    }
    t.equal(mismatches, 0)
  })

  t.test('hashes UTF-8 bytes of non-ASCII input', async (t) => {
    for (const s of ['flag.üser', 'flag.用户', 'flag.😀', 'holdout-é']) t.equal(sha1Hash(s), reference(s), s)
  })

  t.test('gives the holdout vectors of the Rust service', async (t) => {
    const table: [string, number][] = [
      ['some_distinct_id', 0.7270002403585725],
      ['test-identifier', 0.4493881716040236],
      ['example_id', 0.9402003475831224],
      ['example_id2', 0.6292740389966519],
    ]
    for (const [id, expected] of table) t.equal(sha1Hash(`holdout-${id}`), expected, id)
  })
})

t.test('rollout and variant bucketing', async (t) => {
  const set = compileFlags(
    [
      flag('simple-flag', { groups: [{ properties: [], rollout_percentage: 45 }] }),
      flag('multivariate-flag', { groups: [{ properties: [], rollout_percentage: 55 }], multivariate: { variants: MULTIVARIATE_VARIANTS } }),
    ],
    { groupTypeMapping: {}, cohorts: [] },
  )
  const letters: Record<string, string> = { 'first-variant': 'A', 'second-variant': 'B', 'third-variant': 'C', 'fourth-variant': 'D', 'fifth-variant': 'E' }
  let simple = ''
  let multi = ''
  for (let i = 0; i < 1000; i++) {
    const { flags } = evaluateAll(set, input(`distinct_id_${i}`))
    simple += flags['simple-flag'].enabled ? '1' : '0'
    const m = flags['multivariate-flag']
    multi += m.enabled ? letters[m.variant!] : '-'
  }

  t.test('reproduces all 1,000 simple-flag results of PostHog', async (t) => {
    t.equal(simple, SIMPLE_FLAG_45)
    t.equal([...simple].filter((c) => c === '1').length, 446)
  })

  t.test('reproduces all 1,000 multivariate results of PostHog', async (t) => {
    t.equal(multi, MULTIVARIATE_55)
    const count = (c: string) => [...multi].filter((x) => x === c).length
    t.same([count('A'), count('B'), count('C'), count('D'), count('E'), count('-')], [290, 110, 111, 24, 21, 444])
  })

  t.test('passes a rollout when the hash equals the bound, and 100% without hashing', async (t) => {
    const s = compileFlags([flag('f', { groups: [{ rollout_percentage: 30 }] }), flag('g', { groups: [{ rollout_percentage: 100 }] })], { groupTypeMapping: {}, cohorts: [] })
    const seen: string[] = []
    const r = evaluateAll(s, input('u'), { hash: (x) => (seen.push(x), 0.3) }).flags
    t.equal(r.f.enabled, true, 'hash <= p/100')
    t.equal(r.g.enabled, true)
    t.same(seen, ['f.u'], 'a 100% rollout is not hashed')
  })

  t.test('uses cumulative [min, max) variant bounds and null past the last bound', async (t) => {
    const variants = [{ key: 'a', rollout_percentage: 30 }, { key: 'b', rollout_percentage: 30 }]
    const s = compileFlags([flag('f', { groups: [{ rollout_percentage: 100 }], multivariate: { variants } })], { groupTypeMapping: {}, cohorts: [] })
    const variantAt = (h: number) => evaluateAll(s, input('u'), { hash: () => h }).flags.f.variant
    t.equal(variantAt(0), 'a')
    t.equal(variantAt(0.3 - 1e-12), 'a')
    t.equal(variantAt(0.3), 'b', 'upper bound is exclusive')
    t.equal(variantAt(0.6), null, 'past the sum of percentages: plain true')
    t.equal(evaluateAll(s, input('u'), { hash: () => 0.7 }).flags.f.enabled, true)
  })
})
