import t from 'tap'
import { clusterEnv, clusterUnavailableReason } from '../../helpers/clickhouse-cluster.js'
import { actionResultsSuite } from '../experiments/action-suite.js'

// An action's steps matched over the Distributed table, each person's events read from their own shard.
t.test('experiment results by action on a two-shard ClickHouse cluster', { skip: clusterUnavailableReason() ?? false }, async (t) => {
  actionResultsSuite(t, clusterEnv(t, 'skylark_actions'))
})
