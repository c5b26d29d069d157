/**
 * A ClickHouse table an OTLP store keeps (logs, metrics): made at the first call (IF NOT EXISTS), not by the event
 * store's migrations, so it never waits for the consumer thread's; made again at the next call after a failed
 * attempt. Every 18.16 takes it: `columns` use Int64 microseconds and key/value arrays for maps. Under a cluster it
 * is PostHog's layout as for events: `<name>_local` on every shard and `<name>` a Distributed table over them.
 */
import type { ClickHouseClient } from '@clickhouse/client'
import type { ClickHouseConnection } from '../config/index.js'
import { createClickHouseClient, identifier } from './events/clickhouse-schema.js'

export class ClickHouseTable {
  readonly #client: ClickHouseClient
  /** The database, checked as an identifier: queries name `${db}.<table>`. */
  readonly db: string
  readonly #ddl: string[]
  readonly #cluster: string | null
  #ready: Promise<void> | null = null

  constructor(options: ClickHouseConnection, table: { name: string; columns: string; layout: string }) {
    this.db = identifier(options.database)
    this.#cluster = options.cluster ? identifier(options.cluster) : null
    this.#client = createClickHouseClient(options, 'default')
    const { name, columns, layout } = table
    const [db, cluster] = [this.db, this.#cluster]
    this.#ddl =
      cluster === null
        ? [`CREATE TABLE IF NOT EXISTS ${db}.${name} ${columns} ENGINE = MergeTree() ${layout}`]
        : [
            `CREATE TABLE IF NOT EXISTS ${db}.${name}_local ON CLUSTER ${cluster} ${columns}
             ENGINE = ReplicatedMergeTree('/clickhouse/tables/{shard}/${db}.${name}_local', '{replica}') ${layout}`,
            `CREATE TABLE IF NOT EXISTS ${db}.${name} ON CLUSTER ${cluster} AS ${db}.${name}_local ENGINE = Distributed(${cluster}, ${db}, ${name}_local, rand())`,
          ]
    this.table = `${db}.${name}`
  }

  /** `db.name`, for queries. */
  readonly table: string

  #made(): Promise<void> {
    this.#ready ??= (async () => {
      await this.#client.command({ query: `CREATE DATABASE IF NOT EXISTS ${this.db}${this.#cluster ? ` ON CLUSTER ${this.#cluster}` : ''}` })
      for (const query of this.#ddl) await this.#client.command({ query })
    })().catch((error: unknown) => {
      this.#ready = null
      throw error
    })
    return this.#ready
  }

  async select<T>(query: string): Promise<T[]> {
    await this.#made()
    const result = await this.#client.query({ query, format: 'JSONEachRow' })
    return (await result.json()) as T[]
  }

  /** Resolves once ClickHouse has the rows (with a cluster, every shard). */
  async insert(values: object[]): Promise<void> {
    await this.#made()
    if (values.length > 0) await this.#client.insert({ table: this.table, values, format: 'JSONEachRow' })
  }

  close(): Promise<void> {
    return this.#client.close()
  }
}

/** A map stored as two arrays, read back. */
export function zipMap(keys: string[], values: string[]): Record<string, string> {
  const out: Record<string, string> = Object.create(null)
  keys.forEach((k, i) => (out[k] = values[i] ?? ''))
  return out
}

/** A row's two attribute maps as the four arrays they are stored as. */
export function attributeArrays(attributes: Record<string, string>, resource: Record<string, string>) {
  return {
    resource_keys: Object.keys(resource),
    resource_values: Object.values(resource),
    attribute_keys: Object.keys(attributes),
    attribute_values: Object.values(attributes),
  }
}
