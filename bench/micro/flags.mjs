// Micro benchmark of the pure flag engine (no HTTP): requests/s for sets of 1, 50, 350 and 500 flags, to
// choose the inline-vs-pool threshold of /decide. Runs on the compiled output: `npx tsc -p . && node bench/micro/flags.mjs`.
// A "request" is one evaluateAll (and, separately, one evaluateList: what /decide runs) over the whole set for a fresh distinct id with ~20 person properties.
// The mix: half the flags have property conditions, rollouts spread over 0–100%, a tenth are multivariate.
import { hash } from 'node:crypto'
import { compileFlags, evaluateAll, sha1Hash } from '../../dist/src/flags/index.js'
import { flagBody, personProperties } from '../scenarios/_payloads.mjs'

const DURATION_MS = Number(process.env.BENCH_MS ?? 1500)

/** The realistic mix of the load scenarios, as the engine's compiled input. */
function buildFlags(n) {
  return Array.from({ length: n }, (_, i) => ({ id: i + 1, deleted: false, ensure_experience_continuity: false, version: 1, ...flagBody(i) }))
}

const NOW = Date.parse('2024-06-01T00:00:00Z')

function measure(fn) {
  for (let i = 0; i < 2000; i++) fn(i) // warm up
  let i = 0
  const start = process.hrtime.bigint()
  const end = start + BigInt(DURATION_MS) * 1_000_000n
  while (process.hrtime.bigint() < end) for (let k = 0; k < 50; k++) fn(i++)
  const secs = Number(process.hrtime.bigint() - start) / 1e9
  return i / secs
}

const rows = []
for (const n of [1, 50, 350, 500]) {
  const set = compileFlags(buildFlags(n), { groupTypeMapping: {}, cohorts: [] })
  const people = Array.from({ length: 1000 }, (_, i) => personProperties(i))
  let hashes = 0
  const counting = (s) => (hashes++, sha1Hash(s))
  evaluateAll(set, { distinctId: 'user-0', personProperties: people[0], groups: {}, groupProperties: {}, now: NOW }, { hash: counting })
  for (let i = 1; i < 200; i++) evaluateAll(set, { distinctId: `user-${i}`, personProperties: people[i], groups: {}, groupProperties: {}, now: NOW }, { hash: counting })
  const hashesPerRequest = hashes / 200
  const rps = measure((i) => evaluateAll(set, { distinctId: `user-${i}`, personProperties: people[i % 1000], groups: {}, groupProperties: {}, now: NOW }))
  // what /decide runs: the same evaluation without the keyed object
  const listRps = measure((i) => set.evaluateList({ distinctId: `user-${i}`, personProperties: people[i % 1000], groups: {}, groupProperties: {}, now: NOW }))
  // the ceiling: the same number of SHA-1 digests per request and nothing else
  const ceiling = measure((i) => {
    for (let k = 0; k < n; k++) hash('sha1', `bench-flag-${k}.user-${i}`, 'hex')
  })
  rows.push({ flags: n, 'requests/s': Math.round(rps), 'µs/request': +(1e6 / rps).toFixed(1), 'evaluateList req/s': Math.round(listRps), 'hashes/request': +hashesPerRequest.toFixed(1), 'sha1×flags ceiling req/s': Math.round(ceiling) })
}
console.log(`node ${process.version}, ${DURATION_MS} ms per row, one core`)
console.table(rows)
