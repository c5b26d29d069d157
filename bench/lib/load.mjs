// Load generators. autocannon runs in this process (one Node thread; it saturates its core without
// pipelining at ≈80–90 k req/s on the earlier machines, ≈20 k on the Firecracker one); wrk (Debian's, one
// thread, a Lua script for POST bodies) is used where the autocannon ceiling would hide the server's, i.e. for
// the baselines and /capture/.
import { spawn } from 'node:child_process'
import { createRequire } from 'node:module'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const require = createRequire(import.meta.url)
const autocannon = require('autocannon')

/** The options autocannon gets, recorded as they are (minus the request bodies) in the results. */
export function autocannonOptions(url, requests, load) {
  const options = {
    url,
    connections: load.connections,
    pipelining: load.pipelining,
    duration: load.durationS,
    timeout: 10,
    requests,
  }
  if (load.overallRate) options.overallRate = load.overallRate
  return options
}

export function describeAutocannon(options) {
  const { requests, url: _url, ...rest } = options
  return { ...rest, requests: requests.length, distinctBodies: new Set(requests.map((r) => r.body)).size }
}

/** Runs autocannon; `onTick(seconds, requestsInLastSecond)` is called once a second. */
export function runAutocannon(options, onTick = () => {}) {
  return new Promise((resolve, reject) => {
    let seconds = 0
    const instance = autocannon(options, (error, result) => (error ? reject(error) : resolve(summariseAutocannon(result))))
    instance.on('tick', ({ counter }) => onTick(++seconds, counter))
  })
}

function summariseAutocannon(r) {
  const ok = r['2xx']
  const statusCodes = Object.fromEntries(Object.entries(r.statusCodeStats ?? {}).map(([code, { count }]) => [code, count]))
  return {
    loadgen: 'autocannon',
    durationS: r.duration,
    requests: r.requests.total,
    ok,
    non2xx: r.non2xx,
    errors: r.errors,
    timeouts: r.timeouts,
    statusCodes,
    rps: ok / r.duration,
    // autocannon records latency in whole milliseconds (HDR histogram, lowest discernible value 1 ms).
    latencyMs: { p50: r.latency.p50, p90: r.latency.p90, p99: r.latency.p99, max: r.latency.max, mean: r.latency.average },
  }
}

const WRK_SCRIPT = new URL('../wrk/post.lua', import.meta.url).pathname

/**
 * Runs wrk with bench/wrk/post.lua over the given requests (one method and path; bodies cycled per
 * connection). Answers the same shape as autocannon, latency in ms with µs resolution, and the wrk pid
 * through `onSpawn` (so its CPU can be sampled).
 */
export function runWrk(url, requests, load, { onSpawn = () => {}, onTick = () => {} } = {}) {
  const [{ method, path, headers }] = requests
  for (const r of requests) {
    if (r.method !== method || r.path !== path) throw new Error('wrk scenarios need one method and path')
    if (typeof r.body !== 'string' || r.body.includes('\n')) throw new Error('wrk bodies must be text without newlines')
  }
  const dir = mkdtempSync(join(tmpdir(), 'skylark-bench-wrk-'))
  const bodies = join(dir, 'bodies.txt')
  writeFileSync(bodies, requests.map((r) => r.body).join('\n') + '\n')
  const headerArgs = Object.entries(headers ?? {}).flatMap(([k, v]) => ['-H', `${k}: ${v}`])
  const args = ['-t1', `-c${load.connections}`, `-d${load.durationS}s`, '--timeout', '10s', ...headerArgs, '-s', WRK_SCRIPT, url + path, '--', bodies, method, String(load.pipelining)]
  return new Promise((resolve, reject) => {
    const proc = spawn('wrk', args, { stdio: ['ignore', 'pipe', 'pipe'] })
    onSpawn(proc.pid)
    let out = ''
    let err = ''
    let seconds = 0
    const ticker = setInterval(() => onTick(++seconds, null), 1000)
    proc.stdout.on('data', (d) => (out += d))
    proc.stderr.on('data', (d) => (err += d))
    proc.once('exit', (code) => {
      clearInterval(ticker)
      rmSync(dir, { recursive: true, force: true })
      const line = out.split('\n').find((l) => l.startsWith('{"wrk"'))
      if (code !== 0 || !line) return reject(new Error(`wrk failed (${code}): ${err || out}`))
      const w = JSON.parse(line).wrk
      const durationS = w.duration_us / 1e6
      const bad = w.errors.status
      resolve({
        loadgen: 'wrk',
        durationS,
        requests: w.requests,
        ok: w.requests - bad,
        non2xx: bad,
        errors: w.errors.connect + w.errors.read + w.errors.write,
        timeouts: w.errors.timeout,
        statusCodes: {},
        rps: (w.requests - bad) / durationS,
        latencyMs: { p50: w.latency.p50 / 1000, p90: w.latency.p90 / 1000, p99: w.latency.p99 / 1000, max: w.latency.max / 1000, mean: w.latency.mean / 1000 },
        command: ['wrk', ...args.slice(0, args.indexOf('--'))].map((a) => (a.includes(' ') ? `'${a}'` : a)).join(' '),
      })
    })
  })
}

/**
 * A steady load in a process of its own (background-load.mjs: autocannon at `rate` req/s over
 * `connections`), for scenarios measured while the service also ingests. `stop()` (once or more) ends it and
 * resolves with its {rps, ok, non2xx, errors, statusCodes}, or null when it printed nothing.
 */
export function startBackground(url, requests, { rate, connections }) {
  const dir = mkdtempSync(join(tmpdir(), 'skylark-bench-background-'))
  const optionsFile = join(dir, 'options.json')
  writeFileSync(optionsFile, JSON.stringify({ url, connections, duration: 600, requests, overallRate: rate }))
  const proc = spawn(process.execPath, [join(import.meta.dirname, 'background-load.mjs'), optionsFile], { stdio: ['ignore', 'pipe', 'inherit'] })
  let out = ''
  proc.stdout.on('data', (d) => (out += d))
  const exited = new Promise((resolve) => proc.once('exit', resolve))
  let stopped = null
  const stop = async () => {
    proc.kill('SIGTERM')
    const killer = setTimeout(() => proc.kill('SIGKILL'), 5000)
    await exited
    clearTimeout(killer)
    rmSync(dir, { recursive: true, force: true })
    return out ? JSON.parse(out.trim().split('\n').at(-1)) : null
  }
  return { pid: proc.pid, stop: () => (stopped ??= stop()) }
}
