/**
 * Crash safety: senders keep posting /batch/ requests while the server is killed with SIGKILL at random
 * moments and restarted on the same data folder, or while only its consumer thread ends (which the server
 * restarts itself). Every uuid that got a 200 must be stored exactly once.
 */
import type { Test } from 'tap'
import { randomUUID } from 'node:crypto'
import { startServer, tempDir, type TestServer } from '../../helpers/server.js'
import { throwInWorkerThread } from '../../helpers/threads.js'
import { readUntil } from '../../helpers/wait.js'
import { waitForEvents } from './suite.js'

export interface CrashOptions {
  kills: number
  env: Record<string, string>
  /** Reads every stored uuid (with duplicates, if the store has any) after the run. */
  storedUuids: (server: TestServer) => Promise<string[]>
  /** What each kill ends: the server process (default), or only its consumer thread, with an uncaught error. */
  kill?: 'process' | 'consumer thread'
}

/**
 * Reads the crash test's uuids from a ClickHouse database. FINAL: a replay after a crash may insert a row again,
 * and the ReplacingMergeTree collapses it. The table exists once a consumer has migrated ClickHouse, which on a
 * busy machine can come after the kills.
 */
export function clickhouseCrashUuids(query: (sql: string) => Promise<string>, database: string): () => Promise<string[]> {
  return async () => {
    const text = await query(`SELECT toString(uuid) FROM ${database}.events FINAL WHERE event = 'crash test' FORMAT TabSeparated`).catch((error: Error) => {
      if (/doesn't exist/.test(error.message)) return ''
      throw error
    })
    return text.split('\n').filter(Boolean)
  }
}

/** The uncaught error each consumer-thread kill throws, to find in the server's log. */
const INJECTED_ERROR = 'injected by the crash test'

export async function crashRun(t: Test, options: CrashOptions): Promise<void> {
  const dataDir = tempDir()
  const threadOnly = options.kill === 'consumer thread'
  const start = () => startServer({ dataDir, env: options.env, nodeArgs: threadOnly ? ['--inspect=127.0.0.1:0'] : [] })
  let server = await start()
  // The server of the moment, also when an assert throws first.
  t.teardown(async () => {
    await server.stop()
    server.cleanup()
  })
  const boot = server.boot
  const acked = new Set<string>()
  const sent = new Set<string>()
  let running = true
  let requests = 0

  const sender = async () => {
    while (running) {
      const batch = Array.from({ length: 25 }, () => {
        const uuid = randomUUID()
        sent.add(uuid)
        return { event: 'crash test', uuid, properties: { distinct_id: `crash-${uuid.slice(0, 2)}`, payload: 'x'.repeat(200) } }
      })
      try {
        const res = await fetch(`${server.baseUrl}/batch/`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ api_key: boot.project_api_key, batch }),
        })
        await res.text()
        requests++
        if (res.status === 200) for (const e of batch) acked.add(e.uuid)
      } catch {
        await new Promise((r) => setTimeout(r, 20)) // the server is down: try again soon
      }
    }
  }
  const senders = Array.from({ length: 4 }, sender)

  // Each kill comes only after the (re)started server has acknowledged traffic, then at a random
  // moment: a fixed sleep let a slow CI machine spend whole intervals restarting, so the run proved little.
  const ackedPerLife: number[] = []
  const serveThenWait = async (extraMs: number) => {
    const before = acked.size
    const deadline = Date.now() + 20_000
    while (acked.size - before < 100 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10))
    await new Promise((r) => setTimeout(r, Math.random() * extraMs))
    ackedPerLife.push(acked.size - before)
  }
  const readinessWhileDown: string[] = []
  try {
    for (let kill = 0; kill < options.kills; kill++) {
      // Each thread is ended only once it has started storing: a life that ends while it loads tests little.
      if (threadOnly) await readUntil('the server to read ready', () => server.request('GET', '/_readiness'), (res) => res.status === 200)
      await serveThenWait(600)
      if (threadOnly) {
        await throwInWorkerThread(server, 'workers/ingest-consumer.js', INJECTED_ERROR)
        readinessWhileDown.push(await eventStoreReadiness(server))
      } else {
        await server.kill()
        server = await start()
      }
    }
    await serveThenWait(200)
  } finally {
    running = false
    await Promise.all(senders)
  }

  t.ok(ackedPerLife.every((n) => n >= 100),
    `every ${threadOnly ? 'consumer thread' : 'server'} life acknowledged events before its kill (${ackedPerLife.join(', ')} over ${requests} requests, ${acked.size} events acknowledged)`)
  const deadline = Date.now() + 60_000
  let stored: string[] = []
  while (Date.now() < deadline) {
    stored = await options.storedUuids(server)
    const present = new Set(stored)
    if ([...acked].every((u) => present.has(u))) break
    await new Promise((r) => setTimeout(r, 500))
  }
  const storedSet = new Set(stored)
  const missing = [...acked].filter((u) => !storedSet.has(u))
  t.same(missing, [], 'every acknowledged event is stored')
  t.equal(stored.length, storedSet.size, 'no event is stored twice')
  t.ok([...storedSet].every((u) => sent.has(u)), 'nothing was stored that was not sent')
  // The last start found its predecessor's events in the spool: stored, they no longer count as waiting.
  let lag = ''
  for (const until = Date.now() + 10_000; Date.now() < until; await new Promise((r) => setTimeout(r, 200))) {
    lag = /^skylark_ingestion_lag_seconds (\S+)$/m.exec((await server.request('GET', '/metrics')).text)?.[1] ?? ''
    if (lag === '0') break
  }
  t.equal(lag, '0', 'no acknowledged event is left waiting: the ingestion lag reads 0')
  if (threadOnly) await checkThreadRestarts(t, server, options.kills, readinessWhileDown)
}

/** The event store's readiness detail once it reads not ready, polled for up to 3 s ('' if it never did). */
async function eventStoreReadiness(server: TestServer): Promise<string> {
  for (const until = Date.now() + 3000; Date.now() < until; await new Promise((r) => setTimeout(r, 20))) {
    const res = await server.request('GET', '/_readiness')
    if (res.status !== 200) return String(res.body?.checks?.event_store?.detail)
  }
  return ''
}

/** After `kills` consumer-thread exits: one server process restarted the thread each time, and the new thread works. */
async function checkThreadRestarts(t: Test, server: TestServer, kills: number, readinessWhileDown: string[]): Promise<void> {
  const logged = server.stdout.filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as Record<string, unknown>)
  const crashes = logged.filter((entry) => entry.msg === 'ingest consumer crashed').map((entry) => (entry.err as { message?: string })?.message)
  t.same(crashes, Array(kills).fill(INJECTED_ERROR), 'the server logged each uncaught error of its consumer thread')
  const stops = logged.filter((entry) => String(entry.msg).startsWith('ingest consumer stopped unexpectedly'))
  t.same(stops.map((entry) => entry.code), Array(kills).fill(1), 'and the exit it caused')
  // Each thread lived seconds, so each restart waited twice as long as the one before (consumer/handle.ts).
  t.same(stops.map((entry) => entry.restartInMs), Array.from({ length: kills }, (_, i) => 1000 * 2 ** i), 'restarting after 1 s, then 2 s, then 4 s')
  const starts = logged.filter((entry) => entry.thread === 'consumer' && entry.msg === 'thread started')
  t.equal(starts.length, kills + 1, 'and started the thread again each time, in the same process')
  t.same(readinessWhileDown, Array(kills).fill('the ingest consumer is not running'), 'readiness reads not ready while the thread is down')
  t.equal((await server.request('GET', '/_readiness')).status, 200, 'and ready again once it is back')
  // The GeoIP database reaches each new thread on a channel of its own (consumer/handle.ts).
  const res = await server.request('POST', '/capture/', {
    body: { api_key: server.boot.project_api_key, event: 'after restarts', distinct_id: 'geo' },
    headers: { 'x-forwarded-for': '81.2.69.142' },
  })
  t.equal(res.status, 200, 'an event captured after the restarts is acknowledged')
  const [event] = await waitForEvents(server, 'event=after+restarts', 1)
  t.equal(event?.properties.$geoip_country_code, 'GB', 'the restarted thread resolves $ip with the GeoIP database')
}
