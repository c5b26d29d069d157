/**
 * The persons API's reads of persons.db: persons, groups and ingestion warnings of a project, listed and
 * counted with PostHog's filters (list-filters.ts), and the distinct ids the events API narrows to.
 */
import type { Statement } from 'better-sqlite3'
import type { JsonObject } from '../common/json.js'
import type { Db } from '../storage/index.js'
import { compileSqliteProperties, hogqlReadSql, innermost, runHogqlQuery, sqlitePropertyPathText, sqlitePropertyText, type AnswerValue, type HogqlQueryPlan, type FieldLookupOf, type PropertyNode, type PropertyPath, type QueryDistinctId, type QueryGroup, type QueryPerson, type RegexEngine } from '../storage/events/index.js'
import { groupsWhere, personsWhere, type GroupFilters, type PersonFilters } from './list-filters.js'
import { parseObject, toPerson, type PersonRecord, type PersonRowDb } from './rows.js'

export interface PersonWithDistinctIds extends PersonRecord {
  distinct_ids: string[]
}

export interface GroupRecord {
  group_type_index: number
  group_key: string
  group_properties: JsonObject
  created_at: string
}

export interface IngestionWarningRecord {
  type: string
  source: string
  details: JsonObject
  /** ISO 8601. */
  timestamp: string
}

export interface PersonListFilter extends PersonFilters {
  limit: number
  offset: number
}

/** True when any filter is set: the list then needs a statement of its own. */
function filtered(filter: PersonFilters & GroupFilters): boolean {
  return Boolean(filter.distinctId || filter.email || filter.search || filter.groupKey || filter.properties?.length)
}

/** The rows read while the text of their ids (`idOf`) stays within `maxChars` together; null (reading no further) past it. */
function capped<T>(rows: IterableIterator<T>, maxChars: number, idOf: (row: T) => string): T[] | null {
  const out: T[] = []
  let chars = 0
  for (const row of rows) {
    chars += idOf(row).length
    if (chars > maxChars) {
      rows.return?.()
      return null
    }
    out.push(row)
  }
  return out
}

const itself = (id: string) => id

/** `[id, text]` rows as each text with its ids, or null once the ids' text passes `maxChars` (read no further). */
function byText<T extends string | number>(rows: IterableIterator<[string, T]>, maxChars: number): Array<{ text: T; ids: string[] }> | null {
  const read = capped(rows, maxChars, ([id]) => id)
  if (read === null) return null
  const out = new Map<T, string[]>()
  for (const [id, text] of read) {
    const ids = out.get(text)
    if (ids) ids.push(id)
    else out.set(text, [id])
  }
  return [...out].map(([text, ids]) => ({ text, ids }))
}

/** Rows of a key and a stored date and time (ISO text), the time in ms. */
function* timesOf(rows: Iterable<[string, string | number]>): Generator<[string, number]> {
  for (const [key, at] of rows) yield [key, Date.parse(at as string)]
}

export class PersonListing {
  readonly #db: Db
  private readonly s: {
    listPersons: Statement<[number, number, number], PersonRowDb>
    countPersons: Statement<[number], { n: number }>
    personByUuid: Statement<[number, string], PersonRowDb>
    distinctIdsOf: Statement<[string], { person_id: number; distinct_id: string }>
    distinctIdsOfUuid: Statement<[number, string], { distinct_id: string | null }>
    listGroups: Statement<[number, number, number, number], { group_key: string; properties: string; created_at: string }>
    countGroups: Statement<[number, number], { n: number }>
    listWarnings: Statement<[number, number, number], { type: string; source: string; details: string; timestamp: string }>
    countWarnings: Statement<[number], { n: number }>
  }

  /** Runs the match() of a HogQL query of persons (none: such a query fails). */
  readonly #regex: RegexEngine | null

  constructor(db: Db, regex: RegexEngine | null = null) {
    this.#db = db
    this.#regex = regex
    this.s = {
      listPersons: db.prepare(
        `SELECT id, uuid, properties, is_identified, created_at FROM persons
         WHERE team_id = ? ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?`,
      ),
      countPersons: db.prepare('SELECT COUNT(*) AS n FROM persons WHERE team_id = ?'),
      personByUuid: db.prepare('SELECT id, uuid, properties, is_identified, created_at FROM persons WHERE team_id = ? AND uuid = ?'),
      distinctIdsOf: db.prepare(
        `SELECT person_id, distinct_id FROM person_distinct_ids
         WHERE person_id IN (SELECT value FROM json_each(?)) ORDER BY distinct_id`,
      ),
      distinctIdsOfUuid: db.prepare(
        `SELECT d.distinct_id FROM persons p LEFT JOIN person_distinct_ids d ON d.person_id = p.id
         WHERE p.team_id = ? AND p.uuid = ? ORDER BY d.distinct_id`,
      ),
      listGroups: db.prepare(
        `SELECT group_key, properties, created_at FROM groups WHERE team_id = ? AND group_type_index = ?
         ORDER BY created_at DESC, group_key DESC LIMIT ? OFFSET ?`,
      ),
      countGroups: db.prepare('SELECT COUNT(*) AS n FROM groups WHERE team_id = ? AND group_type_index = ?'),
      listWarnings: db.prepare(
        `SELECT type, source, details, timestamp FROM ingestion_warnings
         WHERE team_id = ? ORDER BY id DESC LIMIT ? OFFSET ?`,
      ),
      countWarnings: db.prepare('SELECT COUNT(*) AS n FROM ingestion_warnings WHERE team_id = ?'),
    }
  }

  /** Persons of a project, newest first (PostHog's `-created_at, -id`), each with its distinct ids, filtered. */
  listPersons(teamId: number, filter: PersonListFilter): PersonWithDistinctIds[] {
    let rows: PersonRowDb[]
    if (!filtered(filter)) {
      rows = this.s.listPersons.all(teamId, filter.limit, filter.offset)
    } else {
      const where = personsWhere(teamId, filter)
      rows = this.#db
        .prepare(`SELECT id, uuid, properties, is_identified, created_at FROM persons WHERE ${where.sql} ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?`)
        .all(...where.params, filter.limit, filter.offset) as PersonRowDb[]
    }
    if (rows.length === 0) return []
    const ids = new Map<number, string[]>(rows.map((row) => [row.id, []]))
    for (const row of this.s.distinctIdsOf.all(JSON.stringify([...ids.keys()]))) ids.get(row.person_id)?.push(row.distinct_id)
    return rows.map((row) => ({ ...toPerson(row), distinct_ids: ids.get(row.id) ?? [] }))
  }

  /**
   * A HogQL query of the persons, groups or distinct ids table (`FROM persons`, `groups`, `person_distinct_ids`): the
   * project's persons (or groups) read once with the texts of the property paths the plan reads, as the SQLite event
   * store reads events, and the plan run on them (hogql-query-run.ts). Values as the event stores give them:
   * created_at in ms.
   */
  hogqlQuery(teamId: number, plan: HogqlQueryPlan): AnswerValue[][] {
    const base = innermost(plan)
    if (base.table === 'person_distinct_ids') return runHogqlQuery(plan, this.#distinctIdRows(teamId), this.#regex)
    const read = hogqlReadSql(base)
    const [columns, table] = base.table === 'groups' ? ['group_type_index, group_key, created_at', 'groups'] : ['uuid, created_at, is_identified', 'persons']
    const rows = this.#db.prepare(`SELECT ${columns}, ${read.sql} FROM ${table} WHERE team_id = ?`).raw().iterate(...read.params, teamId) as IterableIterator<unknown[]>
    function* persons(): Generator<QueryPerson> {
      for (const [id, createdAt, identified, properties, ...values] of rows) {
        yield { id: id as string, created_at: Date.parse(createdAt as string), is_identified: identified as number, properties: (properties as string | null) ?? undefined, texts: values as Array<string | null> }
      }
    }
    function* groups(): Generator<QueryGroup> {
      for (const [index, key, createdAt, properties, ...values] of rows) {
        yield { index: index as number, key: key as string, created_at: Date.parse(createdAt as string), properties: (properties as string | null) ?? undefined, texts: values as Array<string | null> }
      }
    }
    return runHogqlQuery(plan, base.table === 'groups' ? groups() : persons(), this.#regex)
  }

  /** The project's distinct ids, each with its person's uuid (`FROM person_distinct_ids`). */
  *#distinctIdRows(teamId: number): Generator<QueryDistinctId> {
    const rows = this.#db.prepare('SELECT d.distinct_id, p.uuid FROM person_distinct_ids d JOIN persons p ON p.id = d.person_id WHERE d.team_id = ?').raw().iterate(teamId) as IterableIterator<[string, string]>
    for (const [distinctId, personId] of rows) yield { distinct_id: distinctId, person_id: personId, texts: [] }
  }

  /** The project's person with this uuid (lower-case), with its distinct ids, or null. */
  personByUuid(teamId: number, uuid: string): PersonWithDistinctIds | null {
    const row = this.s.personByUuid.get(teamId, uuid)
    if (!row) return null
    return { ...toPerson(row), distinct_ids: this.s.distinctIdsOf.all(JSON.stringify([row.id])).map((r) => r.distinct_id) }
  }

  /** The distinct ids of the person with this uuid, or null when the project has no such person. */
  distinctIdsOfPerson(teamId: number, uuid: string): string[] | null {
    const rows = this.s.distinctIdsOfUuid.all(teamId, uuid.toLowerCase())
    if (rows.length === 0) return null
    return rows.flatMap((r) => (r.distinct_id === null ? [] : [r.distinct_id]))
  }

  /**
   * The distinct ids of the project's persons whose properties meet every filter (with `failing`, of those that
   * do not), or null once their text passes `maxChars` (read no further).
   */
  distinctIdsMatching(teamId: number, properties: readonly PropertyNode[], maxChars: number, failing = false): string[] | null {
    const where = personsWhere(teamId, { properties })
    return this.#distinctIdsOf(teamId, `SELECT id FROM persons WHERE ${where.sql}`, where.params, maxChars, failing)
  }

  /** The distinct ids of a static cohort's members (with `failing`, of the other persons), as distinctIdsMatching. */
  distinctIdsInCohort(teamId: number, cohortId: number, maxChars: number, failing = false): string[] | null {
    return this.#distinctIdsOf(teamId, 'SELECT person_id FROM cohort_people WHERE team_id = ? AND cohort_id = ?', [teamId, cohortId], maxChars, failing)
  }

  /**
   * Each text a person property (or, a path, a value within one: HogQL's `person.properties.a.b`) has among the
   * project's persons now (as the event store reads a property's text: strings unquoted, other JSON as written),
   * with the distinct ids of the persons that have it; null once their ids pass `maxChars`.
   */
  distinctIdsByProperty(teamId: number, key: string | PropertyPath, maxChars: number): Array<{ text: string; ids: string[] }> | null {
    const text = typeof key === 'string' ? sqlitePropertyText(key) : sqlitePropertyPathText(key)
    const rows = this.#db
      .prepare(`SELECT d.distinct_id AS id, p.v AS v FROM person_distinct_ids d JOIN (SELECT id, ${text.sql} AS v FROM persons WHERE team_id = ?) p ON p.id = d.person_id WHERE d.team_id = ? AND p.v IS NOT NULL`)
      .raw()
      .iterate(...text.params, teamId, teamId) as IterableIterator<[string, string]>
    return byText(rows, maxChars)
  }

  /** Each text a group property (or a value within one) has among the project's groups of a type now, with their keys, as distinctIdsByProperty. */
  groupKeysByProperty(teamId: number, groupTypeIndex: number, key: string | PropertyPath, maxChars: number): Array<{ text: string; ids: string[] }> | null {
    const text = typeof key === 'string' ? sqlitePropertyText(key) : sqlitePropertyPathText(key)
    const rows = this.#db
      .prepare(`SELECT group_key, v FROM (SELECT group_key, ${text.sql} AS v FROM groups WHERE team_id = ? AND group_type_index = ?) WHERE v IS NOT NULL`)
      .raw()
      .iterate(...text.params, teamId, groupTypeIndex) as IterableIterator<[string, string]>
    return byText(rows, maxChars)
  }

  /**
   * What a HogQL query reads of the events' groups and persons now (hogql-lookups.ts): each value with the keys of the
   * groups (a group's property, key or created_at), or the distinct ids of the persons (a person's uuid, created_at
   * or is_identified), that have it; dates and times in ms; null once the keys pass `maxChars`.
   */
  lookupValues(teamId: number, of: FieldLookupOf, maxChars: number): Array<{ text: string | number; ids: string[] }> | null {
    if ('path' in of) return this.groupKeysByProperty(teamId, of.index, of.path, maxChars)
    const [sql, params] =
      of.holder === 'group'
        ? [`SELECT group_key, ${of.field === 'key' ? 'group_key' : 'created_at'} FROM groups WHERE team_id = ? AND group_type_index = ?`, [teamId, of.index]]
        : [`SELECT d.distinct_id, p.${of.field === 'id' ? 'uuid' : of.field} FROM person_distinct_ids d JOIN persons p ON p.id = d.person_id WHERE d.team_id = ? AND p.team_id = ?`, [teamId, teamId]]
    const rows = this.#db.prepare(sql).raw().iterate(...params) as IterableIterator<[string, string | number]>
    return byText(of.field === 'created_at' ? timesOf(rows) : rows, maxChars)
  }

  /**
   * The keys of the project's groups of a type whose properties meet every filter (with `failing`, of those that
   * do not), or null once their text passes `maxChars`.
   */
  groupKeysMatching(teamId: number, groupTypeIndex: number, properties: readonly PropertyNode[], maxChars: number, failing = false): string[] | null {
    const where = compileSqliteProperties(properties)
    const rows = this.#db
      // A filter on a property a group lacks is NULL there: such a group fails it.
      .prepare(`SELECT group_key FROM groups WHERE team_id = ? AND group_type_index = ? AND ${failing ? 'NOT ' : ''}COALESCE((${where.sql}), 0)`)
      .pluck()
      .iterate(teamId, groupTypeIndex, ...where.params) as IterableIterator<string>
    return capped(rows, maxChars, itself)
  }

  #distinctIdsOf(teamId: number, persons: string, params: readonly unknown[], maxChars: number, failing: boolean): string[] | null {
    const rows = this.#db
      .prepare(`SELECT distinct_id FROM person_distinct_ids WHERE team_id = ? AND person_id ${failing ? 'NOT IN' : 'IN'} (${persons})`)
      .pluck()
      .iterate(teamId, ...params) as IterableIterator<string>
    return capped(rows, maxChars, itself)
  }

  countPersons(teamId: number, filter: PersonFilters = {}): number {
    if (!filtered(filter)) return this.s.countPersons.get(teamId)?.n ?? 0
    const where = personsWhere(teamId, filter)
    return (this.#db.prepare(`SELECT COUNT(*) AS n FROM persons WHERE ${where.sql}`).get(...where.params) as { n: number }).n
  }

  /** Groups of one type, newest first (as PostHog: created_at, then key, descending), filtered. */
  listGroups(teamId: number, groupTypeIndex: number, limit: number, offset: number, filter: GroupFilters = {}): GroupRecord[] {
    type Row = { group_key: string; properties: string; created_at: string }
    let rows: Row[]
    if (!filtered(filter)) {
      rows = this.s.listGroups.all(teamId, groupTypeIndex, limit, offset)
    } else {
      const where = groupsWhere(teamId, groupTypeIndex, filter)
      rows = this.#db
        .prepare(`SELECT group_key, properties, created_at FROM groups WHERE ${where.sql} ORDER BY created_at DESC, group_key DESC LIMIT ? OFFSET ?`)
        .all(...where.params, limit, offset) as Row[]
    }
    return rows.map((row) => ({
      group_type_index: groupTypeIndex,
      group_key: row.group_key,
      group_properties: parseObject(row.properties),
      created_at: row.created_at,
    }))
  }

  countGroups(teamId: number, groupTypeIndex: number, filter: GroupFilters = {}): number {
    if (!filtered(filter)) return this.s.countGroups.get(teamId, groupTypeIndex)?.n ?? 0
    const where = groupsWhere(teamId, groupTypeIndex, filter)
    return (this.#db.prepare(`SELECT COUNT(*) AS n FROM groups WHERE ${where.sql}`).get(...where.params) as { n: number }).n
  }

  /** Ingestion warnings of a project, newest first. */
  listIngestionWarnings(teamId: number, limit: number, offset: number): IngestionWarningRecord[] {
    return this.s.listWarnings.all(teamId, limit, offset).map((row) => ({
      type: row.type,
      source: row.source,
      details: parseObject(row.details),
      timestamp: row.timestamp,
    }))
  }

  countIngestionWarnings(teamId: number): number {
    return this.s.countWarnings.get(teamId)?.n ?? 0
  }
}
