import t from 'tap'
import { clusterEnv, clusterUnavailableReason } from '../../helpers/clickhouse-cluster.js'
import { serverFor } from '../../helpers/server.js'
import { logsScenario } from '../sdk/logs-scenario.js'
import { metricsScenario } from '../sdk/metrics-scenario.js'

// The logs and metrics tables in PostHog's cluster layout (`*_local` on each shard, a Distributed table over
// them), made at the first call: what the SDKs send is read back over both shards.
t.test('OTLP logs and metrics on a two-shard ClickHouse cluster', { skip: clusterUnavailableReason() ?? false }, async (t) => {
  const env = clusterEnv(t, 'skylark_otlp')
  t.test('logs', async (t) => logsScenario(t, { store: 'clickhouse', server: await serverFor(t, { env: env() }) }))
  t.test('metrics', async (t) => metricsScenario(t, { store: 'clickhouse', server: await serverFor(t, { env: env() }) }))
})
