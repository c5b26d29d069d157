/**
 * ClickHouse connection and schema. The events table follows PostHog's: ReplacingMergeTree over
 * `(team_id, toDate(timestamp), event, cityHash64(distinct_id), cityHash64(uuid))` (plain `uuid` on servers whose
 * cityHash64 does not take UUIDs), so an event replayed
 * after a crash collapses into the stored one at merge time, and queries read with FINAL.
 *
 * Debian's clickhouse-server is 18.16, and current servers must work too, so features are detected from
 * `version()`: DateTime64 (20.5+, with toUnixTimestamp64Milli) keeps sub-second timestamps; older servers get DateTime plus a
 * `timestamp_ms` column. Query parameters (19.11+) are not used: literals are quoted by `quote()`.
 *
 * With a cluster (CLICKHOUSE_CLUSTER) the layout is PostHog's: `events_local` on every shard, a
 * ReplicatedReplacingMergeTree of the same columns and order, and `events` a Distributed table over them sharded by
 * `sipHash64(distinct_id)`, so an event and its replays land on one shard, where FINAL collapses them. The DDL runs
 * ON CLUSTER (ZooKeeper's distributed DDL queue). Every other module keeps reading and inserting `events`: the
 * client's settings make inserts wait until each shard has its rows (the sink's commit frees the spool) and turn
 * subqueries over `events` into GLOBAL ones, which a Distributed table needs and which stay right when one
 * person's distinct ids live on several shards.
 */
import type { ClickHouseClient } from '@clickhouse/client'
import { requireOnUse } from '../../common/on-use.js'
import type { ClickHouseConnection } from '../../config/index.js'

/** The connection config gives (`cluster`: a cluster of the server's `remote_servers`, or null for one server's table). */
export type ClickHouseOptions = ClickHouseConnection

export interface ServerFeatures {
  version: string
  dateTime64: boolean
  /** JSONExtract* functions (19.3+); older servers only have visitParamExtract*. */
  jsonExtract: boolean
}

export function createClickHouseClient(options: ClickHouseOptions, database?: string): ClickHouseClient {
  const { createClient, ClickHouseLogLevel } = requireOnUse('@clickhouse/client') as typeof import('@clickhouse/client')
  return createClient({
    url: options.url,
    username: options.user,
    password: options.password,
    database: database ?? options.database,
    request_timeout: 60_000,
    // The client logs every failed request itself; skylark logs and counts failures where it handles them.
    log: { level: ClickHouseLogLevel.OFF },
    compression: { request: false, response: false },
    clickhouse_settings: options.cluster ? { insert_distributed_sync: 1, distributed_product_mode: 'global' } : {},
  })
}

/** What `ALTER TABLE` names: under a cluster the shards' own tables, ON CLUSTER (a Distributed table takes no mutation). */
export function alterTarget(options: ClickHouseOptions): string {
  const db = identifier(options.database)
  return options.cluster ? `${db}.events_local ON CLUSTER ${identifier(options.cluster)}` : `${db}.events`
}

/** A ClickHouse string literal; backslashes and quotes escaped, so any text is safe inside SQL. */
export function quote(value: string): string {
  return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`
}

/** A pattern that turns on case folding inline: `(?i)`, `(?mi)`, `(?i:…)`. */
const FOLDS_CASE = /\(\?[imsU-]*i/

/**
 * ClickHouse's `match(subject, pattern)` (re2's search) for a pattern of the user's. One that folds case inline is
 * made one alternative beside one that never matches: 18.16 first looks for a literal it finds in the pattern,
 * case and all (`match('Sign up', '(?i)sign')` is 0 there), and skips that look for a pattern of alternatives.
 */
export function matchSql(subject: string, pattern: string): string {
  return `match(${subject}, ${quote(searchPattern(pattern))})`
}

/** A pattern of the user's as match and extract read it alike on 18.16 and current servers (matchSql). */
export function searchPattern(pattern: string): string {
  return FOLDS_CASE.test(pattern) ? `(?:${pattern})|[^\\s\\S]` : pattern
}

/** An identifier such as a database name: only plain names are accepted. */
export function identifier(name: string): string {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new Error(`invalid ClickHouse identifier: ${name}`)
  return name
}

export async function detectFeatures(client: ClickHouseClient): Promise<ServerFeatures> {
  const result = await client.query({ query: 'SELECT version() AS v', format: 'JSONEachRow' })
  const [{ v }] = (await result.json()) as Array<{ v: string }>
  const [major, minor] = v.split('.').map(Number)
  const atLeast = (ma: number, mi: number) => major > ma || (major === ma && minor >= mi)
  return { version: v, dateTime64: atLeast(20, 5), jsonExtract: atLeast(19, 3) }
}

interface ChMigration {
  version: number
  name: string
  sql: (db: string, features: ServerFeatures, cluster: string | null) => string[]
}

const MIGRATIONS: readonly ChMigration[] = [
  {
    version: 1,
    name: 'events',
    // 1,024 rows a granule, not 8,192: ClickHouse reads whole granules, a stored row is ≈2.5 KB, and 18.16
    // cannot bound granules by bytes (docs/architecture.md, "1,024-row granules"). Fixed when a table is
    // created: databases made before keep 8,192.
    sql: (db, f, cluster) => {
      const columns = `(
      uuid UUID,
      event String,
      properties String,
      timestamp ${f.dateTime64 ? "DateTime64(6, 'UTC')" : 'DateTime'},
      ${f.dateTime64 ? '' : 'timestamp_ms Int64,'}
      team_id Int64,
      distinct_id String,
      elements_chain String,
      created_at ${f.dateTime64 ? "DateTime64(6, 'UTC')" : 'DateTime'},
      person_id UUID,
      \`$group_0\` String,
      \`$group_1\` String,
      \`$group_2\` String,
      \`$group_3\` String,
      \`$group_4\` String,
      _timestamp DateTime
    )`
      const layout = `PARTITION BY toYYYYMM(timestamp)
    ORDER BY (team_id, toDate(timestamp), event, cityHash64(distinct_id), ${f.dateTime64 ? 'cityHash64(uuid)' : 'uuid'})
    SETTINGS index_granularity = 1024`
      if (cluster === null) return [`CREATE TABLE IF NOT EXISTS ${db}.events ${columns} ENGINE = ReplacingMergeTree(_timestamp) ${layout}`]
      // {shard} and {replica} are each server's macros; the path names the database so that several skylark
      // databases can share one ZooKeeper.
      return [
        `CREATE TABLE IF NOT EXISTS ${db}.events_local ON CLUSTER ${cluster} ${columns}
    ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/${db}.events_local', '{replica}', _timestamp) ${layout}`,
        `CREATE TABLE IF NOT EXISTS ${db}.events ON CLUSTER ${cluster} AS ${db}.events_local
    ENGINE = Distributed(${cluster}, ${db}, events_local, sipHash64(distinct_id))`,
      ]
    },
  },
]

/**
 * Creates the database and applies pending migrations, recorded in `schema_migrations` on the server skylark
 * talks to. Under a cluster every migration's DDL runs at each start, recorded or not: it is idempotent (IF NOT
 * EXISTS, ON CLUSTER), so a shard added to the cluster gets its tables when skylark next starts, and another skylark
 * on another server of the cluster applies it again harmlessly. Refuses a database whose `events` table was made
 * for the other layout.
 */
export async function migrateClickHouse(options: ClickHouseOptions): Promise<ServerFeatures> {
  const db = identifier(options.database)
  const cluster = options.cluster ? identifier(options.cluster) : null
  const admin = createClickHouseClient(options, 'default')
  try {
    await admin.command({ query: `CREATE DATABASE IF NOT EXISTS ${db}${cluster ? ` ON CLUSTER ${cluster}` : ''}` })
    const features = await detectFeatures(admin)
    await admin.command({
      query: `CREATE TABLE IF NOT EXISTS ${db}.schema_migrations (version UInt32, name String, applied_at DateTime) ENGINE = TinyLog`,
    })
    const applied = await admin.query({ query: `SELECT version FROM ${db}.schema_migrations`, format: 'JSONEachRow' })
    const done = new Set(((await applied.json()) as Array<{ version: number }>).map((r) => Number(r.version)))
    for (const m of MIGRATIONS) {
      if (done.has(m.version) && cluster === null) continue
      for (const query of m.sql(db, features, cluster)) await admin.command({ query })
      if (done.has(m.version)) continue
      await admin.command({
        query: `INSERT INTO ${db}.schema_migrations (version, name, applied_at) VALUES (${m.version}, ${quote(m.name)}, now())`,
      })
    }
    const engine = await admin.query({ query: `SELECT engine FROM system.tables WHERE database = ${quote(db)} AND name = 'events'`, format: 'JSONEachRow' })
    const [{ engine: found }] = (await engine.json()) as Array<{ engine: string }>
    if ((found === 'Distributed') !== (cluster !== null)) {
      throw new Error(
        cluster
          ? `${db}.events is a ${found} table, made without CLICKHOUSE_CLUSTER: a cluster needs a database of its own (another CLICKHOUSE_DATABASE)`
          : `${db}.events is a Distributed table, made with CLICKHOUSE_CLUSTER: set it again to use this database`,
      )
    }
    return features
  } finally {
    await admin.close()
  }
}
