// Micro benchmark of the new experiment engine's person and cohort filters (src/experiments/query/person-filters.ts):
// what resolving one filter to distinct ids costs on a persons.db of PERSONS persons (two distinct ids each for
// half of them), for a filter matching a tenth of them, one matching nine tenths (read directly, or past a small
// cap as the persons it fails), and a static cohort of a tenth. Runs on the compiled output:
// `npx tsc -p . && node bench/micro/person-filters.mjs` (PERSONS=1000000 for the long run).
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { systemClock } from '../../dist/src/common/clock.js'
import { uuidv7 } from '../../dist/src/common/ids.js'
import { personFilterLookup } from '../../dist/src/experiments/query/person-filters.js'
import { PersonsStage, StaticCohortWriter } from '../../dist/src/persons/index.js'
import { inPlaceScans } from '../../dist/src/persons/scans.js'
import { migrate, openDatabase } from '../../dist/src/storage/index.js'
import { PERSONS_MIGRATIONS } from '../../dist/src/storage/sqlite/migrations/persons.js'

const PERSONS = Number(process.env.PERSONS ?? 200_000)
const TEAM = 1
const dir = mkdtempSync(join(tmpdir(), 'skylark-person-filters-'))
try {
  const db = openDatabase(join(dir, 'persons.db'))
  migrate(db, PERSONS_MIGRATIONS)
  const stage = new PersonsStage(db, { geoip: null, clock: systemClock })
  const t0 = Date.now()
  const event = (name, distinctId, properties) => ({ uuid: uuidv7(t0), event: name, distinct_id: distinctId, properties, timestamp: t0, team_id: TEAM, now: t0 })
  let built = performance.now()
  for (let start = 0; start < PERSONS; start += 5000) {
    const events = []
    for (let i = start; i < Math.min(start + 5000, PERSONS); i++) {
      events.push(event('$identify', `user-${i}`, { $set: { email: i % 10 === 0 ? `u${i}@acme.com` : `u${i}@example.com`, plan: i % 3 === 0 ? 'pro' : 'free' } }))
      if (i % 2 === 0) events.push(event('$identify', `user-${i}`, { $anon_distinct_id: `anon-${i}` }))
    }
    db.transaction(() => stage.process(events))()
  }
  new StaticCohortWriter(db).replaceMembers(TEAM, 1, Array.from({ length: PERSONS / 10 }, (_, i) => `user-${i * 10}`))
  built = performance.now() - built
  const listing = inPlaceScans(db).listing
  const cohorts = (_, id) => (id === 1 ? { is_static: true, deleted: false, filters: null } : null)
  const staff = { key: 'email', operator: 'icontains', value: '@acme.com', type: 'person' }
  const real = { key: 'email', operator: 'not_icontains', value: '@acme.com', type: 'person' }
  const time = async (name, nodes, maxChars) => {
    const runs = []
    let node
    for (let r = 0; r < 3; r++) {
      const started = performance.now()
      const lookup = await personFilterLookup(listing, cohorts, TEAM, nodes, maxChars)
      runs.push(performance.now() - started)
      const leaf = nodes[0]
      node = leaf.type === 'cohort' ? lookup.cohort(leaf) : lookup.person({ key: leaf.key, operator: leaf.operator, value: leaf.value })
    }
    runs.sort((a, b) => a - b)
    console.log(`${name.padEnd(58)} ${String(node.distinctIds.length).padStart(8)} ids${node.excluded ? ' (excluded)' : '           '}  median ${runs[1].toFixed(1)} ms`)
  }
  console.log(`persons.db: ${PERSONS} persons, ${Math.round(PERSONS * 1.5)} distinct ids, built in ${(built / 1000).toFixed(1)} s`)
  await time('a tenth (email contains @acme.com)', [staff])
  await time('nine tenths (email does not contain @acme.com)', [real])
  await time('nine tenths past a 1 MiB cap: the persons it fails', [real], 1024 * 1024)
  await time('a static cohort of a tenth', [{ key: 'id', value: 1, type: 'cohort' }])
  db.close()
} finally {
  rmSync(dir, { recursive: true, force: true })
}
