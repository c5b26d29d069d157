// Micro benchmark of the new experiment engine's session property means on SQLite (SessionMath,
// src/storage/events/experiment-rows.ts): what reading a mean of a session property costs against the same
// metric's event count, on an events.db of PERSONS exposed persons with SESSIONS sessions of EVENTS pageviews
// each (other persons' traffic beside them, as much again). Runs on the compiled output:
// `npx tsc -p . && node bench/micro/session-durations.mjs` (PERSONS=100000 for the long run).
import { SqliteEventStore } from '../../dist/src/storage/events/index.js'
import { eventRow, freshEventsDb } from '../lib/events-db.mjs'

const PERSONS = Number(process.env.PERSONS ?? 20_000)
const SESSIONS = 3
const EVENTS = 4
const TEAM = 1
const T0 = Date.parse('2026-11-01T00:00:00Z')
const { file, sink, remove } = freshEventsDb('skylark-session-durations-')
try {
  const row = (id, event, at, properties) => eventRow(TEAM, id, event, at, properties, { person_id: `p-${id}` })
  let built = performance.now()
  let rows = []
  for (let i = 0; i < PERSONS * 2; i++) {
    const id = `u${i}`
    const at = T0 + (i % 86_400) * 1000
    // The second half are never exposed: their events are the traffic the reads step over.
    if (i < PERSONS) rows.push(row(id, '$feature_flag_called', at, { $feature_flag: 'f', $feature_flag_response: i % 2 ? 'test' : 'control' }))
    for (let s = 0; s < SESSIONS; s++) {
      for (let e = 0; e < EVENTS; e++) rows.push(row(id, '$pageview', at + 3_600_000 * (s + 1) + e * 30_000 * ((i % 5) + 1), { $session_id: `${id}-${s}`, $current_url: 'https://example.com/' }))
    }
    if (rows.length > 20_000) {
      await sink.write(rows)
      rows = []
    }
  }
  await sink.write(rows)
  await sink.close()
  built = performance.now() - built
  const store = new SqliteEventStore(file)
  const query = (source) => ({
    teamId: TEAM,
    groupTypeIndex: null,
    exposure: { teamId: TEAM, event: '$feature_flag_called', after: T0, before: T0 + 86_400_000, properties: [{ key: '$feature_flag', operator: 'exact', value: 'f' }, { key: '$feature_flag_response', operator: 'exact', value: ['control', 'test'] }] },
    variantProperty: '$feature_flag_response',
    breakdowns: [],
    metric: { after: T0, before: T0 + 2 * 86_400_000, steps: [{ event: '$pageview' }], valueProperties: [], distinctKeys: source.kind === 'session' ? ['$session_id'] : [] },
    variants: ['control', 'test'],
    multipleVariantHandling: 'exclude',
    aggregation: { type: 'mean', sources: [source], windowMs: null, lowerPercentile: null, upperPercentile: null, ignoreZeros: false },
  })
  const time = async (name, source) => {
    const runs = []
    let sums
    for (let r = 0; r < 3; r++) {
      const started = performance.now()
      sums = await store.experimentVariants(query(source))
      runs.push(performance.now() - started)
    }
    runs.sort((a, b) => a - b)
    const [control] = sums.variants
    console.log(`${name.padEnd(40)} control n ${String(control.number_of_samples).padStart(7)} sum ${String(control.sum).padStart(10)}  median ${runs[1].toFixed(0)} ms`)
  }
  console.log(`events.db: ${PERSONS} exposed persons of ${PERSONS * 2}, ${PERSONS * 2 * SESSIONS * EVENTS + PERSONS} events, built in ${(built / 1000).toFixed(1)} s`)
  await time('the pageview count', { kind: 'count' })
  for (const property of ['$session_duration', '$pageview_count', '$num_uniq_urls']) {
    await time(`a sum of ${property}`, { kind: 'session', sessionProperty: property, aggregation: 'sum' })
  }
  store.close()
} finally {
  remove()
}
