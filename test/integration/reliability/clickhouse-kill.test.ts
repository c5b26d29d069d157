/**
 * ClickHouse dies (SIGKILL, nothing flushed) three times while four senders keep posting /batch/ and the
 * consumer writes spanning INSERTs (CLICKHOUSE_INSERT_SPAN_MS): every acknowledged event is stored exactly
 * once in the end. An INSERT that was open when ClickHouse died is written again from the spool.
 */
import t from 'tap'
import http from 'node:http'
import { randomUUID } from 'node:crypto'
import { clickhouseUnavailableReason, startClickHouse } from '../../helpers/clickhouse.js'
import { serverFor } from '../../helpers/server.js'
import { rawRequest, sleep, until } from './lib.js'

const skip = clickhouseUnavailableReason()

t.setTimeout(180_000)

t.test('ClickHouse killed during spanning inserts loses no acknowledged event', { skip: skip ?? false }, async (t) => {
  const ch = await startClickHouse()
  t.teardown(() => ch.destroy())
  const server = await serverFor(t, {
    env: { CLICKHOUSE_URL: ch.url, CLICKHOUSE_DATABASE: 'ch_kill', CLICKHOUSE_INSERT_SPAN_MS: '2000', SINK_RETRY_MAX_MS: '500' },
  })
  await until('ClickHouse connected', async () => (await server.request('GET', '/_readiness')).status === 200)

  const acked = new Set<string>()
  let sending = true
  const sender = async (n: number) => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
    while (sending) {
      const batch = Array.from({ length: 100 }, () => ({ event: 'ch kill', uuid: randomUUID(), properties: { distinct_id: `k-${n}-${randomUUID().slice(0, 3)}`, pad: 'k'.repeat(300) } }))
      const res = await rawRequest(server.baseUrl, { method: 'POST', path: '/batch/', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ api_key: server.boot.project_api_key, batch }), agent })
      if (res.status === 200) for (const e of batch) acked.add(e.uuid)
    }
    agent.destroy()
  }
  const senders = Array.from({ length: 4 }, (_, n) => sender(n))
  for (let kill = 0; kill < 3; kill++) {
    await sleep(2500 + Math.floor(Math.random() * 1000))
    await ch.kill()
    await sleep(500)
    await ch.start()
  }
  await sleep(1000)
  sending = false
  await Promise.all(senders)

  const count = async () => Number((await ch.query(`SELECT count() FROM ch_kill.events FINAL WHERE event = 'ch kill'`)).trim())
  await until('every acknowledged event stored', async () => (await count()) >= acked.size, 90_000)
  const stored = (await ch.query(`SELECT toString(uuid) FROM ch_kill.events FINAL WHERE event = 'ch kill' FORMAT TabSeparated`)).trim().split('\n')
  const storedSet = new Set(stored)
  t.equal(stored.length, storedSet.size, 'no event is stored twice')
  t.ok([...acked].every((u) => storedSet.has(u)), `all ${acked.size} acknowledged events are stored`)
  t.equal(stored.length, acked.size, 'and nothing else')
  const lost = server.stdout.filter((line) => line.includes('a spanning ClickHouse insert failed')).length
  t.ok(lost > 0, `spanning inserts were open when ClickHouse died (${lost} written again from the spool)`)
})
