export const CLUSTER: string

export interface ClickHouseCluster {
  /** The first shard's first replica's HTTP endpoint, which skylark is given. */
  readonly url: string
  /** Each server's HTTP endpoint, shard by shard and each shard's replicas in order. */
  readonly servers: readonly string[]
  /** Each server's clickhouse-server process. */
  readonly pids: readonly number[]
  /** A query on one server (the first by default); the answer's text. */
  query(sql: string, server?: number): Promise<string>
  /** Stops one server cleanly (an outage), and starts it again. */
  stopServer(server: number): Promise<void>
  startServer(server: number): Promise<void>
  destroy(): Promise<void>
}

export function clusterMissing(): string | null
/** `replicas[i]`: how many replicas shard i+1 has (two shards of one by default); `settings` go into every server's default profile. */
export function startClickHouseCluster(maxMemoryBytes: number, replicas?: readonly number[], settings?: Readonly<Record<string, string | number>>): Promise<ClickHouseCluster>
