// /capture/ with one ~500-byte $pageview per request: the durable-acknowledgement path (200 only after the
// spool's fdatasync). Measured with autocannon and with wrk (autocannon saturates before uWS does).
import { batchBodies, captureBodies, personProperties } from './_payloads.mjs'

const requests = (ctx) =>
  captureBodies(ctx.token).map((body) => ({ method: 'POST', path: '/capture/', headers: { 'content-type': 'application/json' }, body }))

const check = (res) => (res.status === 200 && res.json?.status === 1 ? null : `expected 200 {"status":1}, got ${res.status} ${res.text.slice(0, 200)}`)

const STORED = 100_000
// A property no stored event has: the events API walks every one of the project's events to find none.
const SCAN = `?properties=${encodeURIComponent(JSON.stringify([{ key: 'bench_absent', value: 'x', operator: 'exact' }]))}`

/**
 * Stores STORED events through /batch/ and waits until the events API counts them all. Batches of 100, as SDKs
 * send them: the peak RSS is sampled from the start of the setup, and bodies of 1,000 had it at 366–405 MB.
 */
async function storeEvents(ctx) {
  for (const body of batchBodies(ctx.token, 100, STORED / 100)) {
    const res = await ctx.request('POST', '/batch/', { body, headers: { 'content-type': 'application/json' } })
    if (res.status !== 200) throw new Error(`/batch/ answered ${res.status}: ${res.text.slice(0, 200)}`)
  }
  const deadline = Date.now() + 120_000
  for (;;) {
    const res = await ctx.api('GET', `/api/projects/${ctx.projectId}/events/?limit=1`)
    if (res.json?.count >= STORED) return
    if (Date.now() > deadline) throw new Error(`${res.json?.count ?? res.status} of ${STORED} events stored after 120 s`)
    await new Promise((r) => setTimeout(r, 500))
  }
}

const PERSONS_STORED = 100_000
// A person property no stored person has: the persons API walks every one of the project's persons to find none.
const PERSON_SCAN = `?properties=${encodeURIComponent(JSON.stringify([{ key: 'bench_absent', value: 'x', operator: 'exact', type: 'person' }]))}`

/**
 * Stores PERSONS_STORED persons of 20 properties each (`$identify` with `$set`, batches of 100) and waits until
 * the persons API counts them all.
 */
async function storePersons(ctx) {
  for (let b = 0; b < PERSONS_STORED / 100; b++) {
    const batch = Array.from({ length: 100 }, (_, i) => {
      const n = b * 100 + i
      return { event: '$identify', distinct_id: `person-${String(n).padStart(6, '0')}`, properties: { $set: personProperties(n) } }
    })
    const res = await ctx.request('POST', '/batch/', { body: JSON.stringify({ api_key: ctx.token, batch }), headers: { 'content-type': 'application/json' } })
    if (res.status !== 200) throw new Error(`/batch/ answered ${res.status}: ${res.text.slice(0, 200)}`)
  }
  const deadline = Date.now() + 180_000
  for (;;) {
    const res = await ctx.api('GET', `/api/projects/${ctx.projectId}/persons/?limit=1`)
    if (res.json?.count >= PERSONS_STORED) return
    if (Date.now() > deadline) throw new Error(`${res.json?.count ?? res.status} of ${PERSONS_STORED} persons stored after 180 s`)
    await new Promise((r) => setTimeout(r, 500))
  }
}

export default [
  {
    name: 'capture',
    title: '/capture/ one event (~525 B)',
    groups: ['capture'],
    kind: 'load',
    server: 'fresh',
    sinks: ['sqlite', 'clickhouse'],
    loadgens: ['autocannon', 'wrk'],
    baseline: 'capture',
    eventsPerRequest: 1,
    e2e: true,
    requests,
    check,
  },
  // While someone reads the events API with a filter that scans all of those events, back to back on one
  // connection: the reads must not hold the acknowledgements (docs/performance.md, "Event reads off the main thread").
  {
    name: 'capture-reading',
    title: `/capture/ one event, while the events API scans ${STORED.toLocaleString('en')} events`,
    groups: ['capture'],
    kind: 'load',
    server: 'fresh',
    sinks: ['sqlite', 'clickhouse'],
    loadgens: ['autocannon'],
    baseline: 'capture',
    eventsPerRequest: 1,
    e2e: false,
    setup: storeEvents,
    background: {
      rate: 1000,
      connections: 1,
      requests: (ctx) => [{ method: 'GET', path: `/api/projects/${ctx.projectId}/events/${SCAN}`, headers: { authorization: `Bearer ${ctx.personalKey}` } }],
    },
    requests,
    check,
  },
  // The same for the persons API: a person property filter no stored person meets, asked back to back on one
  // connection (docs/performance.md, "Persons reads off the main thread").
  {
    name: 'capture-reading-persons',
    title: `/capture/ one event, while the persons API scans ${PERSONS_STORED.toLocaleString('en')} persons`,
    groups: ['capture'],
    kind: 'load',
    server: 'fresh',
    sinks: ['sqlite'],
    loadgens: ['autocannon'],
    baseline: 'capture',
    eventsPerRequest: 1,
    e2e: false,
    setup: storePersons,
    background: {
      rate: 1000,
      connections: 1,
      requests: (ctx) => [{ method: 'GET', path: `/api/projects/${ctx.projectId}/persons/${PERSON_SCAN}`, headers: { authorization: `Bearer ${ctx.personalKey}` } }],
    },
    requests,
    check,
  },
]
