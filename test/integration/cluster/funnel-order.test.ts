import t from 'tap'
import { clusterEnv, clusterUnavailableReason } from '../../helpers/clickhouse-cluster.js'
import { funnelOrderSuite } from '../experiments/funnel-order-suite.js'

// Each funnel order's walk over a person's events, read through the Distributed table from the persons' shards.
t.test('funnel metrics of each order (POST …/query/) end to end on a two-shard ClickHouse cluster', { skip: clusterUnavailableReason() ?? false }, async (t) => {
  funnelOrderSuite(t, { env: clusterEnv(t, 'skylark_funnel_order') })
})
