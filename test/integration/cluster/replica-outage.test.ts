/**
 * One replica of a two-replica shard goes away while events arrive: the Distributed insert and the reads fail
 * over to the other replica, so nothing waits and nothing answers 503, and once the replica is back it fetches
 * what it missed. Every acknowledged event is then stored exactly once, on both replicas of its shard.
 */
import t from 'tap'
import { CLUSTER, clusterUnavailableReason, startClickHouseCluster } from '../../helpers/clickhouse-cluster.js'
import { serverFor } from '../../helpers/server.js'
import { until } from '../../helpers/wait.js'
import { roundSender } from './rounds.js'

t.test('a replica outage neither stops inserts and reads nor loses or repeats an acknowledged event', { skip: clusterUnavailableReason() ?? false }, async (t) => {
  // Servers: 0 is shard 1 (skylark's), 1 and 2 the two replicas of shard 2.
  const cluster = await startClickHouseCluster(t, [1, 2])
  const server = await serverFor(t, { env: { CLICKHOUSE_URL: cluster.url, CLICKHOUSE_DATABASE: 'replicas', CLICKHOUSE_CLUSTER: CLUSTER, SINK_RETRY_MAX_MS: '500' } })
  const { acked, send } = roundSender(t, server, 'replicas')
  const count = async (table: string, at = 0) => {
    const [n, uuids] = (await cluster.query(`SELECT count(), uniqExact(uuid) FROM replicas.${table} FINAL WHERE event = 'replicas' FORMAT TSV`, at)).trim().split('\t').map(Number)
    return { n, uuids }
  }
  const listed = async () => {
    const res = await server.api('GET', `/api/projects/${server.boot.project_id}/events/?event=replicas&limit=1000`)
    t.equal(res.status, 200, 'the events API answers')
    return new Set(res.body.results.map((e: { uuid: string }) => e.uuid))
  }

  await send(0)
  await until('the first round stored', async () => (await count('events')).n === 40)
  const shardTwo = (await count('events_local', 1)).n
  t.ok(shardTwo > 0 && shardTwo < 40, `shard 2 holds part of the round (${shardTwo} of 40)`)
  await until('the second replica to have fetched them', async () => (await count('events_local', 2)).n === shardTwo)

  await cluster.stopServer(1)
  for (let round = 1; round <= 5; round++) await send(round)
  await until('every acknowledged event stored while the replica is down', async () => (await count('events')).n === acked.size, 60_000)
  t.same(await listed(), acked, 'the events API lists them while the replica is down')
  t.match((await server.request('GET', '/metrics')).text, /^skylark_sink_up 1$/m, 'the sink never failed')

  await cluster.startServer(1)
  const second = await count('events_local', 2)
  await until('the restarted replica to fetch what it missed', async () => (await count('events_local', 1)).n === second.n, 60_000)
  t.same(await count('events_local', 1), second, 'both replicas of shard 2 hold the same events, each once')
  const first = await count('events_local', 0)
  t.same({ n: first.n + second.n, uuids: first.uuids + second.uuids }, { n: acked.size, uuids: acked.size }, 'each acknowledged event once, on one shard')
  t.same(await listed(), acked, 'the events API lists exactly the acknowledged events')
})
