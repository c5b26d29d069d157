/**
 * Two skylark nodes in front of one ClickHouse cluster, sharing a copy of one management.db made by `skylark
 * management backup` (what architecture.md's "Several skylark nodes" says a second node needs): they start at
 * the same moment (both running the ON CLUSTER migration), each acknowledges events into its own spool, each
 * node's events API lists the events the other took, and a batch sent to both (an SDK retrying through another
 * node) is stored once, its copies collapsing on their shard.
 */
import t from 'tap'
import { join } from 'node:path'
import { randomUUID } from 'node:crypto'
import { clusterServerEnv, clusterUnavailableReason, startClickHouseCluster } from '../../helpers/clickhouse-cluster.js'
import { bootstrapDataDir, runCli, serverFor, type TestServer } from '../../helpers/server.js'
import { testDir } from '../../helpers/temp.js'
import { until } from '../../helpers/wait.js'
import { storedCounter } from './rounds.js'

t.test('two skylark nodes share one cluster: both start at once, each lists the other\'s events, a batch sent to both is stored once', { skip: clusterUnavailableReason() ?? false }, async (t) => {
  const cluster = await startClickHouseCluster(t)
  const dirs = [testDir(t), testDir(t)]
  bootstrapDataDir(dirs[0])
  const copied = await runCli(['management', 'backup', '--to', join(dirs[1], 'management.db'), '--data-dir', dirs[0]])
  t.equal(copied.code, 0, copied.stderr)
  const env = clusterServerEnv(cluster, 'nodes')
  const nodes = await Promise.all(dirs.map((dataDir) => serverFor(t, { dataDir, env })))
  const [a, b] = nodes
  t.equal(a.boot.project_api_key, b.boot.project_api_key, 'one project, one key, on both nodes')

  const batch = (node: string, n: number) => Array.from({ length: n }, (_, i) => ({ event: 'nodes', uuid: randomUUID(), properties: { distinct_id: `${node}-user-${i % 10}`, node } }))
  const post = async (node: TestServer, events: ReturnType<typeof batch>) => {
    const res = await node.request('POST', '/batch/', { body: { api_key: node.boot.project_api_key, batch: events } })
    t.equal(res.status, 200, `${events.length} events acknowledged`)
  }
  const fromA = batch('a', 30)
  const fromB = batch('b', 30)
  const retried = batch('retried', 20)
  await Promise.all([post(a, fromA), post(b, fromB), post(a, retried), post(b, retried)])
  const all = new Set([...fromA, ...fromB, ...retried].map((e) => e.uuid))

  const stored = storedCounter(cluster, 'nodes', 'nodes')
  await until('both nodes\' events stored', async () => (await stored()).uuids === all.size, 60_000)
  t.same(await stored(), { n: all.size, uuids: all.size }, 'each event once, the batch sent to both nodes too')
  for (const [name, node] of [['a', a], ['b', b]] as const) {
    const res = await node.api('GET', `/api/projects/${node.boot.project_id}/events/?event=nodes&limit=1000`)
    t.equal(res.status, 200)
    const uuids: string[] = res.body.results.map((e: { uuid: string }) => e.uuid)
    t.equal(uuids.length, all.size, `node ${name} lists each event once`)
    t.same(new Set(uuids), all, `node ${name} lists every node's events`)
  }
})
