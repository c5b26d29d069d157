/**
 * One replica of a two-replica shard goes away while events arrive. By default the Distributed insert and the
 * reads fail over to the other replica, so nothing waits and nothing answers 503, and the replica that comes back
 * fetches what it missed. With `insert_quorum = 2` in the ClickHouse profile (what architecture.md advises where
 * a replica's loss must not lose rows) inserts wait for the outage to end, the events waiting in the spool. Either
 * way every acknowledged event is then stored exactly once, on both replicas of its shard.
 */
import t, { type Test } from 'tap'
import { clusterServerEnv, clusterUnavailableReason, startClickHouseCluster, type TestCluster } from '../../helpers/clickhouse-cluster.js'
import { serverFor } from '../../helpers/server.js'
import { until } from '../../helpers/wait.js'
import { roundSender, sinkUp, storedCounter } from './rounds.js'

const skip = clusterUnavailableReason() ?? false

const start = (t: Test, cluster: TestCluster, db: string) =>
  serverFor(t, { env: { ...clusterServerEnv(cluster, db), SINK_RETRY_MAX_MS: '500' } })

t.test('a replica outage neither stops inserts and reads nor loses or repeats an acknowledged event', { skip }, async (t) => {
  // Servers: 0 is shard 1 (skylark's), 1 and 2 the two replicas of shard 2.
  const cluster = await startClickHouseCluster(t, [1, 2])
  const server = await start(t, cluster, 'replicas')
  const count = storedCounter(cluster, 'replicas', 'rounds')
  const { acked, send } = roundSender(t, server, 'rounds')
  const listed = async () => {
    const res = await server.api('GET', `/api/projects/${server.boot.project_id}/events/?event=rounds&limit=1000`)
    t.equal(res.status, 200, 'the events API answers')
    return new Set(res.body.results.map((e: { uuid: string }) => e.uuid))
  }

  await send(0)
  await until('the first round stored', async () => (await count('events')).n === 40)
  const shardOne = (await count('events_local', 0)).n
  t.ok(shardOne > 0 && shardOne < 40, `shard 1 holds part of the round (${shardOne} of 40)`)
  // The Distributed table wrote shard 2's rows to either of its replicas, and replication copies them to the other.
  for (const at of [1, 2]) await until(`replica ${at} of shard 2 to hold the rest`, async () => (await count('events_local', at)).n === 40 - shardOne)

  await cluster.stopServer(1)
  for (let round = 1; round <= 5; round++) await send(round)
  await until('every acknowledged event stored while the replica is down', async () => (await count('events')).n === acked.size, 60_000)
  t.same(await listed(), acked, 'the events API lists them while the replica is down')
  t.ok(await sinkUp(server), 'the sink never failed')

  await cluster.startServer(1)
  const second = await count('events_local', 2)
  await until('the restarted replica to fetch what it missed', async () => (await count('events_local', 1)).n === second.n, 60_000)
  t.same(await count('events_local', 1), second, 'both replicas of shard 2 hold the same events, each once')
  const first = await count('events_local', 0)
  t.same({ n: first.n + second.n, uuids: first.uuids + second.uuids }, { n: acked.size, uuids: acked.size }, 'each acknowledged event once, on one shard')
  t.same(await listed(), acked, 'the events API lists exactly the acknowledged events')
})

t.test('with insert_quorum = 2, a replica outage holds inserts back until it ends, and loses or repeats nothing', { skip }, async (t) => {
  // One shard of two replicas: a quorum of two needs both (a shard of one replica would refuse every insert).
  const cluster = await startClickHouseCluster(t, [2], { insert_quorum: 2 })
  const server = await start(t, cluster, 'quorum')
  const count = storedCounter(cluster, 'quorum', 'rounds')
  const { acked, send } = roundSender(t, server, 'rounds')

  await send(0)
  await until('the first round on both replicas', async () => (await count('events_local', 1)).n === 40)

  await cluster.stopServer(1)
  for (let round = 1; round <= 5; round++) await send(round)
  await until('the sink to report the refused inserts', async () => !(await sinkUp(server)))
  t.same(await count('events_local', 0), { n: 40, uuids: 40 }, 'the live replica took no row without its quorum')

  await cluster.startServer(1)
  await until('every acknowledged event stored', async () => (await count('events_local', 0)).n === acked.size, 60_000)
  await until('on both replicas', async () => (await count('events_local', 1)).n === acked.size)
  for (const at of [0, 1]) t.same(await count('events_local', at), { n: acked.size, uuids: acked.size }, `replica ${at + 1} holds each acknowledged event once`)
  await until('the sink up again', () => sinkUp(server))
})
