/**
 * Crash safety: senders keep posting /batch/ requests while the server is killed with SIGKILL at random
 * moments and restarted on the same data folder. Every uuid that got a 200 must be stored exactly once.
 */
import type { Test } from 'tap'
import { randomUUID } from 'node:crypto'
import { startServer, tempDir, type TestServer } from '../../helpers/server.js'

export interface CrashOptions {
  kills: number
  env: Record<string, string>
  /** Reads every stored uuid (with duplicates, if the store has any) after the run. */
  storedUuids: (server: TestServer) => Promise<string[]>
}

export async function crashRun(t: Test, options: CrashOptions): Promise<void> {
  const dataDir = tempDir()
  let server = await startServer({ dataDir, env: options.env })
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
  for (let kill = 0; kill < options.kills; kill++) {
    await serveThenWait(600)
    await server.kill()
    server = await startServer({ dataDir, env: options.env })
  }
  await serveThenWait(200)
  running = false
  await Promise.all(senders)

  t.ok(ackedPerLife.every((n) => n >= 100),
    `every server life acknowledged events before its kill (${ackedPerLife.join(', ')} over ${requests} requests)`)
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
  await server.stop()
  server.cleanup()
}
