/**
 * Graceful shutdown: SIGTERM under load. Requests being served when the signal arrives are finished (none
 * is reset, uploads in progress included), the spool is flushed to the event store when it can be, the
 * process exits 0, and a restart on the same data folder starts clean with every acknowledged event
 * stored exactly once. When the store can't take the backlog before SHUTDOWN_TIMEOUT_MS, the rows stay in
 * the spool and the next start stores them.
 */
import t from 'tap'
import http from 'node:http'
import { randomUUID } from 'node:crypto'
import { readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { startServer, tempDir, type TestServer } from '../../helpers/server.js'
import { RequestFailed, rawRequest, sleep, storedEvents, until } from './lib.js'

t.setTimeout(120_000)

interface Sent {
  startedAt: number
  status?: number
  error?: string
  reused?: boolean
}

/** Senders on kept-alive connections posting /batch/ and /decide/ until the server is gone. */
function load(server: TestServer, senders: number) {
  const sent: Sent[] = []
  const acked = new Set<string>()
  let refused = 0
  const run = async (n: number) => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
    for (let k = 0; refused < senders * 2; k++) {
      const decide = n % 4 === 3
      const batch = Array.from({ length: 20 }, () => ({ event: 'shutdown test', uuid: randomUUID(), properties: { distinct_id: `s-${n}`, pad: 'p'.repeat(200) } }))
      const body = decide ? { api_key: server.boot.project_api_key, distinct_id: `s-${n}` } : { api_key: server.boot.project_api_key, batch }
      const entry: Sent = { startedAt: Date.now() }
      sent.push(entry)
      try {
        const res = await rawRequest(server.baseUrl, { method: 'POST', path: decide ? '/decide/?v=3' : '/batch/', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), agent, timeoutMs: 30_000 })
        entry.status = res.status
        entry.reused = res.reusedSocket
        if (res.status === 200 && !decide) for (const e of batch) acked.add(e.uuid)
      } catch (error) {
        const e = error as RequestFailed
        entry.error = e.code
        entry.reused = e.reusedSocket
        if (e.code === 'ECONNREFUSED') refused++
        await sleep(20)
      }
    }
    agent.destroy()
  }
  return { sent, acked, done: Promise.all(Array.from({ length: senders }, (_, n) => run(n))) }
}

/**
 * A /batch/ upload that sends half its body, waits, then the rest: it straddles the signal. `sent`: the first
 * half is written to the connection; `answer`: the status, or the connection's error.
 */
function slowUpload(server: TestServer, uuid: string, pauseMs: number): { sent: Promise<void>; answer: Promise<number | string> } {
  const body = Buffer.from(JSON.stringify({ api_key: server.boot.project_api_key, batch: [{ event: 'shutdown test', uuid, properties: { distinct_id: 'slow', pad: 's'.repeat(50_000) } }] }))
  let written: () => void = () => {}
  const sent = new Promise<void>((resolve) => (written = resolve))
  const answer = new Promise<number | string>((resolve) => {
    const req = http.request({ host: '127.0.0.1', port: server.port, method: 'POST', path: '/batch/', headers: { 'content-type': 'application/json', 'content-length': body.length } }, (res) => {
      res.resume()
      res.on('end', () => resolve(res.statusCode ?? 0))
    })
    req.on('error', (e: NodeJS.ErrnoException) => {
      written()
      resolve(e.code ?? 'error')
    })
    req.write(body.subarray(0, body.length / 2), () => written())
    setTimeout(() => req.end(body.subarray(body.length / 2)), pauseMs)
  })
  return { sent, answer }
}

function spoolBytes(dataDir: string): number {
  let total = 0
  for (const lane of readdirSync(join(dataDir, 'spool'))) {
    for (const f of readdirSync(join(dataDir, 'spool', lane))) total += statSync(join(dataDir, 'spool', lane, f)).size
  }
  return total
}

/** Spool segments holding data past the person or sink checkpoint of their lane. */
function unconsumed(dataDir: string): string[] {
  const db = new Database(join(dataDir, 'persons.db'), { readonly: true })
  try {
    const at = (key: string) => (db.prepare('SELECT segment, offset FROM consumer_checkpoints WHERE lane = ?').get(key) as { segment: number; offset: number } | undefined) ?? { segment: 0, offset: 0 }
    const left: string[] = []
    for (const lane of readdirSync(join(dataDir, 'spool'))) {
      for (const file of readdirSync(join(dataDir, 'spool', lane))) {
        const segment = Number.parseInt(file, 10)
        const size = statSync(join(dataDir, 'spool', lane, file)).size
        for (const stage of ['persons', 'sink']) {
          const c = at(`${stage}/${lane}`)
          if (segment > c.segment || (segment === c.segment && size > c.offset)) left.push(`${lane}/${file} (${size} bytes) past the ${stage} checkpoint ${c.segment}:${c.offset}`)
        }
      }
    }
    return left
  } finally {
    db.close()
  }
}

t.test('SIGTERM under load finishes what it started and loses nothing', async (t) => {
  const dataDir = tempDir('skylark-shutdown-')
  t.teardown(() => server.cleanup())
  let server = await startServer({ dataDir })
  const traffic = load(server, 8)
  await sleep(1500)
  const uploads = Array.from({ length: 4 }, () => randomUUID())
  const slow = uploads.map((uuid) => slowUpload(server, uuid, 1000))
  // Their first halves written, and a moment for the loaded server to read them: the uploads are under way.
  await Promise.all(slow.map((upload) => upload.sent))
  await sleep(300)

  const signalAt = Date.now()
  const exitCode = await server.stop()
  const shutdownMs = Date.now() - signalAt
  await traffic.done
  const slowResults = await Promise.all(slow.map((upload) => upload.answer))

  t.equal(exitCode, 0, `the process exited 0, ${shutdownMs} ms after SIGTERM`)
  t.ok(shutdownMs < 10_000, 'within SHUTDOWN_TIMEOUT_MS')
  const before = traffic.sent.filter((s) => s.startedAt < signalAt)
  const after = traffic.sent.filter((s) => s.startedAt >= signalAt)
  t.same(before.filter((s) => s.status !== 200), [], `all ${before.length} requests sent before the signal were answered 200`)
  t.same(slowResults, [200, 200, 200, 200], 'uploads in progress at the signal were read to the end and answered 200')
  // After the signal: answered while draining (every answer closes its connection), or refused at connect.
  const resetAfter = after.filter((s) => s.error !== undefined && s.error !== 'ECONNREFUSED' && s.reused)
  t.same(resetAfter, [], 'no request on a connection the server had served was reset')
  t.ok(after.every((s) => s.status === undefined || s.status === 200 || s.status === 503), 'answers during the drain are 200 (or 503 past it)')
  t.comment(`${before.length} requests before the signal, ${after.length} after: ${JSON.stringify(Object.entries(after.reduce<Record<string, number>>((m, s) => ((m[String(s.status ?? s.error)] = (m[String(s.status ?? s.error)] ?? 0) + 1), m), {})))}`)

  const acked = [...traffic.acked, ...uploads]
  const storedAtExit = new Set(storedEvents(dataDir).map((r) => r.uuid))
  t.ok(acked.every((u) => storedAtExit.has(u)), `the spool was flushed to the store before exiting: all ${acked.length} acknowledged events stored`)
  t.same(unconsumed(dataDir), [], `what is left in the spool (${spoolBytes(dataDir)} bytes) is behind both consumer checkpoints: nothing to replay`)

  server = await startServer({ dataDir })
  t.equal((await server.request('GET', '/_readiness')).status, 200, 'the restart is ready')
  const stored = storedEvents(dataDir, "event = 'shutdown test'")
  t.equal(stored.length, new Set(stored.map((r) => r.uuid)).size, 'no event is stored twice')
  t.equal(stored.length, acked.length, 'and nothing that was not acknowledged')
  t.equal((await server.request('POST', '/capture/', { body: { api_key: server.boot.project_api_key, event: 'after', distinct_id: 'x' } })).status, 200, 'it accepts events again')
  t.equal(await server.stop(), 0)
})

t.test('SIGTERM while the store is stuck leaves the backlog in the spool for the next start', async (t) => {
  const dataDir = tempDir('skylark-shutdown-stuck-')
  const env = { SHUTDOWN_TIMEOUT_MS: '2000' }
  let server = await startServer({ dataDir, env })
  t.teardown(() => server.cleanup())
  // Another writer holds events.db: every insert waits, then fails as busy (retryable).
  const lock = new Database(join(dataDir, 'events.db'))
  lock.exec('BEGIN IMMEDIATE')
  const acked: string[] = []
  for (let i = 0; i < 20; i++) {
    const batch = Array.from({ length: 25 }, () => ({ event: 'stuck', uuid: randomUUID(), properties: { distinct_id: `stuck-${i}` } }))
    const res = await server.request('POST', '/batch/', { body: { api_key: server.boot.project_api_key, batch } })
    t.equal(res.status, 200)
    acked.push(...batch.map((e) => e.uuid))
  }
  const signalAt = Date.now()
  const exitCode = await server.stop()
  const shutdownMs = Date.now() - signalAt
  t.equal(exitCode, 0, `it exited 0 after ${shutdownMs} ms`)
  t.ok(shutdownMs < 2000 + 7000, 'a stuck store holds shutdown to SHUTDOWN_TIMEOUT_MS plus one busy wait, not forever')
  t.ok(unconsumed(dataDir).length > 0, `what could not be stored is still in the spool (${spoolBytes(dataDir)} bytes)`)
  lock.exec('ROLLBACK')
  lock.close()

  server = await startServer({ dataDir, env })
  await until('the next start stores the backlog', () => storedEvents(dataDir, "event = 'stuck'").length >= acked.length, 30_000)
  const stored = storedEvents(dataDir, "event = 'stuck'")
  t.same(new Set(stored.map((r) => r.uuid)), new Set(acked), `all ${acked.length} acknowledged events are stored after the restart`)
  t.equal(stored.length, acked.length, 'each once')
  t.equal(await server.stop(), 0)
})
