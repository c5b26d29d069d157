/**
 * Reading ClickHouse's events once in the table's order, `(team_id, toDate(timestamp), event,
 * cityHash64(distinct_id), cityHash64(uuid))` (scan.ts says what for). The pages go one (team, day) at a time,
 * the days listed once per process (one pass over three small columns). Within a day a page is found in two
 * steps: the key columns alone give the page's last key (ORDER BY … LIMIT 1 OFFSET), then the rows between
 * the cursor and that key are read through the primary index. 18.16 cannot read in key order, so an ORDER BY
 * with the properties would read and sort the rest of the day's properties for every page; the first step
 * reads the rest of the day's keys only. Rows are read without FINAL: a row ReplacingMergeTree has not
 * collapsed yet is read twice, which defines nothing more.
 */
import type { ClickHouseClient } from '@clickhouse/client'
import { msExpr } from './clickhouse-filters.js'
import { createClickHouseClient, detectFeatures, identifier, quote, type ClickHouseOptions, type ServerFeatures } from './clickhouse-schema.js'
import type { EventScan, ScanPage, ScannedEvent } from './scan.js'

/** Where a page ended: a (team, day) and the last key read in it; `done` once the day has no more. */
interface Position {
  t: number
  d: string
  k: [event: string, h1: string, h2: string] | null
  done: boolean
}

interface Day {
  t: number
  d: string
}

export class ClickHouseEventScan implements EventScan {
  readonly #options: ClickHouseOptions
  readonly #table: string
  #client: ClickHouseClient | null = null
  #features: ServerFeatures | null = null
  /** The (team, day) pairs holding events up to the bound, in key order; listed at the first page. */
  #days: { bound: string; days: Day[] } | null = null

  constructor(options: ClickHouseOptions) {
    this.#options = options
    this.#table = `${identifier(options.database)}.events`
  }

  /** Connects (once) and learns what the server supports, which the queries' text depends on. */
  async #ready(): Promise<void> {
    this.#client ??= createClickHouseClient(this.#options)
    this.#features ??= await detectFeatures(this.#client)
  }

  async #rows<T>(query: string): Promise<T[]> {
    const result = await this.#client!.query({ query, format: 'JSONEachRow' })
    return (await result.json()) as T[]
  }

  /** The last key column: `cityHash64(uuid)`, or `uuid` on servers whose cityHash64 does not take UUIDs. */
  #h2(): { expr: string; literal: (value: string) => string } {
    return this.#features!.dateTime64
      ? { expr: 'cityHash64(uuid)', literal: (v) => `toUInt64(${quote(v)})` }
      : { expr: 'uuid', literal: (v) => `toUUID(${quote(v)})` }
  }

  async bound(): Promise<string | null> {
    await this.#ready()
    const [row] = await this.#rows<{ ms: string; n: string }>(`SELECT toString(max(${msExpr('created_at', this.#features!)})) AS ms, count() AS n FROM ${this.#table}`)
    return Number(row.n) > 0 ? JSON.stringify({ ms: Number(row.ms) }) : null
  }

  async page(cursor: string | null, bound: string, limit: number): Promise<ScanPage> {
    await this.#ready()
    const days = await this.#listDays(bound)
    let at: Position | null = cursor === null ? null : (JSON.parse(cursor) as Position)
    let i = at === null ? 0 : days.findIndex((day) => day.t > at!.t || (day.t === at!.t && day.d >= at!.d))
    if (i < 0) return { events: [], cursor: null }
    for (; i < days.length; i++) {
      const day = days[i]
      const within = at !== null && at.t === day.t && at.d === day.d
      if (within && at!.done) continue
      const page = await this.#page(day, within ? at!.k : null, bound, limit)
      if (page.events.length > 0) return page
      at = null
    }
    return { events: [], cursor: null }
  }

  async #listDays(bound: string): Promise<Day[]> {
    if (this.#days?.bound !== bound) {
      const rows = await this.#rows<{ t: string; d: string }>(
        `SELECT team_id AS t, toString(toDate(timestamp)) AS d FROM ${this.#table} WHERE ${this.#notPast(bound)} GROUP BY t, d ORDER BY t, d`,
      )
      this.#days = { bound, days: rows.map((r) => ({ t: Number(r.t), d: r.d })) }
    }
    return this.#days.days
  }

  #notPast(bound: string): string {
    return `${msExpr('created_at', this.#features!)} <= ${Number((JSON.parse(bound) as { ms: number }).ms)}`
  }

  /** `op` '>' : keys after `key`; '<=': keys up to it. */
  #compare(key: [string, string, string], op: '>' | '<='): string {
    const h2 = this.#h2()
    const strict = op === '>' ? '>' : '<'
    return `(event ${strict} ${quote(key[0])} OR (event = ${quote(key[0])} AND (cityHash64(distinct_id) ${strict} toUInt64(${quote(key[1])})
      OR (cityHash64(distinct_id) = toUInt64(${quote(key[1])}) AND ${h2.expr} ${op} ${h2.literal(key[2])}))))`
  }

  async #page(day: Day, after: Position['k'], bound: string, limit: number): Promise<ScanPage> {
    const h2 = this.#h2()
    const where = [`team_id = ${Math.trunc(day.t)}`, `toDate(timestamp) = toDate(${quote(day.d)})`, this.#notPast(bound)]
    if (after) where.push(this.#compare(after, '>'))
    const [end] = await this.#rows<{ e: string; h1: string; h2: string }>(
      `SELECT event AS e, toString(cityHash64(distinct_id)) AS h1, toString(${h2.expr}) AS h2 FROM ${this.#table}
       WHERE ${where.join(' AND ')} ORDER BY event, cityHash64(distinct_id), ${h2.expr} LIMIT 1 OFFSET ${Math.max(0, limit - 1)}`,
    )
    const key: Position['k'] = end ? [end.e, end.h1, end.h2] : null
    if (key) where.push(this.#compare(key, '<='))
    const rows = await this.#rows<{ team_id: string; event: string; properties: string; created: string }>(
      `SELECT team_id, event, properties, toString(${msExpr('created_at', this.#features!)}) AS created FROM ${this.#table} WHERE ${where.join(' AND ')}`,
    )
    const events: ScannedEvent[] = rows.map((r) => ({ team_id: Number(r.team_id), event: r.event, properties: r.properties, created: Number(r.created) }))
    // Without a last key the rest of the day fitted in this page: the day is done.
    const position: Position = { t: day.t, d: day.d, k: key, done: key === null }
    return { events, cursor: JSON.stringify(position) }
  }

  async close(): Promise<void> {
    await this.#client?.close()
    this.#client = null
  }
}
