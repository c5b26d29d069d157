import t from 'tap'
import { clusterEnv, clusterUnavailableReason } from '../../helpers/clickhouse-cluster.js'
import { resultsSuite } from '../experiments/suite.js'

// The legacy results' funnel and trend queries over a Distributed table.
t.test('experiment results end to end on a two-shard ClickHouse cluster', { skip: clusterUnavailableReason() ?? false }, async (t) => {
  resultsSuite(t, { env: clusterEnv(t, 'skylark_exp') })
})
