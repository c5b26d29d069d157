import t from 'tap'
import { clusterEnv, clusterUnavailableReason } from '../../helpers/clickhouse-cluster.js'
import { deletionCrashSuite, personWritesSuite } from '../persons/writes-suite.js'

// A person's deletion with delete_events mutates every shard's events_local (ALTER … ON CLUSTER), also when
// it is carried out after a kill -9.
t.test('persons API writes on a two-shard ClickHouse cluster', { skip: clusterUnavailableReason() ?? false }, async (t) => {
  const setup = { name: 'clickhouse cluster', env: clusterEnv(t, 'skylark_test') }
  personWritesSuite(t, setup)
  deletionCrashSuite(t, setup)
})
