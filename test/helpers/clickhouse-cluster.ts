/**
 * A real ClickHouse cluster for tests (scripts/clickhouse-cluster.mjs: ZooKeeper and two shards), removed when the
 * test ends. Outside CI the tests that need it are skipped when ZooKeeper or ClickHouse is missing; in CI that is
 * a failure.
 */
import { CLUSTER, clusterMissing, startClickHouseCluster as start, type ClickHouseCluster } from '../../scripts/clickhouse-cluster.mjs'

export { CLUSTER }
export type TestCluster = ClickHouseCluster

/** Why cluster tests can't run here, or null when they can. Throws in CI: skipping is not allowed there. */
export function clusterUnavailableReason(): string | null {
  const missing = clusterMissing()
  if (missing === null) return null
  if (process.env.CI) throw new Error(`${missing} is not installed, and CI must run the ClickHouse cluster tests`)
  return `${missing} is not installed (apt-get install clickhouse-server zookeeper)`
}

/** `replicas[i]`: how many replicas shard i+1 has (two shards of one by default); `settings` go into the servers' default profile. */
export async function startClickHouseCluster(
  t: { teardown(fn: () => unknown): void },
  replicas?: readonly number[],
  settings?: Readonly<Record<string, string | number>>,
): Promise<TestCluster> {
  const cluster = await start(1_500_000_000, replicas, settings)
  t.teardown(() => cluster.destroy())
  return cluster
}

/** A cluster started before `t`'s subtests, and the environment a server under them needs to use `database` on it. */
export function clusterEnv(t: { before(fn: () => unknown): void; teardown(fn: () => unknown): void }, database: string): () => Record<string, string> {
  let cluster: TestCluster
  t.before(async () => {
    cluster = await startClickHouseCluster(t)
  })
  return () => clusterServerEnv(cluster, database)
}

/** The environment a server needs to store its events in `database` on the cluster. */
export function clusterServerEnv(cluster: TestCluster, database: string): Record<string, string> {
  return { CLICKHOUSE_URL: cluster.url, CLICKHOUSE_DATABASE: database, CLICKHOUSE_CLUSTER: CLUSTER }
}
