// A steady background load in its own process (so it does not share the prober's event loop):
// `node background-load.mjs <options.json>` runs autocannon with the options in the file; on SIGTERM it
// stops and prints {"rps", "ok", "non2xx", "errors", "statusCodes", "latencyMs"} as one JSON line.
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const autocannon = require('autocannon')
const options = JSON.parse(readFileSync(process.argv[2], 'utf8'))
const instance = autocannon(options, (error, r) => {
  if (error) {
    process.stdout.write(JSON.stringify({ error: error.message }) + '\n')
    process.exit(1)
  }
  const statusCodes = Object.fromEntries(Object.entries(r.statusCodeStats ?? {}).map(([code, { count }]) => [code, count]))
  process.stdout.write(JSON.stringify({ rps: r['2xx'] / r.duration, ok: r['2xx'], non2xx: r.non2xx, errors: r.errors, statusCodes, latencyMs: { p50: r.latency.p50, p99: r.latency.p99, max: r.latency.max } }) + '\n')
  process.exit(0)
})
process.once('SIGTERM', () => instance.stop())
