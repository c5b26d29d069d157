/**
 * Metrics in ClickHouse's `metrics` table, a MergeTree ordered by (team_id, metric_name, timestamp), made at the
 * first call as the logs table is (src/storage/clickhouse-table.ts: Int64 microseconds, attribute maps as key and
 * value arrays; a missing key reads as '', index 0 of an array being its default).
 */
import type { ClickHouseConnection } from '../config/index.js'
import { attributeArrays, ClickHouseTable, zipMap } from '../storage/clickhouse-table.js'
import { matchSql, quote } from '../storage/events/clickhouse-schema.js'
import { SERVICE_KEYS } from './query.js'
import type { AttributeKeysQuery, AttributeValuesQuery, MetricFilter, MetricName, MetricRow, MetricStore, NamesQuery, SampleQuery, ServiceOverview, SparklineQuery } from './types.js'

const COLUMNS = `(
  uuid String,
  team_id Int64,
  timestamp Int64,
  observed_timestamp Int64,
  trace_id String,
  span_id String,
  trace_flags UInt32,
  service_name String,
  metric_name String,
  metric_type String,
  value Nullable(Float64),
  count Int64,
  histogram_bounds Array(Float64),
  histogram_counts Array(Float64),
  unit String,
  aggregation_temporality String,
  is_monotonic UInt8,
  resource_keys Array(String),
  resource_values Array(String),
  instrumentation_scope String,
  attribute_keys Array(String),
  attribute_values Array(String),
  series String
)`
const LAYOUT = 'PARTITION BY toYYYYMM(toDateTime(intDiv(timestamp, 1000000))) ORDER BY (team_id, metric_name, timestamp)'

/** `AND service_name IN (…)` when services are named. */
const servicesIn = (services: readonly string[]) => (services.length ? ` AND service_name IN (${services.map(quote).join(', ')})` : '')

function label(key: string, scope: MetricFilter['scope']): string {
  if (SERVICE_KEYS.has(key)) return 'service_name'
  const resource = `resource_values[indexOf(resource_keys, ${quote(key)})]`
  const attribute = `attribute_values[indexOf(attribute_keys, ${quote(key)})]`
  if (scope === 'resource') return resource
  if (scope === 'attribute') return attribute
  return `if(${resource} != '', ${resource}, ${attribute})`
}

function filterSql(f: MetricFilter): string {
  const l = label(f.key, f.scope)
  if (f.op === 'eq') return `${l} = ${quote(f.value)}`
  if (f.op === 'neq') return `${l} != ${quote(f.value)}`
  if (f.op === 'regex') return matchSql(l, f.value)
  return `NOT ${matchSql(l, f.value)}`
}

function where(q: SampleQuery): string {
  const parts = [`team_id = ${q.teamId}`, `timestamp >= ${q.from}`, `timestamp < ${q.to}`]
  if (q.metricName) parts.push(`metric_name = ${quote(q.metricName)}`)
  if (q.metricType) parts.push(`metric_type = ${quote(q.metricType)}`)
  if (q.traceId) parts.push(`trace_id = ${quote(q.traceId)}`)
  if (q.spanId) parts.push(`span_id = ${quote(q.spanId)}`)
  for (const f of q.filters) parts.push(filterSql(f))
  return parts.join(' AND ')
}

type Stored = Omit<MetricRow, 'attributes' | 'resource_attributes' | 'is_monotonic' | 'team_id' | 'timestamp' | 'observed_timestamp' | 'count'> & {
  team_id: string
  timestamp: string
  observed_timestamp: string
  count: string
  is_monotonic: number
  resource_keys: string[]
  resource_values: string[]
  attribute_keys: string[]
  attribute_values: string[]
}

export class ClickHouseMetricStore implements MetricStore {
  readonly #t: ClickHouseTable
  readonly #metrics: string

  constructor(options: ClickHouseConnection) {
    this.#t = new ClickHouseTable(options, { name: 'metrics', columns: COLUMNS, layout: LAYOUT })
    this.#metrics = this.#t.table
  }

  async insert(rows: MetricRow[]): Promise<void> {
    await this.#t.insert(
      rows.map(({ attributes, resource_attributes, is_monotonic, ...row }) => ({ ...row, is_monotonic: is_monotonic ? 1 : 0, ...attributeArrays(attributes, resource_attributes) })),
    )
  }

  async samples(q: SampleQuery): Promise<MetricRow[]> {
    const rows = await this.#t.select<Stored>(`SELECT * FROM ${this.#metrics} WHERE ${where(q)} ORDER BY timestamp DESC, uuid DESC LIMIT ${q.limit}`)
    return rows.map(({ resource_keys, resource_values, attribute_keys, attribute_values, ...r }) => ({
      ...r,
      team_id: Number(r.team_id),
      timestamp: Number(r.timestamp),
      observed_timestamp: Number(r.observed_timestamp),
      count: Number(r.count),
      trace_flags: Number(r.trace_flags),
      is_monotonic: Number(r.is_monotonic) === 1,
      resource_attributes: zipMap(resource_keys, resource_values),
      attributes: zipMap(attribute_keys, attribute_values),
    }))
  }

  async names(q: NamesQuery): Promise<MetricName[]> {
    const rows = await this.#t.select<Record<keyof MetricName, string>>(
      `SELECT metric_name AS name, min(metric_type) AS metric_type, min(unit) AS unit, max(timestamp) AS last_seen, uniqExact(service_name) AS services
       FROM ${this.#metrics} WHERE team_id = ${q.teamId} AND timestamp >= ${q.from} AND positionCaseInsensitiveUTF8(metric_name, ${quote(q.search)}) > 0${servicesIn(q.services)}
       GROUP BY metric_name`,
    )
    return rows.map((r) => ({ name: r.name, metric_type: r.metric_type, unit: r.unit, last_seen: Number(r.last_seen), services: Number(r.services) }))
  }

  async nameSparklines(q: SparklineQuery): Promise<Array<{ name: string; bucket: number; value: number | null }>> {
    const rows = await this.#t.select<{ name: string; bucket: string; value: number | null }>(
      `SELECT metric_name AS name, intDiv(timestamp - ${q.from}, ${q.bucket}) AS bucket, avg(value) AS value FROM ${this.#metrics}
       WHERE team_id = ${q.teamId} AND timestamp >= ${q.from} AND timestamp < ${q.to} AND metric_name IN (${q.names.map(quote).join(', ')})${servicesIn(q.services)}
       GROUP BY name, bucket ORDER BY name, bucket`,
    )
    return rows.map((r) => ({ name: r.name, bucket: Number(r.bucket), value: r.value }))
  }

  async attributeKeys(q: AttributeKeysQuery): Promise<Array<{ name: string; occurrences: number }>> {
    const range = `team_id = ${q.teamId} AND timestamp >= ${q.from} AND timestamp < ${q.to}`
    const rows = await this.#t.select<{ name: string; occurrences: string }>(
      `SELECT name, count() AS occurrences FROM (
         SELECT k AS name FROM ${this.#metrics} ARRAY JOIN attribute_keys AS k WHERE ${range}
         UNION ALL SELECT k AS name FROM ${this.#metrics} ARRAY JOIN resource_keys AS k WHERE ${range})
       WHERE name != '$originalTimestamp' AND (positionCaseInsensitiveUTF8(name, ${quote(q.search)}) > 0 OR name IN (${[...SERVICE_KEYS].map(quote).join(', ')}))
       GROUP BY name`,
    )
    return rows.map((r) => ({ name: r.name, occurrences: Number(r.occurrences) }))
  }

  async attributeValues(q: AttributeValuesQuery): Promise<Array<{ name: string; count: number }>> {
    const rows = await this.#t.select<{ name: string; count: string }>(
      `SELECT value AS name, count() AS count FROM (
         SELECT ${label(q.key, 'auto')} AS value FROM ${this.#metrics} WHERE team_id = ${q.teamId} AND timestamp >= ${q.from} AND timestamp < ${q.to})
       WHERE value != '' AND positionCaseInsensitiveUTF8(value, ${quote(q.search)}) > 0
       GROUP BY value ORDER BY lower(value) = lower(${quote(q.search)}) DESC, count DESC, value ASC LIMIT ${q.limit}`,
    )
    return rows.map((r) => ({ name: r.name, count: Number(r.count) }))
  }

  async hasMetrics(teamId: number): Promise<boolean> {
    return (await this.#t.select(`SELECT 1 AS one FROM ${this.#metrics} WHERE team_id = ${teamId} LIMIT 1`)).length > 0
  }

  async overview(teamId: number, since: number, namesSince: number): ReturnType<MetricStore['overview']> {
    const services = await this.#t.select<Record<keyof ServiceOverview, string>>(
      `SELECT service_name, uniqExact(metric_name) AS metric_names, uniqExact(series) AS series, max(timestamp) AS last_seen
       FROM ${this.#metrics} WHERE team_id = ${teamId} AND timestamp > ${since} GROUP BY service_name ORDER BY series DESC, service_name ASC`,
    )
    const [totals] = await this.#t.select<{ names: string; last: string; rows: string }>(
      `SELECT uniqExactIf(metric_name, timestamp >= ${namesSince}) AS names, max(timestamp) AS last, count() AS rows FROM ${this.#metrics} WHERE team_id = ${teamId}`,
    )
    return {
      services: services.map((s) => ({ service_name: s.service_name, metric_names: Number(s.metric_names), series: Number(s.series), last_seen: Number(s.last_seen) })),
      metricNames: Number(totals?.names ?? 0),
      lastSeen: Number(totals?.rows ?? 0) > 0 ? Number(totals!.last) : null,
    }
  }

  close(): Promise<void> {
    return this.#t.close()
  }
}
