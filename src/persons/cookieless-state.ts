/**
 * What cookieless tracking keeps in persons.db (persons/cookieless.ts says what it is): the salt of each day, and
 * for stateful mode the $identify events and sessions of each hash. Everything of a day goes once no zone is in
 * it: PostHog deletes its salts the same way, and without the salt no id can be traced to an IP or user agent.
 */
import { randomBytes } from 'node:crypto'
import type { Db } from '../storage/index.js'
import { prepared } from '../storage/sqlite/database.js'
import { isDayValid } from './cookieless.js'

const HOUR_MS = 3_600_000

export interface CookielessSession {
  sessionId: string
  lastActivity: number
}

/** The calendar days (`YYYY-MM-DD`) some zone is in at `now`: two or three. */
export function validDays(now: number): string[] {
  const days: string[] = []
  for (let start = Date.parse(new Date(now - 38 * HOUR_MS).toISOString().slice(0, 10)); start <= now + 12 * HOUR_MS; start += 24 * HOUR_MS) {
    const day = new Date(start).toISOString().slice(0, 10)
    if (isDayValid(day, now)) days.push(day)
  }
  return days
}

export class CookielessState {
  readonly #db: Db
  /** Salts never change once made: kept here, a day dropped once it is no longer valid. */
  readonly #salts = new Map<string, Buffer>()
  /** The oldest valid day when prepare() last deleted what came before it. */
  #oldest = ''

  constructor(db: Db) {
    this.#db = db
  }

  /**
   * The salt of `day`, made if no thread has made it yet (two threads making one at once keep the first
   * written); null when no zone is in that day at `now`. Made outside any transaction by prepare(): a salt
   * written in one that rolled back, and kept here, would differ from the one another thread made next.
   */
  saltFor(day: string, now: number): Buffer | null {
    if (!isDayValid(day, now)) {
      this.#salts.delete(day)
      return null
    }
    let salt = this.#salts.get(day)
    if (salt === undefined) {
      this.#forgetEnded(now)
      prepared(this.#db, 'INSERT OR IGNORE INTO cookieless_salts (day, salt) VALUES (?, ?)').run(day, randomBytes(16))
      salt = prepared(this.#db, 'SELECT salt FROM cookieless_salts WHERE day = ?').pluck().get(day) as Buffer
      this.#salts.set(day, salt)
    }
    return salt
  }

  /** Makes the salts of the days now valid and deletes what belongs to days that no longer are. Outside transactions. */
  prepare(now: number): void {
    const days = validDays(now)
    for (const day of days) this.saltFor(day, now)
    this.#forgetEnded(now)
    // The deletes scan the state tables: only when a day has ended everywhere (and at the first call).
    if (this.#oldest === days[0]) return
    for (const table of ['cookieless_salts', 'cookieless_identifies', 'cookieless_sessions']) {
      prepared(this.#db, `DELETE FROM ${table} WHERE day < ?`).run(days[0])
    }
    this.#oldest = days[0]
  }

  /** Forgets the salts of days that have ended, so none outlives its day in memory either. */
  #forgetEnded(now: number): void {
    for (const day of this.#salts.keys()) if (!isDayValid(day, now)) this.#salts.delete(day)
  }

  identifyCount(teamId: number, baseHash: string): number {
    return prepared(this.#db, 'SELECT COUNT(*) FROM cookieless_identifies WHERE team_id = ? AND base_hash = ?').pluck().get(teamId, baseHash) as number
  }

  /** Notes an $identify (once per event uuid); returns how many the hash has had, this one included. */
  addIdentify(teamId: number, baseHash: string, eventUuid: string, day: string): number {
    prepared(this.#db, 'INSERT OR IGNORE INTO cookieless_identifies (team_id, base_hash, event_uuid, day) VALUES (?, ?, ?, ?)').run(teamId, baseHash, eventUuid, day)
    return this.identifyCount(teamId, baseHash)
  }

  session(teamId: number, hash: string): CookielessSession | undefined {
    const row = prepared(this.#db, 'SELECT session_id, last_activity FROM cookieless_sessions WHERE team_id = ? AND hash = ?').get(teamId, hash) as
      | { session_id: string; last_activity: number }
      | undefined
    return row && { sessionId: row.session_id, lastActivity: row.last_activity }
  }

  setSession(teamId: number, hash: string, session: CookielessSession, day: string): void {
    prepared(this.#db, 'INSERT OR REPLACE INTO cookieless_sessions (team_id, hash, session_id, last_activity, day) VALUES (?, ?, ?, ?, ?)').run(
      teamId,
      hash,
      session.sessionId,
      session.lastActivity,
      day,
    )
  }
}
