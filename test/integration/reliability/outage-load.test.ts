/**
 * The event store goes away under steady load: four senders keep posting /batch/ while ClickHouse is
 * stopped for ten seconds and started again. Capture keeps acknowledging into the spool the whole time,
 * /_readiness reports the outage while it lasts, /metrics shows the backlog growing, and once ClickHouse is
 * back the backlog drains and every acknowledged event is stored exactly once.
 */
import t from 'tap'
import http from 'node:http'
import { randomUUID } from 'node:crypto'
import { clickhouseUnavailableReason, startClickHouse } from '../../helpers/clickhouse.js'
import { serverFor } from '../../helpers/server.js'
import { rawRequest, sleep, until } from './lib.js'

const OUTAGE_MS = 10_000
const skip = clickhouseUnavailableReason()

t.setTimeout(180_000)

t.test('ClickHouse outage under load', { skip: skip ?? false }, async (t) => {
  const ch = await startClickHouse()
  t.teardown(() => ch.destroy())
  const server = await serverFor(t, { env: { CLICKHOUSE_URL: ch.url, CLICKHOUSE_DATABASE: 'outage_load', SINK_RETRY_MAX_MS: '1000' } })
  await until('ClickHouse connected', async () => (await server.request('GET', '/_readiness')).status === 200)

  const acked = new Set<string>()
  const statuses: Record<string, number> = {}
  let sending = true
  const sender = async (n: number) => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
    while (sending) {
      const batch = Array.from({ length: 50 }, () => ({ event: 'outage load', uuid: randomUUID(), properties: { distinct_id: `o-${n}-${randomUUID().slice(0, 3)}`, pad: 'o'.repeat(200) } }))
      const res = await rawRequest(server.baseUrl, { method: 'POST', path: '/batch/', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ api_key: server.boot.project_api_key, batch }), agent })
      statuses[res.status] = (statuses[res.status] ?? 0) + 1
      if (res.status === 200) for (const e of batch) acked.add(e.uuid)
      await sleep(25)
    }
    agent.destroy()
  }
  const senders = Array.from({ length: 4 }, (_, n) => sender(n))
  const backlog = async () => Number(/skylark_queue_depth\{queue="spool_bytes"\} (\d+)/.exec((await server.request('GET', '/metrics')).text)?.[1] ?? 0)
  await sleep(2000)

  await ch.stop()
  const stoppedAt = Date.now()
  const ackedBefore = acked.size
  const readiness: number[] = []
  const backlogs: number[] = []
  let sinkDown = false
  while (Date.now() - stoppedAt < OUTAGE_MS) {
    readiness.push((await server.request('GET', '/_readiness')).status)
    const metrics = (await server.request('GET', '/metrics')).text
    sinkDown ||= /skylark_sink_up 0/.test(metrics)
    backlogs.push(await backlog())
    await sleep(250)
  }
  const firstDown = readiness.indexOf(503)
  t.ok(firstDown >= 0 && firstDown * 250 < 5000, `/_readiness reported the outage within ${(firstDown * 250) / 1000} s`)
  t.ok(readiness.slice(firstDown).every((s) => s === 503), 'and kept reporting it while it lasted')
  t.ok(sinkDown, '/metrics showed skylark_sink_up 0')
  t.ok(backlogs[backlogs.length - 1] > backlogs[firstDown] && backlogs[backlogs.length - 1] > 1_000_000, `the backlog grew to ${(backlogs[backlogs.length - 1] / 1024 / 1024).toFixed(1)} MB`)
  const ackedDuring = acked.size - ackedBefore

  await ch.start()
  const startedAt = Date.now()
  await sleep(2000)
  sending = false
  await Promise.all(senders)
  t.same(Object.keys(statuses), ['200'], `every request was acknowledged, during the outage too: ${JSON.stringify(statuses)}`)

  const count = async () => Number((await ch.query(`SELECT count() FROM outage_load.events FINAL WHERE event = 'outage load'`)).trim())
  await until('the backlog drained', async () => (await count()) >= acked.size, 90_000)
  const drainedMs = Date.now() - startedAt
  const stored = (await ch.query(`SELECT toString(uuid) FROM outage_load.events FINAL WHERE event = 'outage load' FORMAT TabSeparated`)).trim().split('\n')
  const storedSet = new Set(stored)
  t.equal(stored.length, storedSet.size, 'no event is stored twice')
  t.ok([...acked].every((u) => storedSet.has(u)), `all ${acked.size} acknowledged events are stored (${ackedDuring} of them during a ${OUTAGE_MS / 1000} s outage), drained ${(drainedMs / 1000).toFixed(1)} s after ClickHouse came back`)
  t.equal(stored.length, acked.size, 'and nothing else')
  await until('readiness is back', async () => (await server.request('GET', '/_readiness')).status === 200, 30_000)
  t.pass('/_readiness is 200 again')
})
