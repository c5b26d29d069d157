import t from 'tap'
import { compileFlags, evaluateAll, sha1Hash } from '../../../src/flags/index.js'
import { MAX_BATCH_ID_BYTES, Sha1Batch } from '../../../src/flags/sha1x4/batch.js'
import { MAX_MESSAGE_BYTES } from '../../../src/flags/sha1x4/module.js'
import { flag, input } from './fixtures/vectors.js'

/** Deterministic pseudo-random numbers (mulberry32), so a failure names its case. */
function rng(seed: number): () => number {
  let a = seed
  return () => {
    a = (a + 0x6d2b79f5) | 0
    let x = Math.imul(a ^ (a >>> 15), 1 | a)
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296
  }
}

const ALPHABET = ['a', 'Z', '0', '-', '_', '.', '@', 'é', 'ü', '用', '😀']
function text(r: () => number, length: number): string {
  let s = ''
  for (let i = 0; i < length; i++) s += ALPHABET[Math.floor(r() * ALPHABET.length)]
  return s
}

t.test('batch hashes equal sha1Hash for every length, block count and character', async (t) => {
  const r = rng(7)
  // prefix lengths from 1 to beyond the batch's limit, so every block count and the fallback occur
  const prefixes = Array.from({ length: 203 }, (_, i) => (i % 17 === 0 ? null : text(r, 1 + Math.floor(r() * (i < 190 ? 120 : 400))) + '.'))
  const batch = Sha1Batch.create([
    { prefixes, salt: '' },
    { prefixes: prefixes.map((p, i) => (i % 3 === 0 ? p : null)), salt: 'variant' },
  ])
  t.ok(batch, 'WebAssembly SIMD is available on Node 20')
  let compared = 0
  let mismatches = 0
  for (let n = 0; n < 300; n++) {
    const id = n === 0 ? '' : text(r, Math.floor(r() * (n % 50 === 0 ? 300 : 60)))
    for (const [table, salt] of [[0, ''], [1, 'variant']] as const) {
      const at = batch!.run(table, id)
      if (at < 0) {
        t.ok(Buffer.byteLength(id) > MAX_BATCH_ID_BYTES, `only long identifiers are refused (${Buffer.byteLength(id)} bytes)`)
        continue
      }
      for (let i = 0; i < prefixes.length; i++) {
        const p = prefixes[i]
        const inTable = p !== null && (table === 0 || i % 3 === 0) && Buffer.byteLength(p) + salt.length <= MAX_MESSAGE_BYTES - MAX_BATCH_ID_BYTES
        if (!inTable) {
          if (!Number.isNaN(batch!.hashes[at + i])) mismatches++
          continue
        }
        compared++
        if (batch!.hashes[at + i] !== sha1Hash(p + id + salt)) mismatches++
      }
    }
  }
  t.ok(compared > 50_000, `compared ${compared} hashes`)
  t.equal(mismatches, 0)
})

t.test('an identifier over the byte budget is refused, not truncated', async (t) => {
  const batch = Sha1Batch.create([{ prefixes: ['flag.'], salt: '' }])!
  t.equal(batch.run(0, 'x'.repeat(MAX_BATCH_ID_BYTES + 1)), -1)
  t.equal(batch.run(0, 'é'.repeat(MAX_BATCH_ID_BYTES / 2 + 1)), -1, 'counted in UTF-8 bytes')
  t.equal(batch.hashes[batch.run(0, 'x'.repeat(MAX_BATCH_ID_BYTES))], sha1Hash('flag.' + 'x'.repeat(MAX_BATCH_ID_BYTES)))
})

t.test('returning identifiers are answered from their slot, and a slot taken by another identifier is hashed afresh', async (t) => {
  // a wide table, so the ring holds only a few identifiers and comes round many times
  const prefixes = Array.from({ length: 20_000 }, (_, i) => (i % 7 === 0 ? null : `flag-${i}.`))
  const batch = Sha1Batch.create([{ prefixes, salt: '' }])!
  const ids = Array.from({ length: 40 }, (_, i) => `user-${i}`)
  const offsets = new Set<number>()
  let mismatches = 0
  for (let round = 0; round < 3; round++) {
    for (const id of ids) {
      const at = batch.run(0, id)
      offsets.add(at)
      if (batch.run(0, id) !== at) mismatches++ // asked again at once: the same slot
      for (let i = round; i < prefixes.length; i += 997) {
        const expected = prefixes[i] === null ? Number.NaN : sha1Hash(prefixes[i] + id)
        if (!Object.is(batch.hashes[at + i], expected)) mismatches++
      }
    }
  }
  t.ok(offsets.size < ids.length, `the ring came round (${offsets.size} slots for ${ids.length} identifiers)`)
  t.equal(mismatches, 0)
})

t.test('flag sets answer the same with the batch as hashing one flag at a time', async (t) => {
  const r = rng(11)
  const flags = Array.from({ length: 120 }, (_, i) =>
    flag(`flag-${i}-${text(r, i % 40)}`, {
      groups: [
        { properties: i % 4 === 0 ? [{ key: 'plan', value: ['pro'], operator: 'exact', type: 'person' }] : [], rollout_percentage: Math.floor(r() * 101) },
        { properties: [], rollout_percentage: i % 5 === 0 ? 100 : Math.floor(r() * 101) },
      ],
      ...(i % 6 === 0 ? { multivariate: { variants: [{ key: 'a', rollout_percentage: 30 }, { key: 'b', rollout_percentage: 70 }] } } : {}),
    }),
  )
  const set = compileFlags(flags, { groupTypeMapping: {}, cohorts: [] })
  const oneByOne = (s: string): number => sha1Hash(s) // another function: the set hashes without its batch
  let differences = 0
  for (let n = 0; n < 300; n++) {
    const distinctId = n % 30 === 0 ? 'y'.repeat(600) : text(r, 1 + (n % 45))
    const req = input(distinctId, { plan: n % 2 === 0 ? 'pro' : 'free' })
    const batched = evaluateAll(set, req)
    const single = evaluateAll(set, req, { hash: oneByOne })
    if (JSON.stringify(batched) !== JSON.stringify(single)) differences++
  }
  t.equal(differences, 0)
})
