import t from 'tap'
import { clusterEnv, clusterUnavailableReason } from '../../helpers/clickhouse-cluster.js'
import { lookupsSuite } from '../events/lookups-suite.js'

// Values, actors and group reads aggregate over both shards' rows.
t.test('event lookups, values and group reads on a two-shard ClickHouse cluster', { skip: clusterUnavailableReason() ?? false }, async (t) => {
  lookupsSuite(t, { name: 'clickhouse cluster', env: clusterEnv(t, 'skylark_test') })
})
