/**
 * ClickHouse as the event store's reads (the sink is clickhouse-sink.ts): queries read with FINAL so replayed
 * events are never counted twice.
 */
import { hogqlQuerySql } from './clickhouse-query.js'
import { innermost, type HogqlQueryPlan } from './hogql-query.js'
import { picksOne } from './hogql-functions.js'
import type { AnswerValue } from './hogql-values.js'
import type { ClickHouseClient, ClickHouseSettings } from '@clickhouse/client'
import { compileClickHouseExperiment, compileClickHouseExposureCounts, ExperimentRowSummer, type ChExperimentRow } from './clickhouse-experiment.js'
import { compileClickHouseFunnel } from './clickhouse-funnel.js'
import { LegacyFunnelCounter } from './legacy-funnel.js'
import { clampMs, compileClickHouseWhere, groupColumn, propertyTextExpr, msExpr } from './clickhouse-filters.js'
import { dayOf, offsetSql } from './days.js'
import { createClickHouseClient, identifier, quote, type ClickHouseOptions, type ServerFeatures } from './clickhouse-schema.js'
import {
  funnelEventNames,
  type BreakdownQuery,
  type DailyBreakdownQuery,
  type BreakdownRow,
  type DailyBreakdownRow,
  type EventActors,
  type EventFilter,
  type EventPage,
  type EventStore,
  type ExperimentSums,
  type ExperimentExposuresQuery,
  type ExperimentVariantsQuery,
  type ExposureCount,
  type FunnelQuery,
  type FunnelRow,
  type PropertyValuesQuery,
  type StoredEvent,
  type TallyQuery,
  type TallyRow,
  type TimesQuery,
  type TimesRow,
  type ValueColumn,
} from './types.js'

interface ChEventKey {
  uuid: string
  event: string
  distinct_id: string
  ts: string | number
}

/** What tells two rows of FINAL apart here: the sorting key's columns (team and day follow from them). */
function rowKey(uuid: string, r: { event: string; distinct_id: string; ts: string | number }): string {
  return `${uuid}\n${r.event}\n${r.distinct_id}\n${r.ts}`
}

interface ChEventRow {
  id: string
  event: string
  distinct_id: string
  person_id: string
  properties: string
  ts: string | number
  created: string | number
  elements_chain: string
  g0: string
  g1: string
  g2: string
  g3: string
  g4: string
}

/** The columns of a stored event's row, read without FINAL (the newest version of a row is taken by `_timestamp`). */
function eventColumns(f: ServerFeatures): string {
  return `toString(uuid) AS id, event, distinct_id, ${msExpr('timestamp', f)} AS ts, toString(person_id) AS person_id, properties,
    ${msExpr('created_at', f)} AS created, elements_chain,
    \`$group_0\` AS g0, \`$group_1\` AS g1, \`$group_2\` AS g2, \`$group_3\` AS g3, \`$group_4\` AS g4`
}

function toStoredEvent(r: ChEventRow): StoredEvent {
  return {
    id: r.id,
    uuid: r.id,
    event: r.event,
    distinct_id: r.distinct_id,
    person_id: r.person_id,
    properties: JSON.parse(r.properties) as Record<string, unknown>,
    timestamp: new Date(Number(r.ts)).toISOString(),
    created_at: new Date(Number(r.created)).toISOString(),
    elements_chain: r.elements_chain,
    groups: [r.g0, r.g1, r.g2, r.g3, r.g4],
  }
}

/** A column's text for events/values; an empty group key is no value. */
function columnExpr(column: ValueColumn): string {
  if (column === 'event' || column === 'distinct_id') return column
  if (column === 'person_id') return 'toString(person_id)'
  return `nullIf(${groupColumn(Number(column.slice(-1)))}, '')`
}

export class ClickHouseEventStore implements EventStore {
  readonly #client: ClickHouseClient
  readonly #features: ServerFeatures
  readonly #table: string
  /** The table without FINAL. */
  readonly #events: string

  constructor(options: ClickHouseOptions, features: ServerFeatures) {
    this.#client = createClickHouseClient(options)
    this.#features = features
    this.#events = `${identifier(options.database)}.events`
    this.#table = `${this.#events} FINAL`
  }

  async #rows<T>(query: string, settings: ClickHouseSettings = {}): Promise<T[]> {
    const result = await this.#client.query({ query, format: 'JSONEachRow', clickhouse_settings: settings })
    return (await result.json()) as T[]
  }

  /**
   * A page of events in two queries. The first is the page as `FINAL` gives it, reading only what WHERE and
   * ORDER BY need; the second reads the rest of those rows' columns without `FINAL`, keeping each row's newest
   * version (`_timestamp`), which is the one `FINAL` keeps. `FINAL` merges every column of every part it
   * touches, and a part of one ≈100 ms INSERT is a single index granule. With merges stopped and 700 browser
   * events a part, the `lag` scenario's probe page took 342–478 ms in one query and 130–144 in two at 50 parts,
   * 645–741 against 203–240 at 100; at 200 the single query failed on ClickHouse's 3.7 GB memory limit and the
   * two took 400–421 ms. Versions written in the same second tie on `_timestamp`; they are replays of one
   * event, equal but for their person when a merge came in between.
   */
  async list(filter: EventFilter, page: EventPage): Promise<StoredEvent[]> {
    const f = this.#features
    const ts = msExpr('timestamp', f)
    const order = page.ascending ? 'ASC' : 'DESC'
    const keys = await this.#rows<ChEventKey>(
      `SELECT toString(uuid) AS uuid, event, distinct_id, ${ts} AS ts
       FROM ${this.#table} WHERE ${compileClickHouseWhere(filter, f)} ORDER BY ts ${order}, uuid ${order}
       LIMIT ${Math.trunc(page.limit)} OFFSET ${Math.trunc(page.offset)}`,
    )
    if (keys.length === 0) return []
    const events = [...new Set(keys.map((k) => k.event))]
    const rows = await this.#rows<ChEventRow>(
      `SELECT ${eventColumns(f)}
       FROM ${this.#events}
       WHERE team_id = ${Math.trunc(filter.teamId)} AND event IN (${events.map(quote).join(', ')})
         AND toString(uuid) IN (${[...new Set(keys.map((k) => k.uuid))].map(quote).join(', ')})
       ORDER BY _timestamp DESC LIMIT 1 BY id, event, distinct_id, ts`,
    )
    const byKey = new Map(rows.map((r) => [rowKey(r.id, r), r]))
    const out: StoredEvent[] = []
    for (const k of keys) {
      const r = byKey.get(rowKey(k.uuid, k))
      // Gone between the two queries: only a deletion (none in skylark) could do that.
      if (r) out.push(toStoredEvent(r))
    }
    return out
  }

  async get(teamId: number, uuid: string): Promise<StoredEvent | null> {
    const [row] = await this.#rows<ChEventRow>(
      `SELECT ${eventColumns(this.#features)} FROM ${this.#events}
       WHERE team_id = ${Math.trunc(teamId)} AND uuid = toUUID(${quote(uuid)}) ORDER BY _timestamp DESC LIMIT 1`,
    )
    return row ? toStoredEvent(row) : null
  }

  /** Read without FINAL: a replayed row has the same values, and distinct values count it once anyway. */
  async propertyValues(query: PropertyValuesQuery): Promise<string[]> {
    const f = this.#features
    const value = 'property' in query.source ? propertyTextExpr(query.source.property, f) : columnExpr(query.source.column)
    const search = query.search === undefined ? '' : `AND positionCaseInsensitiveUTF8(v, ${quote(query.search)}) > 0`
    const order = query.search === undefined ? 'last DESC, value' : 'length(value), last DESC, value'
    // Aliases are global in ClickHouse: naming the outer column `v` too would make WHERE read assumeNotNull(v).
    const rows = await this.#rows<{ value: string }>(
      `SELECT assumeNotNull(v) AS value, max(ts) AS last
       FROM (SELECT ${value} AS v, ${msExpr('timestamp', f)} AS ts FROM ${this.#events} WHERE ${compileClickHouseWhere(query.filter, f)})
       WHERE isNotNull(v) ${search} GROUP BY value ORDER BY ${order} LIMIT ${Math.trunc(query.limit)}`,
    )
    return rows.map((r) => r.value)
  }

  async actors(filter: EventFilter): Promise<EventActors> {
    const groups = [0, 1, 2, 3, 4].map((i) => `groupUniqArray(${groupColumn(i)}) AS g${i}`).join(', ')
    const [row] = await this.#rows<Record<string, string[]>>(
      `SELECT groupUniqArray(distinct_id) AS d, ${groups} FROM ${this.#events} WHERE ${compileClickHouseWhere(filter, this.#features)}`,
    )
    return {
      distinctIds: [...(row?.d ?? [])].sort(),
      groupKeys: [0, 1, 2, 3, 4].map((i) => (row?.[`g${i}`] ?? []).filter((key) => key !== '').sort()),
    }
  }

  async count(filter: EventFilter): Promise<number> {
    const [row] = await this.#rows<{ n: string }>(
      `SELECT count() AS n FROM ${this.#table} WHERE ${compileClickHouseWhere(filter, this.#features)}`,
    )
    return Number(row.n)
  }

  async breakdown(query: BreakdownQuery): Promise<BreakdownRow[]> {
    const value = propertyTextExpr(query.breakdown, this.#features)
    const measure = query.math === 'persons' ? 'uniqExact(person_id)' : 'count()'
    const rows = await this.#rows<{ value: string | null; n: string }>(
      `SELECT ${value} AS value, ${measure} AS n FROM ${this.#table}
       WHERE ${compileClickHouseWhere(query, this.#features)} GROUP BY value ORDER BY n DESC`,
    )
    return rows.map((r) => ({ value: r.value, count: Number(r.n) }))
  }

  async dailyBreakdown(query: DailyBreakdownQuery): Promise<DailyBreakdownRow[]> {
    const value = propertyTextExpr(query.breakdown, this.#features)
    const measure = query.math === 'persons' ? 'uniqExact(person_id)' : 'count()'
    // Days are computed from milliseconds and the zone's offsets, not toDate(), which would follow the server's
    // time zone (and 18.16's tz database, which may be older than Node's).
    const ms = `toInt64(${msExpr('timestamp', this.#features)})`
    const rows = await this.#rows<{ day: string; value: string | null; n: string }>(
      `SELECT intDiv(${ms} + ${offsetSql(ms, query.offsets ?? [])}, 86400000) AS day, ${value} AS value, ${measure} AS n FROM ${this.#table}
       WHERE ${compileClickHouseWhere(query, this.#features)} GROUP BY day, value ORDER BY day, value`,
    )
    return rows.map((r) => ({ day: dayOf(Number(r.day)), value: r.value, count: Number(r.n) }))
  }

  async funnel(query: FunnelQuery): Promise<FunnelRow[]> {
    if (query.steps.length === 0 || query.breakdownValues.length === 0) return []
    const counter = new LegacyFunnelCounter(query)
    const result = await this.#client.query({ query: compileClickHouseFunnel(query, this.#table, this.#features), format: 'JSONEachRow' })
    for await (const rows of result.stream<{ ev: Array<[number | string, string, number | string, string]> }>()) {
      for (const row of rows) {
        const { ev } = row.json()
        // A breakdown text is read on first-step events only, which have one (the mask's first bit).
        counter.add(ev.map(([t, , m]) => [Number(t), Number(m)] as const), ev.map((e) => e[3]))
      }
    }
    return counter.result()
  }

  async distinctIds(filter: EventFilter): Promise<string[]> {
    const rows = await this.#rows<{ distinct_id: string }>(
      `SELECT DISTINCT distinct_id FROM ${this.#table} WHERE ${compileClickHouseWhere(filter, this.#features)} ORDER BY distinct_id`,
    )
    return rows.map((r) => r.distinct_id)
  }

  async distinctIdTallies(query: TallyQuery): Promise<TallyRow[]> {
    const ms = msExpr('timestamp', this.#features)
    const windows = query.windows.map(([from, to], k) => `, countIf(${ms} >= ${clampMs(from)} AND ${ms} < ${clampMs(to)}) AS w${k}`).join('')
    // JSONEachRow, not a compact format: 18.16 has none for rows.
    const rows = await this.#rows<Record<string, string | number>>(
      `SELECT distinct_id, min(${ms}) AS first${windows} FROM ${this.#table} WHERE ${compileClickHouseWhere(query, this.#features)} GROUP BY distinct_id ORDER BY distinct_id`,
    )
    return rows.map((row) => [String(row.distinct_id), Number(row.first), ...query.windows.map((_, k) => Number(row[`w${k}`]))])
  }

  async distinctIdTimes(query: TimesQuery): Promise<TimesRow[]> {
    const ms = msExpr('timestamp', this.#features)
    const steps = query.steps.map((step) => compileClickHouseWhere({ teamId: query.teamId, event: step.event ?? undefined, properties: step.properties }, this.#features))
    const lists = steps.map((step, k) => `, groupArrayIf(${ms}, ${step}) AS t${k}`).join('')
    const where = compileClickHouseWhere({ teamId: query.teamId, event: funnelEventNames(query) ?? undefined, after: query.after, before: query.before }, this.#features)
    const any = steps.map((step) => `(${step})`).join(' OR ')
    const rows = await this.#rows<Record<string, string | Array<string | number>>>(`SELECT distinct_id${lists} FROM ${this.#table} WHERE ${where} AND (${any}) GROUP BY distinct_id ORDER BY distinct_id`)
    return rows.map((row) => [String(row.distinct_id), ...steps.map((_, k) => (row[`t${k}`] as Array<string | number>).map(Number).sort((a, b) => a - b))])
  }

  /**
   * Aggregated in ClickHouse (clickhouse-experiment.ts): a few rows per variant, or a few numbers per entity
   * read as a stream, each chunk added up as it arrives so no one step holds the event loop long.
   */
  async experimentVariants(query: ExperimentVariantsQuery): Promise<ExperimentSums> {
    const { sql, perVariant } = compileClickHouseExperiment(query, this.#table, this.#features)
    const summer = new ExperimentRowSummer(query, perVariant)
    const result = await this.#client.query({ query: sql, format: 'JSONEachRow', clickhouse_settings: EXPERIMENT_QUERY_SETTINGS })
    for await (const rows of result.stream<ChExperimentRow>()) for (const row of rows) summer.add(row.json())
    return summer.result()
  }

  async experimentExposures(query: ExperimentExposuresQuery): Promise<ExposureCount[]> {
    const rows = await this.#rows<{ variant: string; at: string; n: string }>(compileClickHouseExposureCounts(query, this.#table, this.#features), EXPERIMENT_QUERY_SETTINGS)
    return rows.map((r) => ({ variant: r.variant, at: Number(r.at), count: Number(r.n) }))
  }

  async hogqlQuery(teamId: number, plan: HogqlQueryPlan): Promise<AnswerValue[][]> {
    const { after, before } = innermost(plan)
    const where = compileClickHouseWhere({ teamId, after, before }, this.#features)
    const rows = await this.#rows<Record<string, AnswerValue>>(hogqlQuerySql(plan, this.#table, where, this.#features), EXPERIMENT_QUERY_SETTINGS)
    // count and uniq are UInt64, and arithmetic of them (count() - 1) or a subquery's max of them Int64 or UInt64,
    // which JSON writes as texts.
    const numeric = plan.columns.map((c) => (c.math !== null && !picksOne(c.math)) || (c.math?.expr ?? c.expr).type === 'number')
    return rows.map((r) => plan.columns.map((_, i) => {
      const v = r[`col_${i}`]
      return numeric[i] && typeof v === 'string' ? Number(v) : v
    }))
  }

  async close(): Promise<void> {
    await this.#client.close()
  }
}

/**
 * The experiment reads' query size: a person filter of the new engine writes its persons' distinct ids into
 * the query (up to 4 MiB, ≈100,000 ids; the exposure's appears two or three times), past 18.16's defaults of
 * 256 KiB of text and 50,000 elements of its syntax tree.
 */
const EXPERIMENT_QUERY_SETTINGS: ClickHouseSettings = {
  max_query_size: String(64 * 1024 * 1024),
  max_ast_elements: String(2_000_000),
  max_expanded_ast_elements: String(2_000_000),
}
