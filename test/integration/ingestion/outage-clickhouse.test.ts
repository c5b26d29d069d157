/**
 * The event store goes away while events keep arriving: capture keeps acknowledging into the spool,
 * readiness and metrics say what is happening, and when ClickHouse is back every acknowledged event
 * arrives. With a small spool cap the same outage fills it: 503 + Retry-After, then recovery.
 */
import t from 'tap'
import { randomUUID } from 'node:crypto'
import { clickhouseUnavailableReason, startClickHouse } from '../../helpers/clickhouse.js'
import { serverFor, startServer, type TestServer } from '../../helpers/server.js'
import { until } from '../../helpers/wait.js'

const skip = clickhouseUnavailableReason()

async function send(server: TestServer, distinctId: string, count: number): Promise<{ status: number; uuids: string[]; retryAfter: string | null }> {
  const batch = Array.from({ length: count }, () => ({ event: 'outage', uuid: randomUUID(), properties: { distinct_id: distinctId, pad: 'p'.repeat(300) } }))
  const res = await server.request('POST', '/batch/', { body: { api_key: server.boot.project_api_key, batch } })
  return { status: res.status, uuids: batch.map((e) => e.uuid), retryAfter: res.headers.get('retry-after') }
}

async function storedCount(query: (sql: string) => Promise<string>, db: string): Promise<number> {
  return Number((await query(`SELECT count() FROM ${db}.events FINAL WHERE event = 'outage'`)).trim())
}

t.test('ClickHouse outage', { skip: skip ?? false }, async (t) => {
  const ch = await startClickHouse()
  t.teardown(() => ch.destroy())

  t.test('events acknowledged during the outage are stored once it ends', async (t) => {
    const server = await serverFor(t, { env: { CLICKHOUSE_URL: ch.url, CLICKHOUSE_DATABASE: 'outage', SINK_RETRY_MAX_MS: '500' } })
    const acked: string[] = []
    const before = await send(server, 'before', 50)
    t.equal(before.status, 200)
    acked.push(...before.uuids)
    await until('events before the outage stored', async () => (await storedCount(ch.query, 'outage')) === 50)

    await ch.stop()
    const started = Date.now()
    // The first event the store will not confirm was acknowledged by the time its answer came.
    let firstAcked = 0
    for (let i = 0; i < 10; i++) {
      const during = await send(server, 'during', 50)
      t.equal(during.status, 200, 'capture keeps acknowledging into the spool')
      firstAcked ||= Date.now()
      acked.push(...during.uuids)
    }
    await until('readiness reports the outage', async () => (await server.request('GET', '/_readiness')).status === 503)
    const ready = await server.request('GET', '/_readiness')
    t.equal(ready.body.checks.event_store.ok, false)
    const metrics = (await server.request('GET', '/metrics')).text
    t.match(metrics, /skylark_sink_up 0/)
    t.ok(Number(/skylark_queue_depth\{queue="spool_bytes"\} (\d+)/.exec(metrics)?.[1]) > 100_000, 'the backlog is visible')
    await new Promise((r) => setTimeout(r, 2000))
    const asked = Date.now()
    const lag = Number(/^skylark_ingestion_lag_seconds (\S+)$/m.exec((await server.request('GET', '/metrics')).text)?.[1])
    // 50 ms for the metric's rounding; a busy disk's slow first acknowledgement no longer counts against it.
    t.ok(lag >= (asked - firstAcked - 50) / 1000, `the lag counts from the first event the store has not confirmed (${lag} s)`)

    await ch.start()
    await until('the backlog drained', async () => (await storedCount(ch.query, 'outage')) === acked.length, 60_000)
    await until('the lag back to 0', async () => /^skylark_ingestion_lag_seconds 0$/m.test((await server.request('GET', '/metrics')).text))
    t.comment(`outage lasted ${Date.now() - started} ms`)
    const stored = new Set((await ch.query(`SELECT toString(uuid) FROM outage.events FINAL WHERE event = 'outage' FORMAT TabSeparated`)).trim().split('\n'))
    t.ok(acked.every((u) => stored.has(u)), `all ${acked.length} acknowledged events are stored`)
    await until('readiness back to ok', async () => (await server.request('GET', '/_readiness')).status === 200)
    t.match((await server.request('GET', '/metrics')).text, /skylark_sink_up 1/)
  })

  t.test('after a crash during the outage, the events left in the spool count as late from when they were written', async (t) => {
    const env = { CLICKHOUSE_URL: ch.url, CLICKHOUSE_DATABASE: 'restart', SINK_RETRY_MAX_MS: '500' }
    const first = await startServer({ env })
    t.equal((await send(first, 'before', 20)).status, 200)
    await until('the schema made and the first events stored', async () => (await storedCount(ch.query, 'restart')) === 20)
    await ch.stop()
    const during = await send(first, 'during', 100)
    t.equal(during.status, 200)
    const ackedAt = Date.now()
    await new Promise((r) => setTimeout(r, 1500))
    await first.kill()
    const restarted = Date.now()
    const server = await serverFor(t, { dataDir: first.dataDir, env })
    const lagNow = async () => Number(/^skylark_ingestion_lag_seconds (\S+)$/m.exec((await server.request('GET', '/metrics')).text)?.[1])
    const lag = await lagNow()
    const sinceAck = (Date.now() - ackedAt) / 1000
    t.ok(lag >= sinceAck - 0.2 && lag <= sinceAck + 1, `the lag reads ${lag} s, ${sinceAck} s after the last acknowledgement`)
    t.ok(lag > (Date.now() - restarted) / 1000 + 1, 'older than the restart: counted from the spool, not from the start')

    await ch.start()
    await until('the leftover stored', async () => (await storedCount(ch.query, 'restart')) === 120, 60_000)
    await until('the lag back to 0', async () => (await lagNow()) === 0)
  })

  t.test('a full spool answers 503 with Retry-After and recovers by itself', async (t) => {
    const server = await serverFor(t, {
      env: { CLICKHOUSE_URL: ch.url, CLICKHOUSE_DATABASE: 'full', SPOOL_MAX_BYTES: '256KB', SPOOL_SEGMENT_BYTES: '16KB', SINK_RETRY_MAX_MS: '500' },
    })
    await ch.stop()
    const acked: string[] = []
    let refused: Awaited<ReturnType<typeof send>> | null = null
    for (let i = 0; i < 100 && !refused; i++) {
      const res = await send(server, 'full', 20)
      if (res.status === 200) acked.push(...res.uuids)
      else refused = res
    }
    t.ok(refused, 'the spool filled up')
    t.equal(refused?.status, 503)
    t.equal(refused?.retryAfter, '5')
    t.ok(acked.length > 0)
    await ch.start()
    await until('capture accepts again', async () => (await send(server, 'full-after', 1)).status === 200, 60_000)
    await until('everything acknowledged is stored', async () => {
      const stored = new Set((await ch.query(`SELECT toString(uuid) FROM full.events FINAL WHERE event = 'outage' FORMAT TabSeparated`)).trim().split('\n'))
      return acked.every((u) => stored.has(u))
    }, 60_000)
    t.pass(`${acked.length} events acknowledged before the spool was full are all stored`)
  })
})
