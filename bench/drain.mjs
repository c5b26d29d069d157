#!/usr/bin/env node
// How fast the ingest consumer drains a backlog with the front idle, and where its thread's time goes:
//
//   node bench/drain.mjs [--sink clickhouse|sqlite] [--load-s 10] [--env KEY=VALUE …] [--node-arg FLAG …] [--merges]
//
// Loads /batch/ 100 (autocannon, 50 connections) for --load-s seconds, which leaves a backlog in the spool,
// stops the load, then samples every second until the consumer has stored everything (and every second of the
// load too): events received and stored, CPU of
// each server thread, and from /proc/…/schedstat how long each thread waited for a core while runnable (the
// consumer's CPU can be below 1 core with no idle time of its own: it is preempted), and each thread's minor
// page faults (≈2.8 µs each on the Firecracker VM; docs/performance-rounds.md, round `…675e202c4f`). Prints a
// line a second and a summary with the peak RSS of the whole run. The full suite's /batch/ figures include this drain
// (stored events/s runs until drained).
import autocannon from 'autocannon'
import { readdirSync, readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { scrape } from './lib/e2e.mjs'
import { startClickHouse, startSkylark } from './lib/servers.mjs'
import { startSpeedProbe } from './lib/speed.mjs'
import { minorFaults, processCpuSeconds } from './lib/system.mjs'
import { batchBodies } from './scenarios/_payloads.mjs'

const { values: args } = parseArgs({
  options: {
    sink: { type: 'string', default: 'clickhouse' },
    'load-s': { type: 'string', default: '10' },
    env: { type: 'string', multiple: true, default: [] },
    'node-arg': { type: 'string', multiple: true, default: [] },
    merges: { type: 'boolean', default: false },
  },
})
const root = new URL('..', import.meta.url).pathname
const env = Object.fromEntries(args.env.map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]))
const clickhouse = args.sink === 'clickhouse' ? await startClickHouse() : null
if (args.sink === 'clickhouse' && !clickhouse) throw new Error('no ClickHouse: set CLICKHOUSE_URL or put clickhouse-server on PATH')
if (clickhouse) Object.assign(env, { CLICKHOUSE_URL: clickhouse.url, CLICKHOUSE_DATABASE: clickhouse.database(`skylark_drain_${Date.now().toString(36)}`) })
const server = await startSkylark(root, { env, nodeArgs: args['node-arg'] })
// Drains of two builds compare only at close readings: this machine's vCPUs change speed for seconds at a time.
const probe = startSpeedProbe()

/** Per thread: CPU ns, runnable-but-waiting ns (schedstat), minor page faults, and the thread's name. */
function threads(pid) {
  const out = {}
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const [run, wait] = readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ').map(Number)
      out[tid] = { run, wait, faults: minorFaults(`${pid}/task/${tid}`) ?? 0, name: readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim() }
    } catch {
      // the thread ended between the reads
    }
  }
  return out
}
const stored = (m) => m['skylark_consumer_total{kind="stored"}']
const ms = (ns) => Math.round(ns / 1e6)

const bodies = batchBodies(server.boot.project_api_key, 100, 100)
const requests = bodies.map((body) => ({ method: 'POST', path: '/batch/', headers: { 'content-type': 'application/json' }, body }))
const sample = async () => ({ m: (await scrape(server.url)).m, at: performance.now(), threads: threads(server.pid), ch: processCpuSeconds(clickhouse?.pid ?? 0) ?? 0 })

/** A line for one second: events received and stored, ClickHouse's CPU, and each busy thread's run and wait. */
function report(prev, now) {
  const busy = Object.entries(now.threads)
    .map(([tid, t]) => ({ tid, ...t, dRun: t.run - (prev.threads[tid]?.run ?? 0), dWait: t.wait - (prev.threads[tid]?.wait ?? 0), dFaults: t.faults - (prev.threads[tid]?.faults ?? 0) }))
    .filter((t) => t.dRun > 2e7)
    .map((t) => `${t.name}/${t.tid} ${ms(t.dRun)}+${ms(t.dWait)}w ${t.dFaults}f`)
  const received = (now.m.skylark_events_received_total ?? 0) - (prev.m.skylark_events_received_total ?? 0)
  console.log(`received +${received}  stored +${(stored(now.m) ?? 0) - (stored(prev.m) ?? 0)}  ClickHouse ${(now.ch - prev.ch).toFixed(2)} cores  threads (ms run + ms waiting for a core, minor page faults): ${busy.join('  ')}`)
}

// The same lines during the load: a thread whose run and wait add up to well under a second was blocked.
let loadPrev = await sample()
const start = loadPrev
const loadTimer = setInterval(async () => {
  const now = await sample()
  report(loadPrev, now)
  loadPrev = now
}, 1000)
const load = autocannon({ url: server.url, connections: 50, duration: Number(args['load-s']), requests })
await new Promise((resolve) => load.on('done', resolve))
clearInterval(loadTimer)

const first = await sample()
const drainFrom = Date.now()
let prev = first
let last = first
let still = 0
console.log(`load over: ${first.m.skylark_events_received_total} events received, ${stored(first.m)} stored`)
// Until everything received is stored; a spanning INSERT (CLICKHOUSE_INSERT_SPAN_MS) can store nothing for
// seconds, so a stall only ends the wait after 10 s.
while (still < 10 && stored(prev.m) < prev.m.skylark_events_received_total) {
  await new Promise((resolve) => setTimeout(resolve, 1000))
  const now = await sample()
  report(prev, now)
  if (stored(now.m) > stored(last.m)) {
    last = now
    still = 0
  } else still++
  prev = now
}
const seconds = (last.at - first.at) / 1000
const cores = Object.entries(last.threads)
  .map(([tid, t]) => [`${t.name}/${tid}`, (t.run - (first.threads[tid]?.run ?? 0)) / 1e9 / seconds, (t.faults - (first.threads[tid]?.faults ?? 0)) / seconds])
  .filter(([, c]) => c > 0.02)
  .map(([name, c, faults]) => `${name} ${c.toFixed(2)} (${Math.round(faults).toLocaleString('en-US')} faults/s)`)
// VmHWM: the process's peak resident set so far, the load included.
const peakMb = Math.round(Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${server.pid}/status`, 'utf8'))[1]) / 1024)
// ClickHouse holds an open INSERT's rows in memory until it ends (CLICKHOUSE_INSERT_SPAN_MS).
const chPeak = clickhouse?.pid ? readFileSync(`/proc/${clickhouse.pid}/status`, 'utf8').match(/VmHWM:\s+(\d+)/) : null
const chPeakText = chPeak ? `; ClickHouse peak RSS ${Math.round(Number(chPeak[1]) / 1024)} MB` : ''
const speed = probe.between(drainFrom, drainFrom + seconds * 1000)
probe.stop()
const speedText = speed ? `; CPU probe ${speed.nsPerUnit.toLocaleString('en-US')} ns` : ''
console.log(`drained ${stored(last.m) - stored(first.m)} events in ${seconds.toFixed(1)} s: ${Math.round((stored(last.m) - stored(first.m)) / seconds)} events/s; cores ${cores.join(', ')}; ClickHouse ${((last.ch - first.ch) / seconds).toFixed(2)}; peak RSS ${peakMb} MB${chPeakText}${speedText}`)
if (args.merges && clickhouse) await reportMerges()
// A --cpu-prof profile is only written on a graceful exit.
await server.stop({ graceful: args['node-arg'].some((a) => a.startsWith('--cpu-prof')) })
await clickhouse?.destroy()

/**
 * --merges: waits until ClickHouse has run no merge for 10 s in a row (at most 120 s), then prints its CPU from
 * the start of the load until then per stored event, and the table's parts. Larger INSERTs make fewer, larger
 * parts, so fewer merges: the drain alone would count the merges that ran before it ended, not those after.
 */
async function reportMerges() {
  const database = env.CLICKHOUSE_DATABASE
  const deadline = Date.now() + 120_000
  for (let quiet = 0; quiet < 10 && Date.now() < deadline; ) {
    await new Promise((resolve) => setTimeout(resolve, 1000))
    const running = Number((await clickhouse.query(`SELECT count() FROM system.merges WHERE database = '${database}'`)).trim())
    quiet = running === 0 ? quiet + 1 : 0
  }
  const cpu = processCpuSeconds(clickhouse.pid) - start.ch
  const events = stored(last.m) - (stored(start.m) ?? 0)
  const parts = (await clickhouse.query(`SELECT count(), max(rows) FROM system.parts WHERE database = '${database}' AND table = 'events' AND active`)).trim().split('\t')
  console.log(`ClickHouse, load to no merges for 10 s: ${cpu.toFixed(1)} CPU s, ${((cpu / events) * 1e6).toFixed(1)} µs a stored event; ${parts[0]} active parts, the largest ${Number(parts[1]).toLocaleString('en-US')} rows`)
}
