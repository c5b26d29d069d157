export const CLUSTER: string

export interface ClickHouseCluster {
  /** The first shard's HTTP endpoint, which skylark is given. */
  readonly url: string
  /** Each shard's HTTP endpoint. */
  readonly shards: readonly string[]
  /** Each shard's clickhouse-server process. */
  readonly pids: readonly number[]
  /** A query on one shard's server (the first by default); the answer's text. */
  query(sql: string, shard?: number): Promise<string>
  /** Stops one shard's server cleanly (an outage), and starts it again. */
  stopShard(shard: number): Promise<void>
  startShard(shard: number): Promise<void>
  destroy(): Promise<void>
}

export function clusterMissing(): string | null
export function startClickHouseCluster(maxMemoryBytes: number): Promise<ClickHouseCluster>
