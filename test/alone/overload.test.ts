/**
 * Overload: far more connections, requests and body bytes than a 2-core machine can serve at once, plus
 * slow-loris clients and one client hogging connections. The server keeps answering — 200, or 429/503 with
 * Retry-After where admission control refuses — never resets a request it read, keeps its memory under the
 * configured ceiling, cuts slow clients off by itself, answers /_health throughout, stores every event it
 * acknowledged, and is back to its normal latency once the storm stops.
 */
import t from 'tap'
import http from 'node:http'
import net from 'node:net'
import { randomUUID } from 'node:crypto'
import { serverFor } from '../helpers/server.js'
import { MB, RequestFailed, memoryOf, rawRequest, sleep, storedEvents, until, type RawResponse } from '../integration/reliability/lib.js'

const FLOOD_SOCKETS = 2000
const FLOOD_BODY = 256 * 1024
const SMALL_REQUESTS = 4000
const SMALL_CONCURRENCY = 200
const HOG_REQUESTS = 300
const LORIS = 300
/**
 * What the test holds the server to: resident memory of the whole process (main thread, pool workers,
 * consumer) with 32 MB of request bodies allowed in memory. Each admitted body costs about three times its
 * size while it is copied to a worker, decoded and spooled, and thread heaps keep their high-water mark;
 * the same storm without admission control takes about 2 GB.
 */
const RSS_CEILING = 1024 * MB
const ADMISSION = { HTTP_MAX_INFLIGHT: '256', HTTP_MAX_INFLIGHT_PER_CLIENT: '64', HTTP_MAX_BODY_MEMORY: '32MB', BATCH_MAX_BYTES: '8MB' }

t.setTimeout(240_000)

interface Outcome {
  group: string
  status?: number
  retryAfter?: string
  error?: string
}

t.test('overload', async (t) => {
  // OVERLOAD_ENV (JSON) overrides the server's environment, e.g. to compare with admission control off.
  const server = await serverFor(t, { env: { ...ADMISSION, SPOOL_MAX_BYTES: '2GB', ...JSON.parse(process.env.OVERLOAD_ENV ?? '{}') } })
  const pid = server.proc.pid!
  const token = server.boot.project_api_key
  const agent = new http.Agent({ keepAlive: true, maxSockets: 8 })
  const capture = (distinctId: string) => ({ api_key: token, event: 'calm', distinct_id: distinctId })
  const latency = async (n: number) => {
    const times: number[] = []
    for (let i = 0; i < n; i++) {
      const res = await rawRequest(server.baseUrl, { method: 'POST', path: '/decide/?v=3', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ api_key: token, distinct_id: `calm-${i}` }), agent })
      const cap = await rawRequest(server.baseUrl, { method: 'POST', path: '/capture/', headers: { 'content-type': 'application/json' }, body: JSON.stringify(capture(`calm-${i}`)), agent })
      if (res.status !== 200 || cap.status !== 200) throw new Error(`calm request answered ${res.status}/${cap.status}`)
      times.push(res.ms, cap.ms)
    }
    times.sort((a, b) => a - b)
    return { p50: times[Math.floor(times.length / 2)], p99: times[Math.floor(times.length * 0.99)] }
  }
  await latency(10) // warm-up
  const before = await latency(20)
  const rssBefore = memoryOf(pid).rss

  // Sample memory and /_health all along.
  let storming = true
  let peakRss = 0
  const health = { checks: 0, failures: [] as string[], slowestMs: 0 }
  const sampler = (async () => {
    const healthAgent = new http.Agent({ keepAlive: true, maxSockets: 1 })
    while (storming) {
      peakRss = Math.max(peakRss, memoryOf(pid).rss)
      try {
        const check = () => rawRequest(server.baseUrl, { method: 'GET', path: '/_health', agent: healthAgent, timeoutMs: 5000 })
        // A kept-alive socket the server closed as idle while this process was busy (the storm stalls it for
        // seconds) resets when reused: an HTTP client sends the GET again on a new one, as this does once.
        const res = await check().catch((error: unknown) => {
          if (error instanceof RequestFailed && error.reusedSocket && error.code === 'ECONNRESET') return check()
          throw error
        })
        health.checks++
        health.slowestMs = Math.max(health.slowestMs, res.ms)
        if (res.status !== 200) health.failures.push(`answered ${res.status}`)
      } catch (error) {
        health.failures.push((error as Error).message)
      }
      await sleep(100)
    }
    healthAgent.destroy()
  })()

  const outcomes: Outcome[] = []
  const acked = new Set<string>()
  const record = (group: string, res: RawResponse | null, error?: unknown, uuids: string[] = []) => {
    if (res) {
      outcomes.push({ group, status: res.status, retryAfter: res.headers['retry-after'] as string | undefined })
      if (res.status === 200) for (const u of uuids) acked.add(u)
    } else outcomes.push({ group, error: error instanceof RequestFailed ? `${error.code} ${error.message}` : String(error) })
  }

  // 0. Before the storm, one client (127.0.0.2) holds 300 requests open at once: past its share (64) it
  //    gets 429 while the server as a whole still has room.
  const hog = Array.from({ length: HOG_REQUESTS }, async () => {
    const uuid = randomUUID()
    try {
      const res = await rawRequest(server.baseUrl, { method: 'POST', path: '/capture/', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ...capture('hog'), uuid, properties: { pad: 'h'.repeat(64 * 1024) } }), localAddress: '127.0.0.2', timeoutMs: 120_000 })
      record('hog', res, undefined, [uuid])
    } catch (error) {
      record('hog', null, error)
    }
  })

  await Promise.all(hog)

  // 1. A flood: 2,000 connections at once from 40 client addresses (127.0.1.x, 50 each: within the
  //    per-client share), each uploading a 256 KB batch, 512 MB offered in all.
  const pad = 'x'.repeat(FLOOD_BODY / 5)
  const flood = Array.from({ length: FLOOD_SOCKETS }, async (_, i) => {
    const batch = Array.from({ length: 4 }, () => ({ event: 'flood', uuid: randomUUID(), properties: { distinct_id: `flood-${randomUUID().slice(0, 4)}`, pad } }))
    try {
      const res = await rawRequest(server.baseUrl, { method: 'POST', path: '/batch/', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ api_key: token, batch }), localAddress: `127.0.1.${1 + (i % 40)}`, timeoutMs: 120_000 })
      record('flood', res, undefined, batch.map((e) => e.uuid))
    } catch (error) {
      record('flood', null, error)
    }
  })

  // 2. Thousands of small requests, 200 at a time on keep-alive connections.
  const smallAgent = new http.Agent({ keepAlive: true, maxSockets: SMALL_CONCURRENCY })
  let nextSmall = 0
  const small = Array.from({ length: SMALL_CONCURRENCY }, async () => {
    while (nextSmall < SMALL_REQUESTS) {
      const i = nextSmall++
      const uuid = randomUUID()
      const decide = i % 2 === 0
      const body = decide ? { api_key: token, distinct_id: `small-${i}` } : { ...capture(`small-${i}`), uuid }
      try {
        const res = await rawRequest(server.baseUrl, { method: 'POST', path: decide ? '/decide/?v=3' : '/capture/', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), agent: smallAgent, timeoutMs: 120_000 })
        record('small', res, undefined, decide ? [] : [uuid])
      } catch (error) {
        record('small', null, error)
      }
    }
  })

  // 3. Slow loris from 127.0.0.3: half send their headers a byte a second, half declare a 1 MB body and
  //    trickle it. uWS cuts them off; they must not stop anyone else.
  const lorisStarted = Date.now()
  const lorisClosed: number[] = []
  const loris = Array.from({ length: LORIS }, (_, i) =>
    new Promise<void>((resolve) => {
      const socket = net.connect({ host: '127.0.0.1', port: server.port, localAddress: '127.0.0.3' })
      const head = `POST /batch/ HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${1024 * 1024}\r\n\r\n`
      let sent = 0
      const timer = setInterval(() => {
        if (i % 2 === 0) socket.write(head[sent++ % head.length])
        else socket.write('[')
      }, 1000)
      socket.on('connect', () => {
        if (i % 2 === 1) socket.write(head)
      })
      socket.on('error', () => undefined)
      socket.on('close', () => {
        clearInterval(timer)
        lorisClosed.push(Date.now() - lorisStarted)
        resolve()
      })
      // Safety net: the test never waits on a client the server failed to cut off.
      setTimeout(() => socket.destroy(), 60_000).unref()
    }),
  )

  const stormStarted = Date.now()
  await Promise.all([...flood, ...small])
  const stormMs = Date.now() - stormStarted
  await Promise.all(loris)
  storming = false
  await sampler
  smallAgent.destroy()

  const count = (group: string, pred: (o: Outcome) => boolean) => outcomes.filter((o) => o.group === group && pred(o)).length
  const summary = (group: string) => {
    const byStatus: Record<string, number> = {}
    for (const o of outcomes.filter((o) => o.group === group)) byStatus[o.status ?? o.error ?? '?'] = (byStatus[o.status ?? o.error ?? '?'] ?? 0) + 1
    return JSON.stringify(byStatus)
  }
  t.comment(`storm of ${outcomes.length - HOG_REQUESTS} requests over ${FLOOD_SOCKETS + SMALL_CONCURRENCY + LORIS} connections in ${(stormMs / 1000).toFixed(1)} s: flood ${summary('flood')}, small ${summary('small')}, hog ${summary('hog')}`)
  const bad = outcomes.filter((o) => o.error !== undefined || ![200, 429, 503].includes(o.status!))
  t.same(bad.slice(0, 5), [], 'every request got an answer, and every answer is 200, 429 or 503')
  t.ok(outcomes.filter((o) => o.status === 429 || o.status === 503).every((o) => o.retryAfter === '1'), 'every refusal carries Retry-After')
  t.ok(count('flood', (o) => o.status === 503) > 0, 'admission control refused part of the flood with 503')
  t.ok(count('flood', (o) => o.status === 200) > 0 && count('small', (o) => o.status === 200) > SMALL_REQUESTS / 2, 'and served the rest')
  t.ok(count('hog', (o) => o.status === 429) > 0 && count('hog', (o) => o.status === 200) >= 64, 'the hogging client got its share, then 429')
  t.ok(peakRss < RSS_CEILING, `resident memory peaked at ${(peakRss / MB).toFixed(0)} MB (from ${(rssBefore / MB).toFixed(0)} MB), under the ${RSS_CEILING / MB} MB ceiling`)
  t.same(health.failures, [], `/_health answered all ${health.checks} checks during the storm (slowest ${health.slowestMs.toFixed(0)} ms)`)
  lorisClosed.sort((a, b) => a - b)
  t.equal(lorisClosed.length, LORIS, 'every slow-loris connection ended')
  t.ok(lorisClosed[LORIS - 1] < 30_000, `the server cut slow clients off by itself, the last after ${(lorisClosed[LORIS - 1] / 1000).toFixed(1)} s`)

  // Once the storm is over, not at its last request: the consumer may still be storing its backlog beside.
  let after = await latency(20)
  const calmBy = Date.now() + 30_000
  while (after.p50 >= 50 && Date.now() < calmBy) after = await latency(20)
  t.ok(after.p50 < 50, `normal latency once the storm is over: p50 ${after.p50.toFixed(1)} ms, p99 ${after.p99.toFixed(1)} ms (before: p50 ${before.p50.toFixed(1)} ms)`)
  t.ok(server.proc.exitCode === null && server.proc.pid === pid, 'the same server process is still running')

  await until('every acknowledged event is stored', () => {
    const stored = new Set(storedEvents(server.dataDir).map((r) => r.uuid))
    return [...acked].every((u) => stored.has(u))
  }, 90_000)
  t.pass(`all ${acked.size} acknowledged events are stored`)
  agent.destroy()
})
