/**
 * The definitions of events stored before the consumer recorded them (persons.db migration 4 came after
 * them), derived once from the event store and merged into what the consumer records meanwhile, so the
 * result is as if every event had been recorded as it was processed:
 *
 * - an event name's `created_at` is the earliest of the two, `last_seen_at` the latest (the stored
 *   `created_at` of an event is the time the consumer processed it, the `now` it recorded with);
 * - a property's type is the one its earliest telling value gives (PostHog keeps the first type). The
 *   consumer records only events stored after those read here, so a type read here replaces the consumer's,
 *   unless the back-fill already set it from an earlier event (`definitions_backfill_types` says when);
 * - which keys were seen on which events, and definitions without a type yet, are added where missing.
 *
 * Each call to apply() is one persons.db transaction, with the cursor when a page of the store is done, so a
 * crash redoes at most a page, whose writes are all idempotent. The state is one row of persons.db
 * (migration 5). Runs in the consumer thread, persons.db's writer (src/ingestion/consumer/backfill.ts).
 */
import type { Statement } from 'better-sqlite3'
import { iso } from '../common/clock.js'
import { uuidv7 } from '../common/ids.js'
import { isPlainObject } from '../common/json.js'
import type { Db } from '../storage/index.js'
import { clean, DefinitionRecorder, type NotedDefinitions } from './definitions.js'

export interface BackfillState {
  /** The store's end when it began (the store's form); null before it began. */
  bound: string | null
  /** The last event done in the store's order; null: none yet. */
  cursor: string | null
  done: boolean
}

/** An event read back from the store (src/storage/events/scan.ts). */
export interface StoredDefinitionSource {
  team_id: number
  event: string
  properties: string
  created: number
}

export class DefinitionBackfill {
  readonly #db: Db
  private readonly s: {
    state: Statement<[], { bound: string | null; cursor: string | null; done_at: string | null }>
    begin: Statement<[string]>
    cursor: Statement<[string]>
    finish: Statement<[string]>
    clearTypes: Statement<[]>
    event: Statement<[string, number, string, string, string]>
    untyped: Statement<[string, number, number, number, string]>
    typed: Statement<[string, number, number, number, string, string, number]>
    typedAt: Statement<[number, number, number, string], number>
    setTypedAt: Statement<[number, number, number, string, number]>
    pair: Statement<[number, string, string]>
  }

  constructor(db: Db) {
    this.#db = db
    this.s = {
      state: db.prepare('SELECT bound, cursor, done_at FROM definitions_backfill WHERE id = 1'),
      begin: db.prepare('UPDATE definitions_backfill SET bound = ? WHERE id = 1'),
      cursor: db.prepare('UPDATE definitions_backfill SET cursor = ? WHERE id = 1'),
      finish: db.prepare('UPDATE definitions_backfill SET done_at = ? WHERE id = 1'),
      clearTypes: db.prepare('DELETE FROM definitions_backfill_types'),
      event: db.prepare(
        `INSERT INTO event_definitions (id, team_id, name, created_at, last_seen_at) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (team_id, name) DO UPDATE SET created_at = min(created_at, excluded.created_at), last_seen_at = max(last_seen_at, excluded.last_seen_at)`,
      ),
      untyped: db.prepare(
        `INSERT OR IGNORE INTO property_definitions (id, team_id, type, group_type_index, name, property_type, is_numerical) VALUES (?, ?, ?, ?, ?, NULL, 0)`,
      ),
      typed: db.prepare(
        `INSERT INTO property_definitions (id, team_id, type, group_type_index, name, property_type, is_numerical) VALUES (?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (team_id, type, group_type_index, name) DO UPDATE SET property_type = excluded.property_type, is_numerical = excluded.is_numerical`,
      ),
      typedAt: db
        .prepare<[number, number, number, string], number>('SELECT at FROM definitions_backfill_types WHERE team_id = ? AND type = ? AND group_type_index = ? AND name = ?')
        .pluck(),
      setTypedAt: db.prepare('INSERT OR REPLACE INTO definitions_backfill_types (team_id, type, group_type_index, name, at) VALUES (?, ?, ?, ?, ?)'),
      pair: db.prepare('INSERT OR IGNORE INTO event_properties (team_id, property, event) VALUES (?, ?, ?)'),
    }
  }

  state(): BackfillState {
    const row = this.s.state.get()
    // No row: a database someone emptied by hand; there is nothing to resume, so nothing is done.
    if (row === undefined) return { bound: null, cursor: null, done: true }
    return { bound: row.bound, cursor: row.cursor, done: row.done_at !== null }
  }

  /** Starts with the store's end now; an empty store (null) leaves nothing to do. */
  begin(bound: string | null, now: number): void {
    if (bound === null) this.finish(now)
    else this.s.begin.run(bound)
  }

  /**
   * Merges what `events` define (in the order they were processed), and moves the cursor to `cursor` when
   * given (the page they end is done), in one transaction.
   */
  apply(events: readonly StoredDefinitionSource[], cursor: string | null): void {
    // A recorder of its own: it notes each event as the consumer did when processing it at `created`.
    const recorder = new DefinitionRecorder(this.#db)
    this.#db
      .transaction(() => {
        for (const e of events) {
          const properties = parseObject(e.properties)
          if (properties !== null) recorder.observeStored(e.team_id, e.event, properties, e.created)
        }
        this.#merge(recorder.take())
        if (cursor !== null) this.s.cursor.run(cursor)
      })
      .immediate()
  }

  finish(now: number): void {
    this.#db
      .transaction(() => {
        this.s.finish.run(iso(now))
        this.s.clearTypes.run()
      })
      .immediate()
  }

  #merge(noted: NotedDefinitions): void {
    // An event name once per call: its earliest and latest sightings (rows come in processing order).
    const seen = new Map<string, [teamId: number, name: string, first: string, last: string]>()
    for (const [teamId, name, at] of noted.events) {
      const key = `${teamId}\u0000${name}`
      const entry = seen.get(key)
      if (entry === undefined) seen.set(key, [teamId, name, at, at])
      else entry[3] = at
    }
    for (const [teamId, name, first, last] of seen.values()) this.s.event.run(uuidv7(), teamId, clean(name), first, last)
    for (const [teamId, kind, index, rawName, type, at] of noted.properties) {
      const name = clean(rawName)
      if (type === null) {
        this.s.untyped.run(uuidv7(), teamId, kind, index, name)
        continue
      }
      const typedAt = this.s.typedAt.get(teamId, kind, index, name)
      if (typedAt !== undefined && typedAt <= at) continue
      this.s.typed.run(uuidv7(), teamId, kind, index, name, type, type === 'Numeric' ? 1 : 0)
      this.s.setTypedAt.run(teamId, kind, index, name, at)
    }
    for (const [teamId, property, event] of noted.pairs) this.s.pair.run(teamId, clean(property), clean(event))
  }
}

/** A stored event's properties; null for text that is not a JSON object (it defines nothing). */
function parseObject(text: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(text)
    return isPlainObject(value) ? value : null
  } catch {
    return null
  }
}
