import t from 'tap'
import { clusterEnv, clusterUnavailableReason } from '../../helpers/clickhouse-cluster.js'
import { eventsReadSuite } from '../events/suite.js'

// Filters, order and pages over rows both shards hold: each page is merged from both shards' sorted rows.
t.test('the events list on a two-shard ClickHouse cluster', { skip: clusterUnavailableReason() ?? false }, async (t) => {
  eventsReadSuite(t, { name: 'clickhouse cluster', env: clusterEnv(t, 'skylark_test') })
})
