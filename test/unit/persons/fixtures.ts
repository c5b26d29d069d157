/** Shared set-up for the persons tests: a migrated persons.db, a stage over it, and an event builder. */
import { fixedClock } from '../../../src/common/clock.js'
import { uuidv7 } from '../../../src/common/ids.js'
import type { GeoIp, GeoProperties } from '../../../src/geoip/index.js'
import type { CapturedEvent } from '../../../src/ingestion/types.js'
import { PersonsStage, type PersonOutcome } from '../../../src/persons/index.js'
import { migrate, openDatabase, type Db } from '../../../src/storage/index.js'
import { PERSONS_MIGRATIONS } from '../../../src/storage/sqlite/migrations/persons.js'

export const T0 = Date.parse('2024-03-01T12:00:00.000Z')
export const TEAM = 7

export function personsDb(file = ':memory:'): Db {
  const db = openDatabase(file)
  migrate(db, PERSONS_MIGRATIONS)
  return db
}

let seq = 0

/** An event as capture hands it over; each call is one second after the previous one. */
export function ev(event: string, distinctId: string, properties: Record<string, unknown> = {}, extra: Partial<CapturedEvent> = {}): CapturedEvent {
  const timestamp = T0 + 1000 * seq++
  return { uuid: uuidv7(timestamp), event, distinct_id: distinctId, properties, timestamp, team_id: TEAM, now: timestamp, ...extra }
}

/** GeoIP that knows one address (81.2.69.142, GB) and throws for `boom`. */
export class FakeGeoIp implements GeoIp {
  readonly source = 'fake'
  lookup(ip: string): GeoProperties | null {
    if (ip === '81.2.69.142') return { $geoip_country_code: 'GB', $geoip_country_name: 'United Kingdom', $geoip_city_name: 'Bracknell' }
    if (ip === 'boom') throw new Error('lookup exploded')
    return null
  }
}

export interface Harness {
  db: Db
  stage: PersonsStage
  /** Processes the events in one transaction, as the consumer does. */
  run(...events: CapturedEvent[]): PersonOutcome[]
  person(distinctId: string, teamId?: number): { id: number; uuid: string; properties: Record<string, any>; is_identified: number; version: number; created_at: string } | undefined
  distinctIds(personId: number): string[]
  personCount(teamId?: number): number
  warnings(): Array<{ type: string; details: Record<string, any> }>
  /** The single value a query returns. */
  scalar(sql: string): unknown
}

export function harness(options: { geoip?: GeoIp | null; cacheSize?: number; db?: Db } = {}): Harness {
  const db = options.db ?? personsDb()
  const stage = new PersonsStage(db, { geoip: options.geoip ?? null, clock: fixedClock(T0), cacheSize: options.cacheSize })
  const tx = db.transaction((events: CapturedEvent[]) => stage.process(events))
  return {
    db,
    stage,
    run: (...events) => tx(events),
    person: (distinctId, teamId = TEAM) => {
      const row = db
        .prepare(
          `SELECT p.* FROM persons p JOIN person_distinct_ids d ON d.person_id = p.id
           WHERE d.team_id = ? AND d.distinct_id = ?`,
        )
        .get(teamId, distinctId) as any
      return row ? { ...row, properties: JSON.parse(row.properties) } : undefined
    },
    distinctIds: (personId) =>
      (db.prepare('SELECT distinct_id FROM person_distinct_ids WHERE person_id = ? ORDER BY distinct_id').all(personId) as any[]).map(
        (r) => r.distinct_id,
      ),
    personCount: (teamId = TEAM) => (db.prepare('SELECT COUNT(*) AS n FROM persons WHERE team_id = ?').get(teamId) as any).n,
    scalar: (sql) => db.prepare(sql).pluck().get(),
    warnings: () =>
      (db.prepare('SELECT type, details FROM ingestion_warnings ORDER BY id').all() as any[]).map((r) => ({ type: r.type, details: JSON.parse(r.details) })),
  }
}
