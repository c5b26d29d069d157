/**
 * kill -9 under /batch/ load on the cluster: every acknowledged event is read back through the Distributed table
 * exactly once. A kill rarely lands between an INSERT and its checkpoint, so that a replay reaches the shard of
 * its first copy (for FINAL to collapse them) is shown by test/unit/storage/clickhouse-cluster.test.ts and
 * two-nodes.test.ts.
 */
import t from 'tap'
import { clusterServerEnv, clusterUnavailableReason, startClickHouseCluster } from '../../helpers/clickhouse-cluster.js'
import { clickhouseCrashUuids, crashRun } from '../ingestion/crash.js'

t.test('kill -9 under /batch/ load loses and repeats no acknowledged event on a two-shard cluster', { skip: clusterUnavailableReason() ?? false }, async (t) => {
  const cluster = await startClickHouseCluster(t)
  const storedUuids = clickhouseCrashUuids(cluster.query, 'crash')
  await crashRun(t, { kills: 3, env: clusterServerEnv(cluster, 'crash'), storedUuids })
})
