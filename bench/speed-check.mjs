#!/usr/bin/env node
// Does the CPU probe (bench/lib/speed.mjs) read what a server feels? Back-to-back wrk runs against one
// baseline server, each printed with the probe's reading of its window, then the correlation of the two:
//
//   node bench/speed-check.mjs [--server uws-raw|node-http] [--runs 14] [--seconds 4]
//
// Strongly negative (a slower probe, fewer requests) means the probe explains the run-to-run spread.
import { parseArgs } from 'node:util'
import { runWrk } from './lib/load.mjs'
import { startBaseline } from './lib/servers.mjs'
import { startSpeedProbe } from './lib/speed.mjs'
import captureScenarios from './scenarios/capture.mjs'

const { values: args } = parseArgs({
  options: {
    server: { type: 'string', default: 'uws-raw' },
    runs: { type: 'string', default: '14' },
    seconds: { type: 'string', default: '4' },
  },
})
// The /capture/ scenario's requests, as the suite's baselines get them (they do not check the key).
const requests = captureScenarios.find((s) => s.name === 'capture').requests({ token: `phc_${'x'.repeat(43)}` })
const load = { connections: 50, pipelining: 1, durationS: Number(args.seconds) }
const speed = startSpeedProbe()
const server = await startBaseline(import.meta.dirname, args.server)
const pairs = []
try {
  await runWrk(server.url, requests, { ...load, durationS: 2 }) // warm-up
  for (let i = 0; i < Number(args.runs); i++) {
    const from = Date.now()
    const { rps } = await runWrk(server.url, requests, load)
    const probe = speed.between(from, Date.now())
    pairs.push([probe.nsPerUnit, rps])
    console.log(`${args.server}: ${Math.round(rps)} req/s, CPU probe ${probe.nsPerUnit} ns (${probe.perCpu.map((c) => `vCPU ${c.cpu} ${c.nsPerUnit}`).join(', ')})`)
  }
} finally {
  await server.stop()
  speed.stop()
}
const mean = (i) => pairs.reduce((sum, p) => sum + p[i], 0) / pairs.length
const [mx, my] = [mean(0), mean(1)]
const cov = pairs.reduce((sum, [x, y]) => sum + (x - mx) * (y - my), 0)
const spread = (i, m) => Math.sqrt(pairs.reduce((sum, p) => sum + (p[i] - m) ** 2, 0))
console.log(`correlation of probe and req/s over ${pairs.length} runs: ${(cov / (spread(0, mx) * spread(1, my))).toFixed(2)}`)
