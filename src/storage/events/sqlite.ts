/**
 * The embedded event store: events.db. The consumer thread owns the writing connection; the API reads
 * through a separate read-only connection (WAL lets both run at once).
 */
import { openDatabase, type Db } from '../sqlite/database.js'
import { EVENTS_BLOCK_ROWS } from '../sqlite/migrations/events.js'
import { dayOf, offsetSql } from './days.js'
import { experimentSteps, type Exposure, type StepEvent } from './experiment-aggregate.js'
import { readsExposures } from './experiment-funnel.js'
import { aggregateVariants, countExposures, exposuresByEntity, NO_TEXTS, sortExposureEvents, withExposureEvents, type ExposureEvent } from './experiment-rows.js'
import { LegacyFunnelCounter } from './legacy-funnel.js'
import { PackedReader } from './packed-rows.js'
import { registerActionFunctions, type RegexEngine } from './sqlite-actions.js'
import { compileSqliteActivations, compileSqliteExposureEvents, compileSqliteExposures, compileSqliteMetricEvents, compileSqliteSessionValues } from './sqlite-experiment.js'
import { activatedExposures } from './experiment-activation.js'
import { compileSqliteFunnel } from './sqlite-funnel.js'
import { compileSqliteWhere, groupColumn, hogqlReadSql, propertyText, registerFilterFunctions, type SqlFragment } from './sqlite-filters.js'
import { innermost, type HogqlQueryPlan } from './hogql-query.js'
import { runHogqlQuery, type QueryEvent } from './hogql-query-run.js'
import type { AnswerValue } from './hogql-values.js'
import {
  SinkError,
  funnelEventNames,
  type BreakdownQuery,
  type DailyBreakdownQuery,
  type BreakdownRow,
  type DailyBreakdownRow,
  type EventActors,
  type EventFilter,
  type EventPage,
  type EventRow,
  type EventSink,
  type EventStore,
  type ExperimentExposuresQuery,
  type ExperimentSums,
  type ExperimentVariantsQuery,
  type ExposureCount,
  type ExposureRow,
  type FunnelQuery,
  type FunnelRow,
  type MetricEventRow,
  type PropertyValuesQuery,
  type SessionProperty,
  type StoredEvent,
  type TallyQuery,
  type TallyRow,
  type TimesQuery,
  type TimesRow,
  type ValueColumn,
} from './types.js'

// Errors where retrying later can succeed (disk full, I/O, locks); anything else is about the rows.
const RETRYABLE = new Set(['SQLITE_FULL', 'SQLITE_IOERR', 'SQLITE_BUSY', 'SQLITE_LOCKED', 'SQLITE_CANTOPEN', 'SQLITE_READONLY', 'SQLITE_NOMEM'])

export class SqliteEventSink implements EventSink {
  readonly kind = 'sqlite'
  readonly #db: Db
  readonly #insertMany: (rows: readonly EventRow[]) => void
  readonly #insertPacked: (packed: Buffer) => void

  /** `blockRows` is EVENTS_BLOCK_ROWS but in tests. */
  constructor(file: string, blockRows = EVENTS_BLOCK_ROWS) {
    this.#db = openDatabase(file)
    // A row's block: the rows this connection has inserted or tried to, counted on from the table's last rowid.
    let rows = (this.#db.prepare('SELECT max(rowid) AS n FROM events').get() as { n: number | null }).n ?? 0
    const block = () => Math.floor(rows++ / blockRows)
    // `properties` may come as UTF-8 bytes (packed rows): bound as a blob and cast, SQLite stores them as
    // TEXT as they are, where a string is decoded here and encoded again by the binding, ≈2 µs a row of
    // 2.7 KB (≈10 % of a row's insert with its WAL writes). A string casts to itself.
    const insert = this.#db.prepare(
      `INSERT OR IGNORE INTO events (block, uuid, team_id, event, distinct_id, person_id, properties, timestamp, created_at,
         group_0, group_1, group_2, group_3, group_4, elements_chain)
       VALUES (?, ?, ?, ?, ?, ?, CAST(? AS TEXT), ?, ?, ?, ?, ?, ?, ?, ?)`,
    )
    this.#insertMany = this.#db.transaction((rows: readonly EventRow[]) => {
      for (const r of rows) {
        const g = r.groups
        insert.run(block(), r.uuid, r.team_id, r.event, r.distinct_id, r.person_id, r.properties, r.timestamp, r.created_at, g[0], g[1], g[2], g[3], g[4], r.elements_chain)
      }
    })
    this.#insertPacked = this.#db.transaction((packed: Buffer) => {
      const r = new PackedReader(packed)
      while (!r.done) {
        const teamId = r.number()
        const timestamp = r.number()
        const createdAt = r.number()
        // Arguments are evaluated left to right: the strings come out in the column order packRows wrote.
        insert.run(block(), r.text(), teamId, r.text(), r.text(), r.text(), r.bytes(), timestamp, createdAt, r.text(), r.text(), r.text(), r.text(), r.text(), r.text())
      }
    })
  }

  async write(rows: readonly EventRow[]): Promise<void> {
    this.#guarded(() => this.#insertMany(rows))
  }

  async deleteEvents(teamId: number, distinctIds: readonly string[]): Promise<void> {
    this.#guarded(() => {
      this.#db.prepare('DELETE FROM events WHERE team_id = ? AND distinct_id IN (SELECT value FROM json_each(?))').run(teamId, JSON.stringify(distinctIds))
    })
  }

  /** Rows from packRows() (the insert thread's input). */
  async writePacked(packed: Buffer): Promise<void> {
    this.#guarded(() => this.#insertPacked(packed))
  }

  #guarded(insert: () => void): void {
    try {
      insert()
    } catch (error) {
      // Extended codes look like SQLITE_IOERR_WRITE; the first two parts are the primary code.
      const primary = ((error as { code?: string }).code ?? '').split('_').slice(0, 2).join('_')
      throw new SinkError(`SQLite insert failed: ${(error as Error).message}`, !RETRYABLE.has(primary))
    }
  }

  async ping(): Promise<boolean> {
    try {
      this.#db.prepare('SELECT 1').get()
      return true
    } catch {
      return false
    }
  }

  async close(): Promise<void> {
    this.#db.close()
  }
}

interface EventDbRow {
  uuid: string
  event: string
  distinct_id: string
  person_id: string | null
  properties: string
  timestamp: number
  created_at: number
  elements_chain: string
  group_0: string
  group_1: string
  group_2: string
  group_3: string
  group_4: string
}

export function toStoredEvent(row: EventDbRow): StoredEvent {
  return {
    id: row.uuid,
    uuid: row.uuid,
    event: row.event,
    distinct_id: row.distinct_id,
    person_id: row.person_id,
    properties: JSON.parse(row.properties) as Record<string, unknown>,
    timestamp: new Date(row.timestamp).toISOString(),
    created_at: new Date(row.created_at).toISOString(),
    elements_chain: row.elements_chain,
    groups: [row.group_0, row.group_1, row.group_2, row.group_3, row.group_4],
  }
}

/** A column's text for events/values; an empty group key or no person is no value. */
function columnText(column: ValueColumn): SqlFragment {
  if (column === 'event' || column === 'distinct_id' || column === 'person_id') return { sql: column, params: [] }
  return { sql: `NULLIF(${groupColumn(Number(column.slice(-1)))}, '')`, params: [] }
}

/** The metric events alone, for the metrics whose aggregation walks no exposure (their ids unread). */
function* withoutIds(rows: Iterable<readonly [MetricEventRow, string]>): Generator<MetricEventRow> {
  for (const [row] of rows) yield row
}

export class SqliteEventStore implements EventStore {
  readonly #db: Db
  readonly #regex: RegexEngine | null

  /** `regex` runs regexes: action steps', the regex operators' and HogQL's match() (none given: a query with one fails). */
  constructor(file: string, regex: RegexEngine | null = null) {
    this.#db = openDatabase(file, { readonly: true })
    this.#regex = regex
    registerActionFunctions(this.#db)
    registerFilterFunctions(this.#db, regex)
  }

  async list(filter: EventFilter, page: EventPage): Promise<StoredEvent[]> {
    const where = compileSqliteWhere(filter)
    const order = page.ascending ? 'ASC' : 'DESC'
    const rows = this.#db
      .prepare(`SELECT * FROM ${where.from} WHERE ${where.sql} ORDER BY timestamp ${order}, uuid ${order} LIMIT ? OFFSET ?`)
      .all(...where.params, page.limit, page.offset) as EventDbRow[]
    return rows.map(toStoredEvent)
  }

  async get(teamId: number, uuid: string): Promise<StoredEvent | null> {
    const row = this.#db.prepare('SELECT * FROM events WHERE uuid = ? AND team_id = ?').get(uuid, teamId) as EventDbRow | undefined
    return row ? toStoredEvent(row) : null
  }

  async propertyValues(query: PropertyValuesQuery): Promise<string[]> {
    const where = compileSqliteWhere(query.filter)
    const value = 'property' in query.source ? propertyText(query.source.property) : columnText(query.source.column)
    // Any letter's case, as ClickHouse's positionCaseInsensitiveUTF8 (registerFilterFunctions; lower() folds A–Z only).
    const search = query.search === undefined ? '' : 'AND skylark_icontains(v, ?) = 1'
    // Byte length, as ClickHouse's length() that PostHog orders by.
    const order = query.search === undefined ? 'last DESC, v' : 'length(CAST(v AS BLOB)), last DESC, v'
    const rows = this.#db
      .prepare(
        `SELECT v, max(timestamp) AS last FROM (SELECT ${value.sql} AS v, timestamp FROM ${where.from} WHERE ${where.sql})
         WHERE v IS NOT NULL ${search} GROUP BY v ORDER BY ${order} LIMIT ?`,
      )
      .all(...value.params, ...where.params, ...(query.search === undefined ? [] : [query.search]), query.limit) as Array<{ v: unknown }>
    return rows.map((r) => String(r.v))
  }

  async actors(filter: EventFilter): Promise<EventActors> {
    const distinctIds = new Set<string>()
    const keys = [0, 1, 2, 3, 4].map(() => new Set<string>())
    // A person's ids one at a time: only a single distinct id reads through the distinct-id index (see
    // compileSqliteWhere); a list of them would scan the project's events in time order.
    const filters = filter.distinctIds === undefined ? [filter] : filter.distinctIds.map((id) => ({ ...filter, distinctIds: undefined, distinctId: id }))
    for (const f of filters) {
      const where = compileSqliteWhere(f)
      const rows = this.#db
        .prepare(`SELECT DISTINCT distinct_id, group_0, group_1, group_2, group_3, group_4 FROM ${where.from} WHERE ${where.sql}`)
        .raw()
        .all(...where.params) as string[][]
      for (const [distinctId, ...groups] of rows) {
        distinctIds.add(distinctId)
        groups.forEach((key, index) => key && keys[index].add(key))
      }
    }
    return { distinctIds: [...distinctIds].sort(), groupKeys: keys.map((set) => [...set].sort()) }
  }

  /** A HogQL query's rows (hogql-query.ts): the events in its time bounds read once, the plan run on them here. */
  async hogqlQuery(teamId: number, plan: HogqlQueryPlan): Promise<AnswerValue[][]> {
    const base = innermost(plan)
    const where = compileSqliteWhere({ teamId, after: base.after, before: base.before })
    const read = hogqlReadSql(base)
    const order = base.scan === null ? '' : ` ORDER BY timestamp ${base.scan}`
    const select = this.#db.prepare(`SELECT uuid, event, distinct_id, person_id, timestamp, ${read.sql} FROM ${where.from} WHERE ${where.sql}${order}`)
    const rows = select.raw().iterate(...read.params, ...where.params) as IterableIterator<unknown[]>
    function* events(): Generator<QueryEvent> {
      for (const row of rows) {
        const [uuid, event, distinct_id, person_id, timestamp] = row as [string, string, string, string, number]
        const [properties, ...values] = row.slice(5 + base.stored.length) as Array<string | null>
        const stored = base.stored.length === 0 ? undefined : Object.fromEntries(base.stored.map((name, i) => [name, row[5 + i] as string | number]))
        yield { uuid, event, distinct_id, person_id, timestamp, properties: properties ?? undefined, texts: values, stored }
      }
    }
    return runHogqlQuery(plan, events(), this.#regex, true)
  }

  async count(filter: EventFilter): Promise<number> {
    const where = compileSqliteWhere(filter)
    return (this.#db.prepare(`SELECT COUNT(*) AS n FROM ${where.from} WHERE ${where.sql}`).get(...where.params) as { n: number }).n
  }

  async breakdown(query: BreakdownQuery): Promise<BreakdownRow[]> {
    const where = compileSqliteWhere(query)
    const value = propertyText(query.breakdown)
    const measure = query.math === 'persons' ? 'COUNT(DISTINCT person_id)' : 'COUNT(*)'
    const rows = this.#db
      .prepare(`SELECT ${value.sql} AS value, ${measure} AS n FROM ${where.from} WHERE ${where.sql} GROUP BY 1 ORDER BY 2 DESC`)
      .all(...value.params, ...where.params) as Array<{ value: unknown; n: number }>
    return rows.map((r) => ({ value: r.value === null || r.value === undefined ? null : String(r.value), count: r.n }))
  }

  async dailyBreakdown(query: DailyBreakdownQuery): Promise<DailyBreakdownRow[]> {
    const where = compileSqliteWhere(query)
    const value = propertyText(query.breakdown)
    const measure = query.math === 'persons' ? 'COUNT(DISTINCT person_id)' : 'COUNT(*)'
    const rows = this.#db
      .prepare(`SELECT (timestamp + ${offsetSql('timestamp', query.offsets ?? [])}) / 86400000 AS day, ${value.sql} AS value, ${measure} AS n FROM ${where.from} WHERE ${where.sql} GROUP BY 1, 2 ORDER BY 1, 2 NULLS LAST`)
      .all(...value.params, ...where.params) as Array<{ day: number; value: unknown; n: number }>
    return rows.map((r) => ({ day: dayOf(r.day), value: r.value === null || r.value === undefined ? null : String(r.value), count: r.n }))
  }

  async funnel(query: FunnelQuery): Promise<FunnelRow[]> {
    if (query.steps.length === 0 || query.breakdownValues.length === 0) return []
    const { sql, params } = compileSqliteFunnel(query)
    const counter = new LegacyFunnelCounter(query)
    let person: string | null = null
    let events: StepEvent[] = []
    let values: Array<string | null> = []
    for (const [p, t, m, v] of this.#db.prepare(sql).raw().iterate(...params) as Iterable<[string, number, number, unknown]>) {
      if (p !== person) {
        counter.add(events, values)
        ;[person, events, values] = [p, [], []]
      }
      events.push([t, m])
      values.push(v === null || v === undefined ? null : String(v))
    }
    counter.add(events, values)
    return counter.result()
  }

  async distinctIds(filter: EventFilter): Promise<string[]> {
    const where = compileSqliteWhere(filter)
    const rows = this.#db
      .prepare(`SELECT DISTINCT distinct_id FROM ${where.from} WHERE ${where.sql} ORDER BY distinct_id`)
      .all(...where.params) as Array<{ distinct_id: string }>
    return rows.map((r) => r.distinct_id)
  }

  async distinctIdTallies(query: TallyQuery): Promise<TallyRow[]> {
    const where = compileSqliteWhere(query)
    const windows = query.windows.map(() => ', SUM(timestamp >= ? AND timestamp < ?)').join('')
    return this.#db
      .prepare(`SELECT distinct_id, MIN(timestamp)${windows} FROM ${where.from} WHERE ${where.sql} GROUP BY distinct_id ORDER BY distinct_id`)
      .raw()
      .all(...query.windows.flat(), ...where.params) as TallyRow[]
  }

  async distinctIdTimes(query: TimesQuery): Promise<TimesRow[]> {
    const steps = query.steps.map((step) => compileSqliteWhere({ teamId: query.teamId, event: step.event ?? undefined, properties: step.properties }))
    const where = compileSqliteWhere({ teamId: query.teamId, event: funnelEventNames(query) ?? undefined, after: query.after, before: query.before })
    const lists = steps.map((step) => `, json_group_array(timestamp) FILTER (WHERE ${step.sql})`).join('')
    const any = steps.map((step) => `(${step.sql})`).join(' OR ')
    const stepParams = steps.flatMap((step) => step.params)
    const rows = this.#db
      .prepare(`SELECT distinct_id${lists} FROM ${where.from} WHERE ${where.sql} AND (${any}) GROUP BY distinct_id ORDER BY distinct_id`)
      .raw()
      .all(...stepParams, ...where.params, ...stepParams) as Array<[string, ...string[]]>
    return rows.map(([id, ...lists]) => [id, ...lists.map((list) => (JSON.parse(list) as number[]).sort((a, b) => a - b))])
  }

  /** Runs on the read thread: the rows stay here and only the per-variant (and per-group) sums cross to the caller. */
  async experimentVariants(query: ExperimentVariantsQuery): Promise<ExperimentSums> {
    const steps = experimentSteps(query)
    const funnel = readsExposures(query.aggregation)
    // In activation mode a funnel's step 0 is the activation event, read among the metric events with EXPOSURE_BIT.
    const walks = funnel && (query.activation ?? null) === null
    const { byEntity, walked } = this.#experimentExposures(query, walks)
    // Only these entities' events count (aggregateVariants skips the others'), the matured ones among them.
    const events = compileSqliteMetricEvents(query, byEntity.keys(), { withIds: walks, withExposures: funnel && !walks })
    const keys = query.metric.distinctKeys.length
    const read = function* (db: Db): Generator<[MetricEventRow, string]> {
      for (const row of db.prepare(events.sql).raw().iterate(...events.params) as Iterable<unknown[]>) {
        const strings = row.slice(walks ? 4 : 3).map((v) => (v === null ? null : String(v)))
        const texts = (from: number, to: number) => (from === to ? NO_TEXTS : strings.slice(from, to))
        yield [[row[0] as string, row[1] as number, row[2] as number, texts(keys, strings.length), texts(0, keys)], walks ? (row[3] as string) : '']
      }
    }
    const rows = walks ? withExposureEvents(read(this.#db), walked) : withoutIds(read(this.#db))
    const sessionValues = (property: SessionProperty, sessions: ReadonlySet<string>) => {
      const values = compileSqliteSessionValues(query, property, sessions)
      return new Map(this.#db.prepare(values.sql).raw().all(...values.params) as Array<[string, number]>)
    }
    return aggregateVariants(query.aggregation, steps, query.breakdowns.length, query.metric, query.metric.distinctKeys, query.variants, byEntity, rows, sessionValues)
  }

  /** Runs on the read thread: each entity's first exposure and variant, counted per variant and quarter hour. */
  async experimentExposures(query: ExperimentExposuresQuery): Promise<ExposureCount[]> {
    const { sql, params } = compileSqliteExposures({ ...query, breakdowns: [] })
    const rows: ExposureRow[] = []
    for (const [e, v, t] of this.#db.prepare(sql).raw().iterate(...params) as Iterable<[string, unknown, number]>) {
      if (v !== null) rows.push([e, String(v), t, []])
    }
    return countExposures(exposuresByEntity(rows, query.multipleVariantHandling).values())
  }

  /**
   * Each exposed entity's first exposure, variant and breakdown group (in activation mode, its first activation
   * after its first exposure for the time and group), and with `walks` the exposure events a funnel's walk reads
   * among the step events (in the metric events' time range, in event order). A funnel reads every exposure
   * event once for both, where reading them again among the metric events cost an ordered funnel over 100,000
   * exposures ≈0.7 s of ≈2.5 (docs/performance.md). The rows read are dropped on return, before the metric
   * events are read.
   */
  #experimentExposures(query: ExperimentVariantsQuery, walks: boolean): { byEntity: Map<string, Exposure>; walked: ExposureEvent[] } {
    const exposures = walks ? compileSqliteExposureEvents(query) : compileSqliteExposures(query)
    const rows: ExposureRow[] = []
    const walked: ExposureEvent[] = []
    const { after, before } = query.metric
    for (const row of this.#db.prepare(exposures.sql).raw().iterate(...exposures.params) as Iterable<unknown[]>) {
      const [e, v, t] = row as [string, unknown, number]
      if (v !== null) rows.push([e, String(v), t, row.slice(walks ? 4 : 3).map(String)])
      if (walks && t >= after && t < before) walked.push([e, t, row[3] as string])
    }
    const maturedBy = query.aggregation.maturedBy ?? null
    const activation = query.activation ?? null
    const byEntity =
      activation === null
        ? exposuresByEntity(rows, query.multipleVariantHandling, maturedBy)
        : activatedExposures(exposuresByEntity(rows, query.multipleVariantHandling), this.#activations({ ...query, activation }), maturedBy)
    return { byEntity, walked: sortExposureEvents(walked) }
  }

  #activations(query: ExperimentVariantsQuery & { activation: EventFilter }): Array<[string, number, string[]]> {
    const { sql, params } = compileSqliteActivations(query)
    const rows = this.#db.prepare(sql).raw().all(...params) as Array<[string, number, ...unknown[]]>
    return rows.map(([e, t, ...b]) => [e, t, b.map(String)])
  }

  async close(): Promise<void> {
    this.#db.close()
  }
}
