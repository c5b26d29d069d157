/**
 * Retries dead letters an operator marked with `skylark dlq replay`, on the consumer thread (the one writer of
 * persons.db): stored rows go straight to the event store, events that failed person processing go through
 * it again first. An entry that fails again stays, with its new error.
 */
import type { Clock } from '../../common/clock.js'
import type { DeadLetters } from '../../storage/dead-letters.js'
import type { EventRow } from '../../storage/events/types.js'
import type { Db } from '../../storage/index.js'
import type { CapturedEvent } from '../types.js'
import type { PersonStage } from './person-batch.js'
import { toEventRows } from './rows.js'

export interface ReplayDeps {
  personsDb: Db
  stage: PersonStage
  clock: Clock
  /** One attempt at the event store, no retries. */
  writeDirect: (rows: EventRow[]) => Promise<void>
}

export async function replayDeadLetters(store: DeadLetters, deps: ReplayDeps, onStored: (rows: number) => void): Promise<void> {
  for (const entry of store.replayRequested(500)) {
    if (entry.payload === null) {
      store.replayFailed(entry.id, 'the record was unreadable; there is nothing to replay')
      continue
    }
    try {
      let rows: EventRow[]
      if (entry.stage === 'persons') {
        const event = JSON.parse(entry.payload) as CapturedEvent
        const outcomes = deps.personsDb.transaction(() => deps.stage.process([event])).immediate()
        rows = toEventRows([event], outcomes, deps.clock.now()).map((row) => ({ ...row, properties: String(row.properties) }))
      } else {
        rows = [JSON.parse(entry.payload) as EventRow]
      }
      if (rows.length > 0) await deps.writeDirect(rows)
      store.remove([entry.id])
      onStored(rows.length)
    } catch (error) {
      deps.stage.resetCache()
      store.replayFailed(entry.id, error instanceof Error ? error.message : String(error))
    }
  }
}
