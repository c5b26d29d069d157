import t from 'tap'
import { clusterEnv, clusterUnavailableReason } from '../../helpers/clickhouse-cluster.js'
import { usageDashboardSuite } from '../flags/usage-dashboard.js'

// Calls and unique users per variant per day, counted over both shards' rows.
t.test('flag usage dashboards on a two-shard ClickHouse cluster', { skip: clusterUnavailableReason() ?? false }, async (t) => {
  usageDashboardSuite(t, clusterEnv(t, 'skylark_dashboards'))
})
