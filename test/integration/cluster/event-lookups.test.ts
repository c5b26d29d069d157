import t from 'tap'
import { CLUSTER, clusterUnavailableReason, startClickHouseCluster, type TestCluster } from '../../helpers/clickhouse-cluster.js'
import { lookupsSuite } from '../events/lookups-suite.js'

// Values, actors and group reads aggregate over both shards' rows.
t.test('event lookups, values and group reads on a two-shard ClickHouse cluster', { skip: clusterUnavailableReason() ?? false }, async (t) => {
  let cluster: TestCluster
  t.before(async () => {
    cluster = await startClickHouseCluster(t)
  })
  lookupsSuite(t, { name: 'clickhouse cluster', env: () => ({ CLICKHOUSE_URL: cluster.url, CLICKHOUSE_DATABASE: 'skylark_test', CLICKHOUSE_CLUSTER: CLUSTER }) })
})
