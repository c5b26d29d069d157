/**
 * Reading every stored event once, in the store's own order, a page at a time (keyset pagination), for the
 * definitions back-fill (src/persons/definition-backfill.ts). A cursor is the store's position as JSON text,
 * kept by the caller between pages and across restarts; a bound is the store's end when the reading began,
 * so events stored since (whose definitions the consumer recorded as they came) are not read.
 */
import { existsSync } from 'node:fs'
import { openDatabase, type Db } from '../sqlite/database.js'

export interface ScannedEvent {
  team_id: number
  event: string
  /** The stored properties' JSON text. */
  properties: string
  /** When the consumer processed it (ms). */
  created: number
}

export interface ScanPage {
  events: ScannedEvent[]
  /** The position after the page; null when nothing was left (the page is empty). */
  cursor: string | null
}

export interface EventScan {
  /** The store's end now; null for an empty store. */
  bound(): Promise<string | null>
  /** Up to about `limit` events after `cursor` (null: from the start), none past `bound`. */
  page(cursor: string | null, bound: string, limit: number): Promise<ScanPage>
  close(): Promise<void>
}

/**
 * events.db in rowid order, which is insertion order: the table has no INTEGER PRIMARY KEY, so rowids are
 * only renumbered by a VACUUM, which skylark never runs. Read-only connection of its own.
 */
export class SqliteEventScan implements EventScan {
  readonly #file: string
  #db: Db | null = null

  constructor(file: string) {
    this.#file = file
  }

  /** Null while there is no file or no table yet: then there are no events either. */
  #open(): Db | null {
    if (this.#db) return this.#db
    if (!existsSync(this.#file)) return null
    const db = openDatabase(this.#file, { readonly: true })
    if (db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'events'").get() === undefined) {
      db.close()
      return null
    }
    return (this.#db = db)
  }

  async bound(): Promise<string | null> {
    const max = this.#open()?.prepare('SELECT MAX(rowid) FROM events').pluck().get() as number | null | undefined
    return max == null ? null : String(max)
  }

  async page(cursor: string | null, bound: string, limit: number): Promise<ScanPage> {
    const db = this.#open()
    if (!db) return { events: [], cursor: null }
    const rows = db
      .prepare('SELECT rowid AS r, team_id, event, properties, created_at AS created FROM events WHERE rowid > ? AND rowid <= ? ORDER BY rowid LIMIT ?')
      .all(Number(cursor ?? 0), Number(bound), limit) as Array<ScannedEvent & { r: number }>
    return { events: rows, cursor: rows.length > 0 ? String(rows[rows.length - 1].r) : null }
  }

  async close(): Promise<void> {
    this.#db?.close()
    this.#db = null
  }
}
