/**
 * The definitions API's reads of persons.db (definitions.ts writes them): event definitions and property
 * definitions of a project, filtered, ordered and counted as PostHog's event_definition.py and
 * taxonomy/property_definition_api.py do. A list's statement depends on which filters are set, so
 * statements are prepared per shape and kept (a few dozen shapes at most).
 */
import type { Statement } from 'better-sqlite3'
import type { Db } from '../storage/index.js'
import type { PropertyType } from './property-types.js'

export interface EventDefinitionRecord {
  id: string
  name: string
  created_at: string
  last_seen_at: string
}

export interface PropertyDefinitionRecord {
  id: string
  name: string
  is_numerical: boolean
  property_type: PropertyType | null
  /** Whether it was seen on any of the events asked about; null when none were. */
  is_seen_on_filtered_events: boolean | null
}

/** PostHog's `event_type`: every event, names without a `$`, or names with one. */
export type EventKind = 'all' | 'custom' | 'posthog'

export type EventOrderField = 'name' | 'last_seen_at' | 'last_seen_at::date' | 'created_at' | 'created_at::date'

export interface EventDefinitionFilter {
  /** Every term must be in the name (`LIKE %term%`, in any ASCII case; `%` and `_` are wildcards, `\` escapes). */
  search: string[]
  kind: EventKind
  /** Exactly these names; null: any. */
  names: string[] | null
  excluded: string[]
  /** Only names last seen after this (ISO 8601); null: any. */
  seenAfter: string | null
  /** Empty: PostHog's default, the day last seen (newest first) then the name. */
  order: Array<{ field: EventOrderField; descending: boolean }>
}

export interface PropertyDefinitionFilter {
  /** 1 event, 2 person, 3 group, 4 session (PostHog's types; skylark records no session properties). */
  kind: number
  /** -1 unless a group's. */
  groupTypeIndex: number
  names: string[] | null
  numerical: boolean
  /** True: only `$feature/…` keys; false: none of them; null: either. */
  featureFlag: boolean | null
  search: string[]
  excluded: string[]
  /** Event properties only: every `$` key and PostHog's own non-`$` keys left out. */
  excludeCore: boolean
  /** Event properties only: `is_seen_on_filtered_events` says whether each was seen on one of these. */
  eventNames: string[] | null
  /** Only keys seen on those events (on any event when no names are given). */
  onlySeen: boolean
}

export interface Page {
  limit: number
  offset: number
}

/** Event properties ingestion leaves behind that PostHog never lists (ALWAYS_EXCLUDED_EVENT_PROPERTIES). */
const ALWAYS_EXCLUDED = [
  'distinct_id', '$set', '$set_once', '$initial_referrer', '$initial_referring_domain',
  '$groups', '$group_type', '$group_key', '$group_set', '$group_0', '$group_1', '$group_2', '$group_3', '$group_4',
]
/**
 * The keys without a `$` that PostHog's taxonomy describes as event properties (EXCLUDED_EVENT_CORE_PROPERTIES):
 * campaign parameters, the mobile lifecycle events' keys, revenue.
 */
const CORE_WITHOUT_DOLLAR = [
  'utm_source', 'utm_medium', 'utm_campaign', 'utm_content', 'utm_term',
  'gclid', 'gad_source', 'gclsrc', 'dclid', 'gbraid', 'wbraid', 'fbclid', 'msclkid', 'twclid', 'li_fat_id', 'mc_cid',
  'igshid', 'ttclid', 'rdt_cid', 'epik', 'qclid', 'sccid', 'irclid', '_kx',
  'from_background', 'url', 'referring_application', 'version', 'previous_version', 'build', 'previous_build',
  'revenue', 'currency',
]

const EVENT_ORDER_SQL: ReadonlyMap<EventOrderField, string> = new Map([
  ['name', 'name'],
  ['last_seen_at', 'last_seen_at'],
  ['last_seen_at::date', 'substr(last_seen_at, 1, 10)'],
  ['created_at', 'created_at'],
  ['created_at::date', 'substr(created_at, 1, 10)'],
])

const EVENT_COLUMNS = 'id, name, created_at, last_seen_at'
const PROPERTY_COLUMNS = 'd.id, d.name, d.is_numerical, d.property_type'

type PropertyRow = { id: string; name: string; is_numerical: number; property_type: PropertyType | null; seen: number | null }

function toProperty(row: PropertyRow): PropertyDefinitionRecord {
  return {
    id: row.id,
    name: row.name,
    is_numerical: row.is_numerical === 1,
    property_type: row.property_type,
    is_seen_on_filtered_events: row.seen === null ? null : row.seen === 1,
  }
}

/** A WHERE clause and its parameters, built clause by clause. */
class Where {
  readonly clauses: string[] = []
  readonly params: unknown[] = []

  add(clause: string, ...params: unknown[]): void {
    this.clauses.push(clause)
    this.params.push(...params)
  }

  /** PostHog's term search: each term must match. */
  search(column: string, terms: readonly string[]): void {
    for (const term of terms) this.add(`${column} LIKE ? ESCAPE '\\'`, `%${term}%`)
  }

  get sql(): string {
    return this.clauses.join(' AND ')
  }
}

export class DefinitionReads {
  readonly #db: Db
  readonly #statements = new Map<string, Statement>()
  private readonly s: {
    event: Statement<[number, string], EventDefinitionRecord>
    property: Statement<[number, string], PropertyRow>
  }

  constructor(db: Db) {
    this.#db = db
    this.s = {
      event: db.prepare(`SELECT ${EVENT_COLUMNS} FROM event_definitions WHERE team_id = ? AND id = ?`),
      property: db.prepare(`SELECT ${PROPERTY_COLUMNS}, NULL AS seen FROM property_definitions d WHERE d.team_id = ? AND d.id = ?`),
    }
  }

  event(teamId: number, id: string): EventDefinitionRecord | null {
    return this.s.event.get(teamId, id) ?? null
  }

  property(teamId: number, id: string): PropertyDefinitionRecord | null {
    const row = this.s.property.get(teamId, id)
    return row ? toProperty(row) : null
  }

  /** Whether the project has ingested any event (PostHog's team.ingested_event). */
  hasEvents(teamId: number): boolean {
    return this.#statement('SELECT 1 FROM event_definitions WHERE team_id = ? LIMIT 1').get(teamId) !== undefined
  }

  /** Which of the names the project has ingested events of. */
  eventNamesSeen(teamId: number, names: readonly string[]): Set<string> {
    const rows = this.#statement('SELECT name FROM event_definitions WHERE team_id = ? AND name IN (SELECT value FROM json_each(?))')
      .pluck()
      .all(teamId, JSON.stringify(names)) as string[]
    return new Set(rows)
  }

  /** One page of the project's event definitions, and how many match. */
  events(teamId: number, filter: EventDefinitionFilter, page: Page): { count: number; results: EventDefinitionRecord[] } {
    const where = new Where()
    where.add('team_id = ?', teamId)
    if (filter.kind === 'custom') where.add("name NOT GLOB '$*'")
    if (filter.kind === 'posthog') where.add("name GLOB '$*'")
    where.search('name', filter.search)
    if (filter.names !== null) where.add('name IN (SELECT value FROM json_each(?))', JSON.stringify(filter.names))
    if (filter.excluded.length > 0) where.add('name NOT IN (SELECT value FROM json_each(?))', JSON.stringify(filter.excluded))
    if (filter.seenAfter !== null) where.add('last_seen_at > ?', filter.seenAfter)

    let order = filter.order.map(({ field, descending }) => `${EVENT_ORDER_SQL.get(field)} ${descending ? 'DESC' : 'ASC'}`)
    if (order.length === 0) {
      order = ['substr(last_seen_at, 1, 10) DESC', 'name ASC']
      // A search puts the shortest names, the closest matches, first.
      if (filter.search.length > 0) order.unshift('length(name) ASC')
    } else if (!filter.order.some((o) => o.field === 'name')) {
      // The name is unique in a project: the tiebreaker that keeps pages from overlapping.
      order.push('name ASC')
    }
    const count = this.#statement(`SELECT COUNT(*) FROM event_definitions WHERE ${where.sql}`).pluck().get(...where.params) as number
    const results = this.#statement(`SELECT ${EVENT_COLUMNS} FROM event_definitions WHERE ${where.sql} ORDER BY ${order.join(', ')} LIMIT ? OFFSET ?`)
      .all(...where.params, page.limit, page.offset) as EventDefinitionRecord[]
    return { count, results }
  }

  /** One page of the project's property definitions of one kind, and how many match. */
  properties(teamId: number, filter: PropertyDefinitionFilter, page: Page): { count: number; results: PropertyDefinitionRecord[] } {
    const where = new Where()
    where.add('d.team_id = ? AND d.type = ? AND d.group_type_index = ?', teamId, filter.kind, filter.groupTypeIndex)
    if (filter.names !== null) where.add('d.name IN (SELECT value FROM json_each(?))', JSON.stringify(filter.names))
    if (filter.numerical) where.add("d.is_numerical = 1 AND d.name NOT IN ('distinct_id', 'timestamp')")
    // GLOB, not LIKE: PostHog's LIKE is case-sensitive, SQLite's is not.
    if (filter.featureFlag === true) where.add("d.name GLOB '$feature/*'")
    if (filter.featureFlag === false) where.add("d.name NOT GLOB '$feature/*'")
    where.search('d.name', filter.search)
    if (filter.excluded.length > 0) where.add('d.name NOT IN (SELECT value FROM json_each(?))', JSON.stringify(filter.excluded))
    const isEvent = filter.kind === 1
    if (isEvent && filter.excludeCore) where.add("d.name NOT GLOB '$*' AND d.name NOT IN (SELECT value FROM json_each(?))", JSON.stringify(CORE_WITHOUT_DOLLAR))
    // PostHog also leaves out the `$session_entry_*` keys its taxonomy describes; skylark, every one.
    else if (isEvent) where.add("d.name NOT IN (SELECT value FROM json_each(?)) AND d.name NOT GLOB '$session_entry_*'", JSON.stringify(ALWAYS_EXCLUDED))

    const events = isEvent && filter.eventNames !== null && filter.eventNames.length > 0 ? JSON.stringify(filter.eventNames) : null
    const seenOn = (names: string | null) =>
      `EXISTS (SELECT 1 FROM event_properties p WHERE p.team_id = d.team_id AND p.property = d.name${names === null ? '' : ' AND p.event IN (SELECT value FROM json_each(?))'})`
    if (isEvent && filter.onlySeen) {
      if (events === null) where.add(seenOn(null))
      else where.add(seenOn(events), events)
    }
    const seen = events === null ? 'NULL' : seenOn(events)
    const seenParams = events === null ? [] : [events]

    const count = this.#statement(`SELECT COUNT(*) FROM property_definitions d WHERE ${where.sql}`).pluck().get(...where.params) as number
    const rows = this.#statement(
      `SELECT ${PROPERTY_COLUMNS}, ${seen} AS seen FROM property_definitions d WHERE ${where.sql} ORDER BY seen DESC, d.name LIMIT ? OFFSET ?`,
    ).all(...seenParams, ...where.params, page.limit, page.offset) as PropertyRow[]
    return { count, results: rows.map(toProperty) }
  }

  #statement(sql: string): Statement {
    let statement = this.#statements.get(sql)
    if (statement === undefined) {
      statement = this.#db.prepare(sql)
      this.#statements.set(sql, statement)
    }
    return statement
  }
}
