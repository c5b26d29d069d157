/**
 * Control records in the consumer's person loop: person deletions and splits. One arrives as a control frame
 * on the main lane (ingestion/control.ts); the lane holds it, reading nothing more, until every other lane is
 * past what was durable when it was acknowledged, so no event acknowledged before it is processed after it
 * (recreating a deleted person, or merging split ones again). Then one persons.db transaction applies it and
 * moves the lane's checkpoint past the frame. A deletion also records the pending event deletion (with each
 * lane's position: the cut a restart replays up to); the sink loop deletes the events once every row queued
 * before the deletion is stored. A split touches no stored event, as PostHog's.
 */
import type { Db } from '../../storage/index.js'
import type { DeadLetterInput } from '../../storage/dead-letters.js'
import { packedRows, type PackedRows } from '../../storage/events/packed-rows.js'
import { decodeControl, type ControlRecord, type EventDeletion, type PersonDeletion, type PersonSplit } from '../control.js'
import { compareCursors, type Cursor } from '../spool/layout.js'
import type { LaneReader } from '../spool/reader.js'
import type { Lane } from '../types.js'
import type { Checkpoints } from './checkpoints.js'
import type { PendingDeletions } from './pending-deletions.js'
import type { OnUnreadable, PersonStage } from './person-batch.js'

/** What a lane's person loop knows of it. */
export interface LaneState {
  lane: Lane
  reader: LaneReader
  /** Reads the stretch between the sink and person checkpoints once after a restart. */
  replay: { reader: LaneReader; until: Cursor } | null
  personsAt: Cursor
  sinkAt: Cursor
  /** A control record read but not applied yet: the lane reads nothing more until it is. */
  held: { record: ControlRecord; end: Cursor } | null
}

export const NO_ROWS: PackedRows = packedRows([])

export interface HeldControlsDeps {
  lanes: ReadonlyMap<Lane, LaneState>
  personsDb: Db
  checkpoints: Checkpoints
  pending: PendingDeletions
  stage: PersonStage
  enqueue: (lane: Lane, rows: PackedRows, end: Cursor, replay: boolean, deletion: EventDeletion | null) => void
  unreadable: (lane: Lane) => OnUnreadable
  deadLetter: (entries: DeadLetterInput[]) => void
  log: (level: 'info', msg: string, fields: Record<string, unknown>) => void
}

export class HeldControls {
  readonly #d: HeldControlsDeps

  constructor(deps: HeldControlsDeps) {
    this.#d = deps
  }

  /** A control frame was read: held until it can be applied (at once, usually); one this version can't read is dead-lettered. */
  hold(state: LaneState, payload: Buffer, end: Cursor): void {
    try {
      state.held = { record: decodeControl(payload), end }
    } catch (error) {
      this.#d.unreadable(state.lane)(payload, error)
      this.#pass(state, end, () => null)
      return
    }
    this.apply(state)
  }

  /**
   * Applies the held record once every other lane is past what was durable when it was acknowledged (or,
   * where nothing was durable in that lane's segment then, has nothing left to read); false while not.
   */
  apply(state: LaneState): boolean {
    const { record, end } = state.held!
    const lanes = this.#d.lanes
    for (const [lane, at] of Object.entries(record.after) as Array<[Lane, Cursor]>) {
      const other = lanes.get(lane)!
      if (compareCursors(other.personsAt, at) < 0 && !(at.offset === 0 && other.reader.backlogBytes() === 0)) return false
    }
    if (record.op === 'split_person') this.#split(state, record, end)
    else this.#delete(state, record, end)
    return true
  }

  #delete(state: LaneState, record: PersonDeletion, end: Cursor): void {
    const cut = {} as Record<Lane, Cursor>
    for (const other of this.#d.lanes.values()) cut[other.lane] = other === state ? end : other.personsAt
    let freed: string[] = []
    const done = this.#safely(state, record, end, 'person deletion', () => {
      freed = this.#d.stage.deletePersons(record.team_id, record.uuids, record.distinct_ids)
      return record.delete_events && freed.length > 0 ? this.#d.pending.add(record.team_id, freed, cut) : null
    })
    if (done) this.#d.log('info', 'persons deleted', { team_id: record.team_id, distinct_ids: freed.length, delete_events: record.delete_events })
  }

  #split(state: LaneState, record: PersonSplit, end: Cursor): void {
    let split: Array<{ distinctId: string; uuid: string }> = []
    const done = this.#safely(state, record, end, 'person split', () => {
      split = this.#d.stage.splitPerson(record.team_id, record.uuid, record.main_distinct_id, record.distinct_ids_to_split)
      return null
    })
    // None split: the person was merged or deleted meanwhile, or had nothing to split off.
    if (done) this.#d.log('info', 'person split', { team_id: record.team_id, person: record.uuid, split: split.length })
  }

  /** Applies a record in the transaction of #pass; one that fails is dead-lettered and passed over. False then. */
  #safely(state: LaneState, record: ControlRecord, end: Cursor, what: string, apply: () => EventDeletion | null): boolean {
    try {
      this.#pass(state, end, apply)
      return true
    } catch (error) {
      this.#d.stage.resetCache()
      this.#d.deadLetter([{ lane: state.lane, stage: 'persons', error: `${what} failed: ${String(error)}`, payload: JSON.stringify(record) }])
      this.#pass(state, end, () => null)
      return false
    }
  }

  /**
   * Moves the lane's persons checkpoint past a control frame in the transaction of `apply`, and queues what
   * the sink must do there (the event deletion `apply` answers, or nothing but moving its checkpoint).
   */
  #pass(state: LaneState, end: Cursor, apply: () => EventDeletion | null): void {
    let deletion: EventDeletion | null = null
    this.#d.personsDb
      .transaction(() => {
        deletion = apply()
        this.#d.checkpoints.set('persons', state.lane, end)
      })
      .immediate()
    state.held = null
    state.personsAt = end
    this.#d.enqueue(state.lane, NO_ROWS, end, false, deletion)
  }
}
