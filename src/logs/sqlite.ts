/**
 * Logs in logs.db (the embedded store). A commit is synced before `insert` returns (synchronous=FULL), so a
 * log acknowledged is on disk. Runs on the logs thread (thread.ts): better-sqlite3 is synchronous. Attribute
 * maps are JSON objects of texts; a filter reads a key through json_each, so any key (dots, quotes) is exact.
 */
import { openDatabase, type Db } from '../storage/index.js'
import { registerFilterFunctions, type RegexEngine } from '../storage/events/index.js'
import { logColumn, rankKeys } from './columns.js'
import type { LogAttributesQuery, LogFilter, LogRow, LogSelection, LogsQuery, LogStore, LogValuesQuery, SparklineBucket, SparklineQuery } from './types.js'

interface Sql {
  sql: string
  params: unknown[]
}

function subject(f: LogFilter): Sql {
  if (f.on === 'column') return { sql: logColumn(f.key)!, params: [] }
  const map = f.on === 'resource' ? 'resource_attributes' : 'attributes'
  return { sql: `(SELECT value FROM json_each(${map}) WHERE key = ?)`, params: [f.key] }
}

function filterSql(f: LogFilter): Sql {
  const v = subject(f)
  // Every operator but the set ones compares with the filter's values, after the subject's own parameters.
  const params = [...v.params, ...f.values]
  const list = f.values.map(() => '?').join(',')
  switch (f.operator) {
    case 'is_set':
      return f.on === 'column' ? { sql: `${v.sql} != ''`, params } : { sql: `${v.sql} IS NOT NULL`, params }
    case 'is_not_set':
      return f.on === 'column' ? { sql: `${v.sql} = ''`, params } : { sql: `${v.sql} IS NULL`, params }
    case 'exact':
      return { sql: `${v.sql} IN (${list})`, params }
    case 'is_not':
      return { sql: `coalesce(${v.sql} NOT IN (${list}), 1)`, params }
    case 'icontains':
      return { sql: `skylark_icontains(${v.sql}, ?) = 1`, params }
    case 'not_icontains':
      return { sql: `coalesce(skylark_icontains(${v.sql}, ?), 0) = 0`, params }
    case 'regex':
      return { sql: `skylark_regex(${v.sql}, ?) = 1`, params }
    case 'not_regex':
      return { sql: `coalesce(skylark_regex(${v.sql}, ?), 0) = 0`, params }
  }
}

function where(q: LogSelection): Sql {
  const parts = ['team_id = ?', 'timestamp >= ?', 'timestamp <= ?']
  const params: unknown[] = [q.teamId, q.from, q.to]
  const inList = (column: string, values: string[]) => {
    if (values.length === 0) return
    parts.push(`${column} IN (${values.map(() => '?').join(',')})`)
    params.push(...values)
  }
  inList('severity_text', q.severityLevels ?? [])
  inList('service_name', q.serviceNames)
  if (q.searchTerm) {
    parts.push('skylark_icontains(body, ?) = 1')
    params.push(q.searchTerm)
  }
  for (const f of q.filters ?? []) {
    const s = filterSql(f)
    parts.push(s.sql)
    params.push(...s.params)
  }
  return { sql: parts.join(' AND '), params }
}

interface StoredRow extends Omit<LogRow, 'attributes' | 'resource_attributes'> {
  attributes: string
  resource_attributes: string
}

export class SqliteLogStore implements LogStore {
  readonly #db: Db
  readonly #insert: ReturnType<Db['prepare']>

  constructor(file: string, regex: RegexEngine | null) {
    this.#db = openDatabase(file, { synchronous: 'FULL' })
    // skylark_icontains and skylark_regex, as the events store's filters read texts (sqlite-filters.ts).
    registerFilterFunctions(this.#db, regex)
    this.#insert = this.#db.prepare(
      `INSERT OR IGNORE INTO logs (uuid, team_id, timestamp, observed_timestamp, trace_id, span_id, trace_flags, body, severity_text,
        severity_number, service_name, resource_attributes, resource_fingerprint, instrumentation_scope, event_name, attributes)
       VALUES (@uuid, @team_id, @timestamp, @observed_timestamp, @trace_id, @span_id, @trace_flags, @body, @severity_text,
        @severity_number, @service_name, @resource_attributes, @resource_fingerprint, @instrumentation_scope, @event_name, @attributes)`,
    )
  }

  async insert(rows: LogRow[]): Promise<void> {
    this.#db.transaction(() => {
      for (const row of rows) {
        this.#insert.run({ ...row, attributes: JSON.stringify(row.attributes), resource_attributes: JSON.stringify(row.resource_attributes) })
      }
    })()
  }

  async query(q: LogsQuery): Promise<LogRow[]> {
    const w = where(q)
    const dir = q.order === 'earliest' ? 'ASC' : 'DESC'
    let after = ''
    if (q.receivedFrom !== null) {
      after += ' AND observed_timestamp >= ?'
      w.params.push(q.receivedFrom)
    }
    if (q.after) {
      after += ` AND (timestamp, uuid) ${q.order === 'earliest' ? '>' : '<'} (?, ?)`
      w.params.push(q.after.timestamp, q.after.uuid)
    }
    const rows = this.#db
      .prepare(`SELECT * FROM logs WHERE ${w.sql}${after} ORDER BY timestamp ${dir}, uuid ${dir} LIMIT ?`)
      .all(...w.params, q.limit) as StoredRow[]
    return rows.map((r) => ({ ...r, attributes: JSON.parse(r.attributes), resource_attributes: JSON.parse(r.resource_attributes) }))
  }

  async checkpoint(teamId: number): Promise<number | null> {
    return (this.#db.prepare('SELECT max(observed_timestamp) AS t FROM logs WHERE team_id = ?').get(teamId) as { t: number | null }).t
  }

  async attributes(q: LogAttributesQuery): Promise<{ keys: string[]; count: number }> {
    const w = where(q)
    const map = q.type === 'resource' ? 'resource_attributes' : 'attributes'
    const rows = this.#db
      .prepare(`SELECT j.key AS key, count(*) AS n FROM logs, json_each(logs.${map}) AS j WHERE ${w.sql} AND skylark_icontains(j.key, ?) = 1 GROUP BY j.key`)
      .all(...w.params, q.search) as Array<{ key: string; n: number }>
    return rankKeys(rows, q)
  }

  async values(q: LogValuesQuery): Promise<string[]> {
    const map = q.type === 'resource' ? 'resource_attributes' : 'attributes'
    // As PostHog's LIKE: case counts.
    const rows = this.#db
      .prepare(
        `SELECT j.value AS value, count(*) AS n FROM logs, json_each(logs.${map}) AS j
         WHERE team_id = ? AND timestamp >= ? AND j.key = ? AND instr(j.value, ?) > 0
         GROUP BY j.value ORDER BY n DESC, j.value ASC LIMIT 50`,
      )
      .all(q.teamId, q.from, q.key, q.search) as Array<{ value: string }>
    return rows.map((r) => String(r.value))
  }

  async sparkline(q: SparklineQuery): Promise<SparklineBucket[]> {
    const w = where(q)
    const rows = this.#db
      .prepare(
        `SELECT (timestamp / ?) * ? AS time, severity_text AS level, count(*) AS count FROM logs WHERE ${w.sql}
         GROUP BY 1, 2 ORDER BY 1, 2`,
      )
      .all(q.interval, q.interval, ...w.params) as SparklineBucket[]
    return rows
  }

  async close(): Promise<void> {
    this.#db.close()
  }
}
