#!/usr/bin/env node
// What a large OTLP export does to everything else the server answers: `skylark serve` on the embedded store
// takes ROUNDS gzip'd /i/v1/logs bodies of RECORDS log records each (40,000: ≈16 MB of OTLP JSON, ≈0.7 MB
// gzip'd), one at a time, while a probe asks /_health over one keep-alive connection every millisecond. /_health
// is answered on the main thread with no work, so its latency during an export is how long the main thread was
// held. Prints, per build, each export's time and the probe's p50, p99 and worst latency while it ran.
//
//   npm run build && node bench/micro/otlp-stall.mjs [BUILD_ROOT …]
//
// A BUILD_ROOT is a checkout with dist/ built (default: this one); give two to compare builds, run alternately.
import { request, Agent } from 'node:http'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { gzipSync } from 'node:zlib'
import { startSkylark } from '../lib/servers.mjs'

const RECORDS = Number(process.env.RECORDS ?? 40_000)
const ROUNDS = Number(process.env.ROUNDS ?? 5)
const roots = process.argv.length > 2 ? process.argv.slice(2) : [join(dirname(fileURLToPath(import.meta.url)), '..', '..')]

function logsBody() {
  const now = BigInt(Date.now()) * 1_000_000n
  const logRecords = Array.from({ length: RECORDS }, (_, i) => ({
    timeUnixNano: String(now + BigInt(i) * 1000n),
    severityText: 'INFO',
    severityNumber: 9,
    body: { stringValue: `request ${i} handled in ${i % 300} ms for user u${i % 1000} on path /api/items/${i}` },
    attributes: [
      { key: 'http.method', value: { stringValue: 'GET' } },
      { key: 'http.status_code', value: { intValue: '200' } },
      { key: 'user', value: { stringValue: `u${i % 1000}` } },
    ],
    traceId: '0af7651916cd43dd8448eb211c80319c',
    spanId: 'b7ad6b7169203331',
  }))
  const resource = { attributes: [{ key: 'service.name', value: { stringValue: 'bench-api' } }] }
  return Buffer.from(JSON.stringify({ resourceLogs: [{ resource, scopeLogs: [{ scope: { name: 'bench' }, logRecords }] }] }))
}

function send(url, { method = 'GET', path, headers = {}, body, agent }) {
  return new Promise((resolve, reject) => {
    const req = request(new URL(path, url), { method, headers, agent }, (res) => {
      res.resume()
      res.on('end', () => resolve(res.statusCode))
    })
    req.on('error', reject)
    req.end(body)
  })
}

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]

async function round(server, body) {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 })
  const latencies = []
  let probing = true
  const probe = (async () => {
    while (probing) {
      const started = performance.now()
      await send(server.url, { path: '/_health', agent })
      latencies.push(performance.now() - started)
      await new Promise((resolve) => setTimeout(resolve, 1))
    }
  })()
  await new Promise((resolve) => setTimeout(resolve, 100))
  const started = performance.now()
  const path = `/i/v1/logs?token=${server.boot.project_api_key}`
  const status = await send(server.url, { method: 'POST', path, body, headers: { 'content-type': 'application/json', 'content-encoding': 'gzip', 'content-length': body.length } })
  const exportMs = performance.now() - started
  probing = false
  await probe
  agent.destroy()
  if (status !== 200) throw new Error(`/i/v1/logs answered ${status}`)
  const sorted = latencies.sort((a, b) => a - b)
  return { exportMs, p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99), max: sorted.at(-1) }
}

const plain = logsBody()
const body = gzipSync(plain)
console.log(`${RECORDS} log records: ${(plain.length / 1e6).toFixed(1)} MB of OTLP JSON, ${(body.length / 1e6).toFixed(2)} MB gzip'd; ${ROUNDS} rounds per build`)
const servers = []
for (const root of roots) servers.push({ root, server: await startSkylark(root), rounds: [] })
try {
  for (let i = 0; i < ROUNDS; i++) for (const s of servers) s.rounds.push(await round(s.server, body))
  for (const { root, rounds } of servers) {
    console.log(root)
    for (const r of rounds) console.log(`  export ${r.exportMs.toFixed(0)} ms; /_health p50 ${r.p50.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms, worst ${r.max.toFixed(1)} ms`)
    console.log(`  medians: export ${median(rounds.map((r) => r.exportMs)).toFixed(0)} ms, /_health worst ${median(rounds.map((r) => r.max)).toFixed(1)} ms`)
  }
} finally {
  for (const { server } of servers) await server.stop()
}
