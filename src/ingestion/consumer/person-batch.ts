/**
 * The consumer's person step for one read of a lane: person and group effects, the read's ingestion warnings
 * and the persons checkpoint in one persons.db transaction, so each event changes persons exactly once. A
 * batch that throws is redone one event per transaction and the events that still fail are dead-lettered.
 *
 * Inside the transaction the read goes CHUNK_EVENTS frames at a time from spool JSON to packed rows, so an
 * event's objects die within a chunk (see RowPacker): parsed and processed a whole read (≈1,800 browser events)
 * at a time, they lived through the consumer's scavenges and were promoted.
 */
import type { Clock } from '../../common/clock.js'
import type { CookielessIngest, PersonOutcome } from '../../persons/index.js'
import type { DeadLetterInput } from '../../storage/dead-letters.js'
import { RowPacker, type PackedRows } from '../../storage/events/packed-rows.js'
import type { Db } from '../../storage/index.js'
import type { Cursor } from '../spool/layout.js'
import type { CapturedEvent, IngestionWarning, Lane } from '../types.js'
import type { Checkpoints } from './checkpoints.js'
import { decodeFrames, type FrameBatch } from './read-batch.js'
import { toEventRows } from './rows.js'

/**
 * bench/micro/consumer.mjs: 64 events a chunk promoted 34–35 MB in 3 s against 713–785 MB for whole reads,
 * 9.4–10.1 against 14.4–16.2 µs an event; chunks of 25 cost more per event than chunks of 100.
 */
const CHUNK_EVENTS = 64
/** One per queued read and one being packed (row-queue.ts holds about three reads). */
const MAX_SPARES = 4
/**
 * Each kind of warning written here (capture's drops and timestamp problems, the cookieless step's drops) is
 * written once an hour per project, type and reason, as PostHog's ingestion limits its warnings per team and type
 * (IngestionWarningLimiter) and persons/warnings.ts the persons stage's: a client that sends every event without a
 * distinct id, or a cookieless site in a project with the setting off, wrote one row per event.
 */
const WARNING_DEBOUNCE_MS = 60 * 60 * 1000

/** What the consumer needs from person processing (src/persons implements it). */
export interface PersonStage {
  /** `propertiesTexts[i]`: the text of `events[i]`'s properties but `$set`/`$set_once`, when known (decodeFrames). */
  process(events: CapturedEvent[], propertiesTexts?: ReadonlyArray<Uint8Array | null>): PersonOutcome[]
  enrich(event: CapturedEvent): PersonOutcome
  /** Deletes the persons with these uuids or owning these distinct ids, inside the caller's transaction; returns their distinct ids. */
  deletePersons(teamId: number, uuids: readonly string[], distinctIds: readonly string[]): string[]
  /** Moves distinct ids of the person onto new persons of their own, inside the caller's transaction; returns them with their new uuids. */
  splitPerson(teamId: number, uuid: string, main: string | null, only: readonly string[] | null): Array<{ distinctId: string; uuid: string }>
  resetCache(): void
}

/** What the consumer needs to record definitions (src/persons/definitions.ts implements it). */
export interface DefinitionRecorder {
  /** Notes what the processed events define, writing nothing yet. */
  observe(events: readonly CapturedEvent[], outcomes: readonly PersonOutcome[], now: number): void
  /** Writes what was noted, inside the caller's transaction. */
  write(): void
  /** The transaction rolled back: forget what was noted and what is known. */
  reset(): void
}

export interface PersonBatchDeps {
  db: Db
  stage: PersonStage
  /** Absent: no definitions are recorded. */
  definitions?: DefinitionRecorder
  checkpoints: Checkpoints
  /** Absent: cookieless events go to person processing as they came. */
  cookieless?: CookielessIngest
  clock: Clock
  log: (level: 'warn', msg: string, fields?: Record<string, unknown>) => void
  deadLetter: (entries: DeadLetterInput[]) => void
}

/** A spool frame that does not parse: the consumer dead-letters it (once) and the rest go on. */
export type OnUnreadable = (payload: Buffer, error: unknown) => void

export class PersonBatches {
  readonly #d: PersonBatchDeps
  readonly #insertWarning
  /** Packed bytes per spool byte in the last read: sizes the next read's buffer (≈4.3 with GeoIP). */
  #growth = 4
  /** Buffers of rows the store has (recycle()), packed into again. */
  readonly #spares: ArrayBuffer[] = []
  /** Cookieless events dropped since start. */
  cookielessDropped = 0
  /** When each (project, type, reason) was last written. */
  readonly #lastWarned = new Map<string, number>()

  constructor(deps: PersonBatchDeps) {
    this.#d = deps
    this.#insertWarning = deps.db.prepare('INSERT INTO ingestion_warnings (team_id, type, source, details, timestamp) VALUES (?, ?, ?, ?, ?)')
  }

  /** The read's rows for the event store, and how many of its events persons processed. */
  process(lane: Lane, frames: FrameBatch, onUnreadable: OnUnreadable): { rows: PackedRows; processed: number } {
    const { db, stage, checkpoints, clock, definitions } = this.#d
    const { end, bytes: spoolBytes } = frames
    const needed = Math.ceil(spoolBytes * this.#growth * 1.1)
    const spare = this.#takeSpare(needed)
    // A new buffer gets a quarter more than this read needs: reads vary by up to ≈15 %, and it should fit them.
    const packer = new RowPacker(spare ? 0 : Math.ceil(needed * 1.25), spare)
    const warnings: IngestionWarning[] = []
    let decoded = 0
    let processed = 0
    const droppedBefore = this.cookielessDropped
    const warned: string[] = []
    try {
      this.#d.cookieless?.prepare(clock.now())
    } catch (error) {
      // A salt it could not make is made inside the transaction when an event needs it.
      this.#d.log('warn', 'cookieless salts could not be prepared', { error: String(error) })
    }
    try {
      // IMMEDIATE: the main thread writes persons.db too (hash-key overrides, static cohorts). A deferred
      // transaction that read first could not upgrade to a write after such a commit (SQLITE_BUSY at once,
      // whatever the busy timeout), and its events would be dead-lettered; this one waits its turn instead.
      db.transaction(() => {
        while (decoded < frames.count) {
          const chunk = this.#cookieless(decodeFrames(frames.frames(decoded, decoded + CHUNK_EVENTS), onUnreadable))
          decoded = Math.min(decoded + CHUNK_EVENTS, frames.count)
          for (const w of chunk.warnings) warnings.push(w)
          const outcomes = stage.process(chunk.events, chunk.propertiesTexts)
          const now = clock.now()
          packer.add(toEventRows(chunk.events, outcomes, now))
          definitions?.observe(chunk.events, outcomes, now)
          processed += chunk.events.length
        }
        definitions?.write()
        this.#writeWarnings(warnings, warned)
        checkpoints.set('persons', lane, end)
      }).immediate()
      const rows = packer.finish()
      if (spoolBytes > 0 && rows.count > 0) this.#growth = rows.parts[0].length / spoolBytes
      return { rows, processed }
    } catch (error) {
      // One bad event must not hold up the rest: redo the batch one event per transaction and
      // dead-letter the events that still fail. Frames read before the failure were reported already.
      stage.resetCache()
      definitions?.reset()
      // The redo counts the drops and writes the warnings the rolled-back attempt did.
      this.cookielessDropped = droppedBefore
      for (const key of warned) this.#lastWarned.delete(key)
      this.#d.log('warn', 'person processing failed for a batch; retrying event by event', { lane, error: String(error) })
      const before = this.#cookieless(decodeFrames(frames.frames(0, decoded), () => {}))
      const after = this.#cookieless(decodeFrames(frames.frames(decoded), onUnreadable))
      return this.#eventByEvent(lane, [...before.events, ...after.events], [...before.warnings, ...after.warnings], end)
    }
  }

  /** The chunk with its cookieless events given their ids, those dropped taken out, counted and warned of. */
  #cookieless<T extends { events: CapturedEvent[]; propertiesTexts: Array<Buffer | null>; warnings: IngestionWarning[] }>(chunk: T): T {
    const step = this.#d.cookieless
    if (step === undefined) return chunk
    const now = this.#d.clock.now()
    for (const { event, reason } of step.apply({ events: chunk.events, texts: chunk.propertiesTexts }, now)) {
      this.cookielessDropped++
      chunk.warnings.push({
        team_id: event.team_id,
        type: 'event_dropped',
        source: 'cookieless',
        details: { reason, event: event.event, uuid: event.uuid },
        timestamp: now,
      })
    }
    return chunk
  }

  /** The store has these rows: their buffers may be packed into again. */
  recycle(rows: PackedRows): void {
    for (const part of rows.parts) if (this.#spares.length < MAX_SPARES) this.#spares.push(part.buffer as ArrayBuffer)
  }

  /** A recycled buffer of at least `bytes`, or null; one that is too small is let go, so those kept fit. */
  #takeSpare(bytes: number): ArrayBuffer | null {
    const i = this.#spares.findIndex((spare) => spare.byteLength >= bytes)
    if (i >= 0) return this.#spares.splice(i, 1)[0]
    this.#spares.pop()
    return null
  }

  #eventByEvent(lane: Lane, events: CapturedEvent[], warnings: IngestionWarning[], end: Cursor): { rows: PackedRows; processed: number } {
    const { db, stage, checkpoints, clock, definitions } = this.#d
    const packer = new RowPacker(0)
    const failed: DeadLetterInput[] = []
    for (const event of events) {
      try {
        const [outcome] = db.transaction(() => {
          const outcomes = stage.process([event])
          definitions?.observe([event], outcomes, clock.now())
          definitions?.write()
          return outcomes
        }).immediate()
        packer.add(toEventRows([event], [outcome], clock.now()))
      } catch (inner) {
        stage.resetCache()
        definitions?.reset()
        failed.push({ lane, stage: 'persons', error: String(inner), payload: JSON.stringify(event) })
      }
    }
    db.transaction(() => {
      this.#writeWarnings(warnings)
      checkpoints.set('persons', lane, end)
    }).immediate()
    if (failed.length > 0) this.#d.deadLetter(failed)
    const rows = packer.finish()
    return { rows, processed: rows.count }
  }

  /** Writes the warnings not written within the hour; `noted` gets the keys this call noted as written. */
  #writeWarnings(warnings: IngestionWarning[], noted: string[] = []): void {
    const now = this.#d.clock.now()
    for (const w of warnings) {
      const key = `${w.team_id}:${w.type}:${String(w.details.reason ?? '')}`
      if (now - (this.#lastWarned.get(key) ?? -Infinity) < WARNING_DEBOUNCE_MS) continue
      this.#lastWarned.set(key, now)
      noted.push(key)
      this.#insertWarning.run(w.team_id, w.type, w.source, JSON.stringify(w.details), new Date(w.timestamp).toISOString())
    }
  }
}
