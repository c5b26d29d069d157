/**
 * Metrics in metrics.db (the embedded store). A commit is synced before `insert` returns (synchronous=FULL).
 * Runs on the metrics thread (thread.ts). Attribute maps are JSON objects of texts, read through json_each, so
 * any key is exact; a label missing from its map reads as '', as ClickHouse's map lookup gives.
 */
import { openDatabase, type Db } from '../storage/index.js'
import { registerFilterFunctions, type RegexEngine } from '../storage/events/index.js'
import { SERVICE_KEYS } from './query.js'
import type { AttributeKeysQuery, AttributeValuesQuery, MetricFilter, MetricName, MetricRow, MetricStore, NamesQuery, SampleQuery, ServiceOverview, SparklineQuery } from './types.js'

interface Sql {
  sql: string
  params: unknown[]
}

const SERVICE_KEY_LIST = [...SERVICE_KEYS]
const placeholders = (values: readonly unknown[]) => values.map(() => '?').join(',')
/** `AND service_name IN (…)` when services are named (its parameters are the services). */
const servicesIn = (services: readonly string[]) => (services.length ? ` AND service_name IN (${placeholders(services)})` : '')
const lookup = (map: string) => `coalesce((SELECT value FROM json_each(${map}) WHERE key = ?), '')`

/** A label's text: the service column, or the key in the resource map, the data point's, or the first non-empty. */
function label(key: string, scope: MetricFilter['scope']): Sql {
  if (SERVICE_KEYS.has(key)) return { sql: 'service_name', params: [] }
  if (scope === 'resource') return { sql: lookup('resource_attributes'), params: [key] }
  if (scope === 'attribute') return { sql: lookup('attributes'), params: [key] }
  return { sql: `coalesce(nullif(${lookup('resource_attributes')}, ''), ${lookup('attributes')})`, params: [key, key] }
}

function filterSql(f: MetricFilter): Sql {
  const l = label(f.key, f.scope)
  const params = [...l.params, f.value]
  if (f.op === 'eq') return { sql: `${l.sql} = ?`, params }
  if (f.op === 'neq') return { sql: `${l.sql} != ?`, params }
  if (f.op === 'regex') return { sql: `skylark_regex(${l.sql}, ?) = 1`, params }
  return { sql: `coalesce(skylark_regex(${l.sql}, ?), 0) = 0`, params }
}

function where(q: SampleQuery): Sql {
  const parts = ['team_id = ?', 'timestamp >= ?', 'timestamp < ?']
  const params: unknown[] = [q.teamId, q.from, q.to]
  const equal = (column: string, value: string | null | undefined) => {
    if (!value) return
    parts.push(`${column} = ?`)
    params.push(value)
  }
  equal('metric_name', q.metricName)
  equal('metric_type', q.metricType)
  equal('trace_id', q.traceId)
  equal('span_id', q.spanId)
  for (const f of q.filters) {
    const s = filterSql(f)
    parts.push(s.sql)
    params.push(...s.params)
  }
  return { sql: parts.join(' AND '), params }
}

type Stored = Omit<MetricRow, 'attributes' | 'resource_attributes' | 'histogram_bounds' | 'histogram_counts' | 'is_monotonic'> & {
  attributes: string
  resource_attributes: string
  histogram_bounds: string
  histogram_counts: string
  is_monotonic: number
}

export class SqliteMetricStore implements MetricStore {
  readonly #db: Db
  readonly #insert: ReturnType<Db['prepare']>

  constructor(file: string, regex: RegexEngine | null) {
    this.#db = openDatabase(file, { synchronous: 'FULL' })
    registerFilterFunctions(this.#db, regex)
    this.#insert = this.#db.prepare(
      `INSERT OR IGNORE INTO metrics (uuid, team_id, timestamp, observed_timestamp, trace_id, span_id, trace_flags, service_name, metric_name,
        metric_type, value, count, histogram_bounds, histogram_counts, unit, aggregation_temporality, is_monotonic, resource_attributes,
        instrumentation_scope, attributes, series)
       VALUES (@uuid, @team_id, @timestamp, @observed_timestamp, @trace_id, @span_id, @trace_flags, @service_name, @metric_name,
        @metric_type, @value, @count, @histogram_bounds, @histogram_counts, @unit, @aggregation_temporality, @is_monotonic, @resource_attributes,
        @instrumentation_scope, @attributes, @series)`,
    )
  }

  async insert(rows: MetricRow[]): Promise<void> {
    this.#db.transaction(() => {
      for (const row of rows) {
        this.#insert.run({
          ...row,
          is_monotonic: row.is_monotonic ? 1 : 0,
          histogram_bounds: JSON.stringify(row.histogram_bounds),
          histogram_counts: JSON.stringify(row.histogram_counts),
          attributes: JSON.stringify(row.attributes),
          resource_attributes: JSON.stringify(row.resource_attributes),
        })
      }
    })()
  }

  async samples(q: SampleQuery): Promise<MetricRow[]> {
    const w = where(q)
    const rows = this.#db.prepare(`SELECT * FROM metrics WHERE ${w.sql} ORDER BY timestamp DESC, uuid DESC LIMIT ?`).all(...w.params, q.limit) as Stored[]
    return rows.map((r) => ({
      ...r,
      is_monotonic: r.is_monotonic === 1,
      histogram_bounds: JSON.parse(r.histogram_bounds),
      histogram_counts: JSON.parse(r.histogram_counts),
      attributes: JSON.parse(r.attributes),
      resource_attributes: JSON.parse(r.resource_attributes),
    }))
  }

  async names(q: NamesQuery): Promise<MetricName[]> {
    return this.#db
      .prepare(
        `SELECT metric_name AS name, min(metric_type) AS metric_type, min(unit) AS unit, max(timestamp) AS last_seen, count(DISTINCT service_name) AS services
         FROM metrics WHERE team_id = ? AND timestamp >= ? AND skylark_icontains(metric_name, ?) = 1${servicesIn(q.services)} GROUP BY metric_name`,
      )
      .all(q.teamId, q.from, q.search, ...q.services) as MetricName[]
  }

  async nameSparklines(q: SparklineQuery): Promise<Array<{ name: string; bucket: number; value: number | null }>> {
    return this.#db
      .prepare(
        `SELECT metric_name AS name, (timestamp - ?) / ? AS bucket, avg(value) AS value FROM metrics
         WHERE team_id = ? AND timestamp >= ? AND timestamp < ? AND metric_name IN (${placeholders(q.names)})${servicesIn(q.services)}
         GROUP BY 1, 2 ORDER BY 1, 2`,
      )
      .all(q.from, q.bucket, q.teamId, q.from, q.to, ...q.names, ...q.services) as Array<{ name: string; bucket: number; value: number | null }>
  }

  async attributeKeys(q: AttributeKeysQuery): Promise<Array<{ name: string; occurrences: number }>> {
    return this.#db
      .prepare(
        `SELECT name, count(*) AS occurrences FROM (
           SELECT j.key AS name FROM metrics, json_each(metrics.attributes) AS j WHERE team_id = ? AND timestamp >= ? AND timestamp < ?
           UNION ALL SELECT j.key FROM metrics, json_each(metrics.resource_attributes) AS j WHERE team_id = ? AND timestamp >= ? AND timestamp < ?)
         WHERE name != '$originalTimestamp' AND (skylark_icontains(name, ?) = 1 OR name IN (${placeholders(SERVICE_KEY_LIST)}))
         GROUP BY name`,
      )
      .all(q.teamId, q.from, q.to, q.teamId, q.from, q.to, q.search, ...SERVICE_KEY_LIST) as Array<{ name: string; occurrences: number }>
  }

  async attributeValues(q: AttributeValuesQuery): Promise<Array<{ name: string; count: number }>> {
    const l = label(q.key, 'auto')
    // lower() folds ASCII only, as PostHog's ORDER BY's.
    return this.#db
      .prepare(
        `SELECT value AS name, count(*) AS count FROM (SELECT ${l.sql} AS value FROM metrics WHERE team_id = ? AND timestamp >= ? AND timestamp < ?)
         WHERE value != '' AND skylark_icontains(value, ?) = 1 GROUP BY value ORDER BY lower(value) = lower(?) DESC, count DESC, value ASC LIMIT ?`,
      )
      .all(...l.params, q.teamId, q.from, q.to, q.search, q.search, q.limit) as Array<{ name: string; count: number }>
  }

  async hasMetrics(teamId: number): Promise<boolean> {
    return this.#db.prepare('SELECT 1 FROM metrics WHERE team_id = ? LIMIT 1').get(teamId) !== undefined
  }

  async overview(teamId: number, since: number, namesSince: number): ReturnType<MetricStore['overview']> {
    const services = this.#db
      .prepare(
        `SELECT service_name, count(DISTINCT metric_name) AS metric_names, count(DISTINCT series) AS series, max(timestamp) AS last_seen
         FROM metrics WHERE team_id = ? AND timestamp > ? GROUP BY service_name ORDER BY series DESC, service_name ASC`,
      )
      .all(teamId, since) as ServiceOverview[]
    const names = this.#db.prepare('SELECT count(DISTINCT metric_name) AS n FROM metrics WHERE team_id = ? AND timestamp >= ?').get(teamId, namesSince) as { n: number }
    const last = this.#db.prepare('SELECT max(timestamp) AS t FROM metrics WHERE team_id = ?').get(teamId) as { t: number | null }
    return { services, metricNames: names.n, lastSeen: last.t }
  }

  async close(): Promise<void> {
    this.#db.close()
  }
}
