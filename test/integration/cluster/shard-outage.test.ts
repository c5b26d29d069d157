/**
 * One shard of the cluster goes away while events arrive: the Distributed insert fails (it waits for every
 * shard), so do reads (503), capture keeps acknowledging into the spool, and once the shard is back every
 * acknowledged event is stored exactly once.
 */
import t from 'tap'
import { clusterServerEnv, clusterUnavailableReason, startClickHouseCluster } from '../../helpers/clickhouse-cluster.js'
import { serverFor } from '../../helpers/server.js'
import { until } from '../../helpers/wait.js'
import { roundSender, sinkUp, storedCounter } from './rounds.js'

t.test('a ClickHouse shard outage loses and repeats no acknowledged event', { skip: clusterUnavailableReason() ?? false }, async (t) => {
  const cluster = await startClickHouseCluster(t)
  const server = await serverFor(t, { env: { ...clusterServerEnv(cluster, 'outage'), SINK_RETRY_MAX_MS: '500' } })
  const { acked, send } = roundSender(t, server, 'outage')
  const stored = storedCounter(cluster, 'outage', 'outage')

  await send(0)
  await until('the first round stored', async () => (await stored()).n === 40)

  await cluster.stopServer(1)
  for (let round = 1; round <= 5; round++) await send(round)
  await until('the sink to report the failed inserts', async () => !(await sinkUp(server)))
  // Reads over the Distributed table need every shard too.
  t.match(await server.api('GET', `/api/projects/${server.boot.project_id}/events/?event=outage`), { status: 503, body: { code: 'service_unavailable' } })

  await cluster.startServer(1)
  await until('every acknowledged event stored', async () => (await stored()).n === acked.size, 60_000)
  t.same(await stored(), { n: acked.size, uuids: acked.size }, 'each once')
  const listed = await server.api('GET', `/api/projects/${server.boot.project_id}/events/?event=outage&limit=1000`)
  t.same(new Set(listed.body.results.map((e: { uuid: string }) => e.uuid)), acked, 'the events API lists exactly the acknowledged events')
  await until('the sink up again', () => sinkUp(server))
})
