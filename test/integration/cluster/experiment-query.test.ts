import t from 'tap'
import { CLUSTER, clusterUnavailableReason, startClickHouseCluster, type TestCluster } from '../../helpers/clickhouse-cluster.js'
import { querySuite } from '../experiments/query-suite.js'

// The same results over a Distributed table: the metric and exposure queries' subqueries and joins span both shards.
const skip = clusterUnavailableReason()
t.test('new-engine experiment results (POST …/query/) end to end on a two-shard ClickHouse cluster', { skip: skip ?? false }, async (t) => {
  let cluster: TestCluster
  t.before(async () => {
    cluster = await startClickHouseCluster(t)
  })
  querySuite(t, { env: () => ({ CLICKHOUSE_URL: cluster.url, CLICKHOUSE_DATABASE: 'skylark_query', CLICKHOUSE_CLUSTER: CLUSTER }) })
})
