/**
 * The consumer's person step for one read of a lane: person and group effects, the read's ingestion warnings
 * and the persons checkpoint in one persons.db transaction, so each event changes persons exactly once. A
 * batch that throws is redone one event per transaction and the events that still fail are dead-lettered.
 */
import type { Clock } from '../../common/clock.js'
import type { PersonOutcome } from '../../persons/index.js'
import type { DeadLetterInput } from '../../storage/dead-letters.js'
import type { EventRow } from '../../storage/events/types.js'
import type { Db } from '../../storage/index.js'
import type { Cursor } from '../spool/layout.js'
import type { CapturedEvent, IngestionWarning, Lane } from '../types.js'
import type { Checkpoints } from './checkpoints.js'
import { toEventRows } from './rows.js'

/** What the consumer needs from person processing (src/persons implements it). */
export interface PersonStage {
  process(events: CapturedEvent[]): PersonOutcome[]
  enrich(event: CapturedEvent): PersonOutcome
  resetCache(): void
}

export interface PersonBatchDeps {
  db: Db
  stage: PersonStage
  checkpoints: Checkpoints
  clock: Clock
  log: (level: 'warn', msg: string, fields?: Record<string, unknown>) => void
  deadLetter: (entries: DeadLetterInput[]) => void
}

export class PersonBatches {
  readonly #d: PersonBatchDeps
  readonly #insertWarning

  constructor(deps: PersonBatchDeps) {
    this.#d = deps
    this.#insertWarning = deps.db.prepare('INSERT INTO ingestion_warnings (team_id, type, source, details, timestamp) VALUES (?, ?, ?, ?, ?)')
  }

  /** The read's rows for the event store, and how many of its events persons processed. */
  process(lane: Lane, events: CapturedEvent[], warnings: IngestionWarning[], end: Cursor): { rows: EventRow[]; processed: number } {
    const { db, stage, checkpoints, clock } = this.#d
    try {
      // IMMEDIATE: the main thread writes persons.db too (hash-key overrides, static cohorts). A deferred
      // transaction that read first could not upgrade to a write after such a commit (SQLITE_BUSY at once,
      // whatever the busy timeout), and its events would be dead-lettered; this one waits its turn instead.
      const outcomes = db.transaction(() => {
        const out = stage.process(events)
        this.#writeWarnings(warnings)
        checkpoints.set('persons', lane, end)
        return out
      }).immediate()
      return { rows: toEventRows(events, outcomes, clock.now()), processed: events.length }
    } catch (error) {
      // One bad event must not hold up the rest: redo the batch one event per transaction and
      // dead-letter the events that still fail.
      stage.resetCache()
      this.#d.log('warn', 'person processing failed for a batch; retrying event by event', { lane, error: String(error) })
      const rows: EventRow[] = []
      const failed: DeadLetterInput[] = []
      for (const event of events) {
        try {
          const [outcome] = db.transaction(() => stage.process([event])).immediate()
          rows.push(...toEventRows([event], [outcome], clock.now()))
        } catch (inner) {
          stage.resetCache()
          failed.push({ lane, stage: 'persons', error: String(inner), payload: JSON.stringify(event) })
        }
      }
      db.transaction(() => {
        this.#writeWarnings(warnings)
        checkpoints.set('persons', lane, end)
      }).immediate()
      if (failed.length > 0) this.#d.deadLetter(failed)
      return { rows, processed: rows.length }
    }
  }

  #writeWarnings(warnings: IngestionWarning[]): void {
    for (const w of warnings) {
      this.#insertWarning.run(w.team_id, w.type, w.source, JSON.stringify(w.details), new Date(w.timestamp).toISOString())
    }
  }
}
