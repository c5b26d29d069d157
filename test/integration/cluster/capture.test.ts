import t from 'tap'
import { CLUSTER, clusterUnavailableReason, startClickHouseCluster, type TestCluster } from '../../helpers/clickhouse-cluster.js'
import { ingestionSuite } from '../ingestion/suite.js'

const skip = clusterUnavailableReason()
t.test('capture and batch on a two-shard ClickHouse cluster', { skip: skip ?? false }, async (t) => {
  let cluster: TestCluster
  t.before(async () => {
    cluster = await startClickHouseCluster(t)
  })
  ingestionSuite(t, { name: 'clickhouse cluster', env: () => ({ CLICKHOUSE_URL: cluster.url, CLICKHOUSE_DATABASE: 'skylark_test', CLICKHOUSE_CLUSTER: CLUSTER }) })
})
