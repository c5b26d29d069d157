// End to end: events counted in the store itself (SQLite: rows of DATA_DIR/events.db; ClickHouse:
// `count() … FINAL`), waiting for the consumer to drain, /metrics scraping, and the ack → visible probes.
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { percentile, round } from './system.mjs'

const require = createRequire(import.meta.url)

/** Prometheus text → { 'name{labels}': value } plus sums by metric name under 'name'. */
export function parseMetrics(text) {
  const out = {}
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue
    const space = line.lastIndexOf(' ')
    const key = line.slice(0, space)
    const value = Number(line.slice(space + 1))
    out[key] = value
    const name = key.split('{')[0]
    if (name !== key) out[name] = (out[name] ?? 0) + value
  }
  return out
}

export async function scrape(url) {
  const res = await fetch(`${url}/metrics`)
  return { at: performance.now(), m: parseMetrics(await res.text()) }
}

/**
 * Samples the server's ingestion lag (skylark_ingestion_lag_seconds: how long the oldest acknowledged event the
 * store has not confirmed has waited) every `everyMs` until stop(), which gives its p50 and max in seconds.
 */
export function startLagSampler(url, everyMs = 250) {
  const samples = []
  let running = true
  const loop = (async () => {
    while (running) {
      const lag = (await scrape(url).catch(() => null))?.m.skylark_ingestion_lag_seconds
      if (Number.isFinite(lag)) samples.push(lag)
      await sleep(everyMs)
    }
  })()
  return {
    async stop() {
      running = false
      await loop
      const sorted = samples.sort((a, b) => a - b)
      return sorted.length ? { n: sorted.length, p50: round(percentile(sorted, 50), 2), max: round(sorted.at(-1), 2) } : null
    },
  }
}

/** Main-thread event-loop utilisation between two scrapes (the skylark_event_loop_active_seconds gauge). */
export function elu(before, after) {
  const active = after.m.skylark_event_loop_active_seconds - before.m.skylark_event_loop_active_seconds
  return Number.isFinite(active) ? active / ((after.at - before.at) / 1000) : null
}

/** Counts the events stored for a server, from the store. */
export function storeCounter(server, sink, clickhouse) {
  if (sink === 'clickhouse') {
    const db = server.env.CLICKHOUSE_DATABASE
    return {
      count: async () => Number((await clickhouse.query(`SELECT count() FROM ${db}.events FINAL`)).trim()),
      close: () => {},
    }
  }
  const Database = require('better-sqlite3')
  let db = null
  return {
    count: async () => {
      db ??= new Database(join(server.dataDir, 'events.db'), { readonly: true, fileMustExist: true })
      return db.prepare('SELECT count(*) AS n FROM events').get().n
    },
    close: () => db?.close(),
  }
}

/**
 * Waits until everything the server acknowledged is stored (consumer `stored` + `dead_lettered` ≥
 * `events_received`, from /metrics) or `maxMs` passed. Answers when it ended and whether it drained.
 */
export async function waitForDrain(url, maxMs, onPoll = () => {}) {
  const start = performance.now()
  for (;;) {
    const { m } = await scrape(url)
    const received = m.skylark_events_received_total ?? 0
    const done = (m['skylark_consumer_total{kind="stored"}'] ?? 0) + (m['skylark_consumer_total{kind="dead_lettered"}'] ?? 0)
    onPoll(done, received)
    if (done >= received) return { drained: true, at: performance.now(), received }
    if (performance.now() - start > maxMs) return { drained: false, at: performance.now(), received }
    await sleep(200)
  }
}

/**
 * Sends `probes` capture events, one every `spacingMs`, each with a unique distinct_id and `$set`. From each
 * 200, every `pollMs` and side by side: the persons API (`?distinct_id=`) until it shows the property, and
 * /decide?v=3 until a flag conditioned on that property (`probe` is set, created here) answers true, which is
 * the person as /decide uses it, through its person cache. The events API is polled by one loop for the whole
 * run (`?event=<this run's probe event>`, newest first), so the number of probes in flight does not multiply
 * the queries (on ClickHouse each is a FINAL query). A probe counts as visible when the answer that contains
 * it arrives.
 */
export async function runLagProbes({ url, token, projectId, personalKey, probes, spacingMs, pollMs, timeoutMs, onProgress = () => {} }) {
  const run = Date.now().toString(36)
  const eventName = `bench_probe_${run}`
  const auth = { headers: { authorization: `Bearer ${personalKey}` } }
  const flagKey = `bench-probe-${run}`
  const created = await fetch(`${url}/api/projects/${projectId}/feature_flags/`, {
    method: 'POST',
    headers: { ...auth.headers, 'content-type': 'application/json' },
    body: JSON.stringify({
      key: flagKey,
      filters: { groups: [{ properties: [{ key: 'probe', type: 'person', operator: 'is_set', value: 'is_set' }], rollout_percentage: 100 }] },
    }),
  })
  if (created.status !== 201) throw new Error(`creating the probe flag failed: ${created.status} ${(await created.text()).slice(0, 200)}`)
  const acked = new Map() // distinct_id → { n, ackAt }
  const eventLags = new Map() // n → ms
  const personLags = []
  const decideLags = []
  let failures = 0
  let finished = 0
  let polling = true
  const eventsPoller = (async () => {
    while (polling) {
      const res = await fetch(`${url}/api/projects/${projectId}/events/?event=${eventName}&limit=1000`, auth)
      const body = await res.json()
      const at = performance.now()
      for (const e of body.results ?? []) {
        const probe = acked.get(e.distinct_id)
        if (probe && !eventLags.has(probe.n)) eventLags.set(probe.n, at - probe.ackAt)
      }
      await sleep(pollMs)
    }
  })()
  const probe = async (n) => {
    const distinctId = `probe-${run}-${n}`
    const res = await fetch(`${url}/capture/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ api_key: token, event: eventName, distinct_id: distinctId, properties: { $set: { probe: n } } }),
    })
    await res.text()
    const ackAt = performance.now()
    if (res.status !== 200) {
      failures++
      return
    }
    acked.set(distinctId, { n, ackAt })
    /** Polls until `visible(answer)`; the lag goes to `into`, nothing on a timeout. */
    const pollUntil = async (request, visible, into) => {
      for (;;) {
        const answer = await (await request()).json()
        const at = performance.now()
        if (visible(answer)) return into.push(at - ackAt)
        if (at - ackAt > timeoutMs) return
        await sleep(pollMs)
      }
    }
    const personsPath = `${url}/api/projects/${projectId}/persons/?distinct_id=${distinctId}`
    const decideBody = JSON.stringify({ token, distinct_id: distinctId })
    await Promise.all([
      pollUntil(() => fetch(personsPath, auth), (body) => body.results?.[0]?.properties?.probe === n, personLags),
      pollUntil(
        () => fetch(`${url}/decide?v=3`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: decideBody }),
        (body) => body.featureFlags?.[flagKey] === true,
        decideLags,
      ),
    ])
    while (!eventLags.has(n) && performance.now() - ackAt < timeoutMs) await sleep(pollMs)
    onProgress(++finished, probes)
  }
  const inflight = []
  for (let n = 0; n < probes; n++) {
    inflight.push(probe(n).catch(() => failures++))
    await sleep(spacingMs)
  }
  await Promise.all(inflight)
  polling = false
  await eventsPoller
  const stats = (values) => {
    const sorted = [...values].sort((a, b) => a - b)
    return { n: sorted.length, p50: round(percentile(sorted, 50), 1), p99: round(percentile(sorted, 99), 1), max: round(sorted.at(-1) ?? null, 1) }
  }
  const timeouts = probes - failures - Math.min(eventLags.size, personLags.length, decideLags.length)
  // Per probe, in order: [n, ms from the first probe's ack to its ack, events API lag in ms or null]. Shows
  // whether the tail is a stall (a run of probes made visible at once) or a drift over the run.
  const first = Math.min(...[...acked.values()].map((a) => a.ackAt))
  const eventsTrace = [...acked.values()]
    .sort((a, b) => a.n - b.n)
    .map((a) => [a.n, round(a.ackAt - first, 0), eventLags.has(a.n) ? round(eventLags.get(a.n), 0) : null])
  return { probes, timeouts, failures, pollMs, eventsMs: stats(eventLags.values()), personsMs: stats(personLags), decideMs: stats(decideLags), eventsTrace }
}
