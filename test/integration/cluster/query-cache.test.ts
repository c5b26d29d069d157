import t from 'tap'
import { clusterServerEnv, clusterUnavailableReason, startClickHouseCluster } from '../../helpers/clickhouse-cluster.js'
import { queryCacheSuite } from '../experiments/query-cache-suite.js'

// The query cache's computations read through the Distributed table; cancelling one cancels its reads on both shards.
t.test('the query cache and its refresh modes on a two-shard ClickHouse cluster', { skip: clusterUnavailableReason() ?? false }, async (t) => {
  const cluster = await startClickHouseCluster(t)
  await queryCacheSuite(t, { env: () => clusterServerEnv(cluster, 'skylark_query_cache') })
})
