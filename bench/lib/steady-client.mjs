// An open-loop, constant-rate load generator for latency at a given throughput ("p99 at half of max"),
// run in a process of its own by steady.mjs, which writes its options as JSON to its stdin. It prints
// `tick <phase> <second> <answers>` lines while it runs, `measure` when the warm-up ends, and one
// `result <json>` line at the end.
//
// The warm-up runs in this process, at the same rate, and its answers are not counted. A freshly started
// client is slow for its first ≈250 ms (its code not yet compiled, its connections new): against raw uWS,
// which does no work, 166–805 answers of a 4 s run took over 10 ms, all of them in its first 250 ms, and
// against skylark up to 1,159 of 142,854 (p99 6.51 ms; 1.75 ms without its first second). A warm-up in a
// process of its own handed the measurement a cold client every time.
//
// autocannon's rate limit is not steady: each connection sends back to back until it has made its share of
// the second, then waits for the next second, so a "half rate" run is full speed half of each second. This
// client issues request n at the first 1 ms tick after start + n/rate and measures latency from there
// (coordinated omission included: a request that waits for a free connection counts its wait; the 1 ms
// timer's own lateness is left out). HTTP/1.1 keep-alive over raw sockets, prebuilt request bytes, one
// request in flight per connection, responses with Content-Length. Latencies go into one preallocated
// typed array, so the client's heap barely grows while it measures.
import { readFileSync } from 'node:fs'
import { connect } from 'node:net'
import { percentile } from './system.mjs'

function requestBytes(host, r) {
  const body = r.body === undefined ? Buffer.alloc(0) : r.bodyBase64 ? Buffer.from(r.body, 'base64') : Buffer.from(r.body)
  const headers = { host, ...(r.headers ?? {}), ...(body.length > 0 || r.method !== 'GET' ? { 'content-length': String(body.length) } : {}) }
  const head = `${r.method} ${r.path} HTTP/1.1\r\n${Object.entries(headers).map(([k, v]) => `${k}: ${v}`).join('\r\n')}\r\n\r\n`
  return Buffer.concat([Buffer.from(head), body])
}

/** One keep-alive connection: send(bytes) resolves with the status code once the whole response arrived. */
function connection(port) {
  const socket = connect({ host: '127.0.0.1', port, noDelay: true })
  let buffer = Buffer.alloc(0)
  let pending = null
  socket.on('data', (chunk) => {
    buffer = buffer.length ? Buffer.concat([buffer, chunk]) : chunk
    const end = buffer.indexOf('\r\n\r\n')
    if (end < 0 || !pending) return
    const head = buffer.subarray(0, end).toString('latin1')
    const length = Number(/\r\ncontent-length:\s*(\d+)/i.exec(head)?.[1] ?? 0)
    if (buffer.length < end + 4 + length) return
    buffer = buffer.subarray(end + 4 + length)
    const done = pending
    pending = null
    done.resolve(Number(head.slice(9, 12)))
  })
  const ready = new Promise((resolve, reject) => {
    socket.once('connect', resolve)
    socket.once('error', reject)
  })
  socket.on('error', (error) => pending?.reject(error))
  socket.on('close', () => pending?.reject(new Error('connection closed')))
  return {
    ready,
    send(bytes) {
      return new Promise((resolve, reject) => {
        pending = { resolve, reject }
        socket.write(bytes)
      })
    },
    close: () => socket.destroy(),
  }
}

/**
 * Sends `rate` requests/s for `warmupS` + `durationS` over up to `connections` connections and measures the
 * last `durationS`; same result shape as runAutocannon. `onMeasure()` is called when the warm-up ends.
 */
async function runSteady(url, requests, { connections, rate, warmupS = 0, durationS }, { onTick = () => {}, onMeasure = () => {} } = {}) {
  const { hostname, port } = new URL(url)
  const prebuilt = requests.map((r) => requestBytes(`${hostname}:${port}`, r))
  const pool = Array.from({ length: connections }, () => connection(Number(port)))
  await Promise.all(pool.map((c) => c.ready))
  const idle = [...pool]
  const waiting = [] // requests waiting for a connection: [scheduled time, measured]
  const warm = Math.round(rate * warmupS) // requests sent before the measured ones
  const total = warm + Math.round(rate * durationS)
  const latencies = new Float64Array(total - warm)
  let answered = 0
  const statusCodes = {}
  let errors = 0
  let sent = 0
  let next = 0
  const start = performance.now()
  const measureStart = start + warmupS * 1000
  let finished = 0 // answered or failed, warm-up included
  let measuredFinished = 0
  let tickSecond = 0
  let lastCount = 0

  await new Promise((resolve) => {
    const fire = (scheduledAt, measured, conn) => {
      const bytes = prebuilt[next++ % prebuilt.length]
      conn.send(bytes).then(
        (status) => {
          if (measured) {
            latencies[answered++] = performance.now() - scheduledAt
            statusCodes[status] = (statusCodes[status] ?? 0) + 1
          }
          release(conn, measured)
        },
        () => {
          if (measured) errors++
          release(conn, measured)
        },
      )
    }
    const release = (conn, measured) => {
      finished++
      if (measured) measuredFinished++
      if (waiting.length > 0) fire(...waiting.shift(), conn)
      else idle.push(conn)
      if (finished === total) resolve()
    }
    const timer = setInterval(() => {
      const now = performance.now()
      const due = Math.min(total, Math.floor(((now - start) / 1000) * rate))
      while (sent < due) {
        // Latency counts from this tick (not from the ideal send time, which the 1 ms timer can miss by up to
        // a tick): a request that then waits for a free connection still counts its wait.
        const measured = sent >= warm
        if (sent === warm) onMeasure()
        sent++
        const conn = idle.pop()
        if (conn) fire(now, measured, conn)
        else waiting.push([now, measured])
      }
      const second = Math.floor((now - start) / 1000)
      if (second > tickSecond) {
        tickSecond = second
        const inWarmup = second <= warmupS
        onTick(inWarmup ? 'warm-up' : 'load', inWarmup ? second : second - warmupS, finished - lastCount)
        lastCount = finished
      }
      if (sent >= total) clearInterval(timer)
    }, 1)
    // Whatever is still in flight 10 s after the last scheduled request counts as lost.
    setTimeout(() => {
      clearInterval(timer)
      resolve()
    }, (warmupS + durationS + 10) * 1000).unref()
  })
  const elapsed = (performance.now() - measureStart) / 1000
  for (const c of pool) c.close()
  const sorted = latencies.subarray(0, answered).sort()
  const ok = Object.entries(statusCodes).reduce((n, [code, count]) => (code.startsWith('2') ? n + count : n), 0)
  return {
    loadgen: 'steady',
    durationS: elapsed,
    requests: measuredFinished,
    ok,
    non2xx: measuredFinished - ok - errors,
    errors,
    timeouts: 0,
    statusCodes,
    rps: ok / elapsed,
    latencyMs: {
      p50: percentile(sorted, 50),
      p90: percentile(sorted, 90),
      p99: percentile(sorted, 99),
      max: sorted.at(-1) ?? null,
      mean: sorted.reduce((a, b) => a + b, 0) / (answered || 1),
    },
  }
}

const { url, requests, connections, rate, warmupS, durationS } = JSON.parse(readFileSync(0, 'utf8'))
const result = await runSteady(url, requests, { connections, rate, warmupS, durationS }, {
  onTick: (phase, second, count) => process.stdout.write(`tick ${phase} ${second} ${count}\n`),
  onMeasure: () => process.stdout.write('measure\n'),
})
process.stdout.write(`result ${JSON.stringify(result)}\n`)
