/**
 * Logs in ClickHouse's `logs` table, a MergeTree ordered by (team_id, timestamp, uuid). Every server from 18.16
 * on takes it: times are microseconds in Int64 (no DateTime64 there) and each attribute map is two arrays of
 * keys and values (no Map type there), read with `indexOf` and ARRAY JOIN. Under a cluster it is PostHog's
 * layout as for events: `logs_local` on every shard and `logs` a Distributed table over them.
 *
 * The table is made at the first call (src/storage/clickhouse-table.ts).
 */
import type { ClickHouseConnection } from '../config/index.js'
import { attributeArrays, ClickHouseTable, zipMap } from '../storage/clickhouse-table.js'
import { matchSql, quote } from '../storage/events/clickhouse-schema.js'
import { logColumn, rankKeys } from './columns.js'
import type { LogAttributesQuery, LogFilter, LogRow, LogSelection, LogsQuery, LogStore, LogValuesQuery, SparklineBucket, SparklineQuery } from './types.js'

const COLUMNS = `(
  uuid String,
  team_id Int64,
  timestamp Int64,
  observed_timestamp Int64,
  trace_id String,
  span_id String,
  trace_flags UInt32,
  body String,
  severity_text String,
  severity_number Int32,
  service_name String,
  resource_keys Array(String),
  resource_values Array(String),
  resource_fingerprint String,
  instrumentation_scope String,
  event_name String,
  attribute_keys Array(String),
  attribute_values Array(String)
)`
const LAYOUT = 'PARTITION BY toYYYYMM(toDateTime(intDiv(timestamp, 1000000))) ORDER BY (team_id, timestamp, uuid)'

function subject(f: LogFilter): { value: string; present: string } {
  if (f.on === 'column') {
    const column = logColumn(f.key)!
    return { value: column, present: `${column} != ''` }
  }
  const [keys, values] = f.on === 'resource' ? ['resource_keys', 'resource_values'] : ['attribute_keys', 'attribute_values']
  return { value: `${values}[indexOf(${keys}, ${quote(f.key)})]`, present: `has(${keys}, ${quote(f.key)})` }
}

function filterSql(f: LogFilter): string {
  const { value, present } = subject(f)
  const list = f.values.map(quote).join(', ')
  switch (f.operator) {
    case 'is_set':
      return present
    case 'is_not_set':
      return `NOT (${present})`
    case 'exact':
      return `(${present} AND ${value} IN (${list}))`
    case 'is_not':
      return `NOT (${present} AND ${value} IN (${list}))`
    case 'icontains':
      return `(${present} AND positionCaseInsensitiveUTF8(${value}, ${quote(f.values[0]!)}) > 0)`
    case 'not_icontains':
      return `NOT (${present} AND positionCaseInsensitiveUTF8(${value}, ${quote(f.values[0]!)}) > 0)`
    case 'regex':
      return `(${present} AND ${matchSql(value, f.values[0]!)})`
    case 'not_regex':
      return `NOT (${present} AND ${matchSql(value, f.values[0]!)})`
  }
}

function where(q: LogSelection): string {
  const parts = [`team_id = ${q.teamId}`, `timestamp >= ${q.from}`, `timestamp <= ${q.to}`]
  if (q.severityLevels?.length) parts.push(`severity_text IN (${q.severityLevels.map(quote).join(', ')})`)
  if (q.serviceNames.length) parts.push(`service_name IN (${q.serviceNames.map(quote).join(', ')})`)
  if (q.searchTerm) parts.push(`positionCaseInsensitiveUTF8(body, ${quote(q.searchTerm)}) > 0`)
  for (const f of q.filters ?? []) parts.push(filterSql(f))
  return parts.join(' AND ')
}

type Stored = Omit<LogRow, 'attributes' | 'resource_attributes' | 'team_id' | 'timestamp' | 'observed_timestamp' | 'trace_flags' | 'severity_number'> & {
  team_id: string | number
  timestamp: string | number
  observed_timestamp: string | number
  trace_flags: string | number
  severity_number: string | number
  resource_keys: string[]
  resource_values: string[]
  attribute_keys: string[]
  attribute_values: string[]
}

export class ClickHouseLogStore implements LogStore {
  readonly #t: ClickHouseTable
  readonly #logs: string

  constructor(options: ClickHouseConnection) {
    this.#t = new ClickHouseTable(options, { name: 'logs', columns: COLUMNS, layout: LAYOUT })
    this.#logs = this.#t.table
  }

  async insert(rows: LogRow[]): Promise<void> {
    await this.#t.insert(rows.map(({ attributes, resource_attributes, ...row }) => ({ ...row, ...attributeArrays(attributes, resource_attributes) })))
  }

  async query(q: LogsQuery): Promise<LogRow[]> {
    const dir = q.order === 'earliest' ? 'ASC' : 'DESC'
    const cmp = q.order === 'earliest' ? '>' : '<'
    // Tuple comparison is newer than 18.16: the cursor is spelled out.
    let after = q.after ? ` AND (timestamp ${cmp} ${q.after.timestamp} OR (timestamp = ${q.after.timestamp} AND uuid ${cmp} ${quote(q.after.uuid)}))` : ''
    if (q.receivedFrom !== null) after += ` AND observed_timestamp >= ${q.receivedFrom}`
    const rows = await this.#t.select<Stored>(`SELECT * FROM ${this.#logs} WHERE ${where(q)}${after} ORDER BY timestamp ${dir}, uuid ${dir} LIMIT ${q.limit}`)
    return rows.map(({ resource_keys, resource_values, attribute_keys, attribute_values, ...r }) => ({
      ...r,
      team_id: Number(r.team_id),
      timestamp: Number(r.timestamp),
      observed_timestamp: Number(r.observed_timestamp),
      trace_flags: Number(r.trace_flags),
      severity_number: Number(r.severity_number),
      resource_attributes: zipMap(resource_keys, resource_values),
      attributes: zipMap(attribute_keys, attribute_values),
    }))
  }

  async checkpoint(teamId: number): Promise<number | null> {
    const [row] = await this.#t.select<{ t: string; n: string }>(`SELECT max(observed_timestamp) AS t, count() AS n FROM ${this.#logs} WHERE team_id = ${teamId}`)
    return Number(row?.n ?? 0) > 0 ? Number(row!.t) : null
  }

  async attributes(q: LogAttributesQuery): Promise<{ keys: string[]; count: number }> {
    const keys = q.type === 'resource' ? 'resource_keys' : 'attribute_keys'
    const rows = await this.#t.select<{ key: string; n: string }>(
      `SELECT k AS key, count() AS n FROM ${this.#logs} ARRAY JOIN ${keys} AS k
       WHERE ${where(q)} AND positionCaseInsensitiveUTF8(k, ${quote(q.search)}) > 0 GROUP BY k`,
    )
    return rankKeys(rows.map((r) => ({ key: r.key, n: Number(r.n) })), q)
  }

  async values(q: LogValuesQuery): Promise<string[]> {
    const [keys, values] = q.type === 'resource' ? ['resource_keys', 'resource_values'] : ['attribute_keys', 'attribute_values']
    const rows = await this.#t.select<{ value: string }>(
      `SELECT v AS value, count() AS n FROM ${this.#logs} ARRAY JOIN ${keys} AS k, ${values} AS v
       WHERE team_id = ${q.teamId} AND timestamp >= ${q.from} AND k = ${quote(q.key)} AND position(v, ${quote(q.search)}) > 0
       GROUP BY v ORDER BY n DESC, v ASC LIMIT 50`,
    )
    return rows.map((r) => r.value)
  }

  async sparkline(q: SparklineQuery): Promise<SparklineBucket[]> {
    const rows = await this.#t.select<{ time: string; level: string; count: string }>(
      `SELECT intDiv(timestamp, ${q.interval}) * ${q.interval} AS time, severity_text AS level, count() AS count
       FROM ${this.#logs} WHERE ${where(q)} GROUP BY time, level ORDER BY time, level`,
    )
    return rows.map((r) => ({ time: Number(r.time), level: r.level, count: Number(r.count) }))
  }

  close(): Promise<void> {
    return this.#t.close()
  }
}
