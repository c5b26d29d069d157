import t from 'tap'
import { clusterEnv, clusterUnavailableReason } from '../../helpers/clickhouse-cluster.js'
import { querySuite } from '../experiments/query-suite.js'

// The same results over a Distributed table: the metric and exposure queries' subqueries and joins span both shards.
t.test('new-engine experiment results (POST …/query/) end to end on a two-shard ClickHouse cluster', { skip: clusterUnavailableReason() ?? false }, async (t) => {
  querySuite(t, { env: clusterEnv(t, 'skylark_query') })
})
