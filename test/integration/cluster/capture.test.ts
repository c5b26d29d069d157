import t from 'tap'
import { clusterEnv, clusterUnavailableReason } from '../../helpers/clickhouse-cluster.js'
import { ingestionSuite } from '../ingestion/suite.js'

t.test('capture and batch on a two-shard ClickHouse cluster', { skip: clusterUnavailableReason() ?? false }, async (t) => {
  ingestionSuite(t, { name: 'clickhouse cluster', env: clusterEnv(t, 'skylark_test') })
})
