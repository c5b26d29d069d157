/**
 * Ingestion warnings noticed by the persons stage, written to persons.db in the caller's transaction.
 * As in PostHog, merge refusals are always written; other kinds are written once per (project, type, key)
 * per hour so a misbehaving client cannot flood the table.
 */
import type { Statement } from 'better-sqlite3'
import { iso, type Clock } from '../common/clock.js'
import { Lru } from '../geoip/index.js'
import type { Db } from '../storage/index.js'

export const WARNING_SOURCE = 'persons'
const DEBOUNCE_MS = 60 * 60 * 1000

export class WarningWriter {
  private readonly insert: Statement<[number, string, string, string, string]>
  private readonly lastWritten = new Lru<string, number>(10_000)

  constructor(db: Db, private readonly clock: Clock) {
    this.insert = db.prepare('INSERT INTO ingestion_warnings (team_id, type, source, details, timestamp) VALUES (?, ?, ?, ?, ?)')
  }

  /** `debounceKey` given = written at most once an hour for that key; absent = always written. */
  write(teamId: number, type: string, details: Record<string, unknown>, debounceKey?: string): void {
    const now = this.clock.now()
    if (debounceKey !== undefined) {
      const key = `${teamId}:${type}:${debounceKey}`
      const last = this.lastWritten.get(key)
      if (last !== undefined && now - last < DEBOUNCE_MS) return
      this.lastWritten.set(key, now)
    }
    this.insert.run(teamId, type, WARNING_SOURCE, JSON.stringify(details), iso(now))
  }

  resetCache(): void {
    this.lastWritten.clear()
  }
}
