/**
 * After a restart, the events between a lane's sink and person checkpoints were processed for persons but not
 * confirmed by the event store: they are re-derived with `enrich` (no second person update) and queued again,
 * deduplicated by uuid in the store. Event deletions not carried out before the restart split these stretches:
 * each lane's rows up to the deletion's cut are queued, then the deletion, and only then the rows after it.
 */
import type { Clock } from '../../common/clock.js'
import { packedRows, type PackedRows } from '../../storage/events/packed-rows.js'
import type { EventDeletion } from '../control.js'
import { compareCursors, type Cursor } from '../spool/layout.js'
import type { LaneReader } from '../spool/reader.js'
import type { Lane } from '../types.js'
import { NO_ROWS, type LaneState } from './held-controls.js'
import type { PendingDeletions } from './pending-deletions.js'
import type { OnUnreadable, PersonStage } from './person-batch.js'
import { decodeFrames, type FrameBatch } from './read-batch.js'
import { toEventRows } from './rows.js'

export interface RestartReplayDeps {
  lanes: ReadonlyMap<Lane, LaneState>
  pending: PendingDeletions
  stage: PersonStage
  clock: Clock
  read: (reader: LaneReader, until?: Cursor) => FrameBatch
  unreadable: (lane: Lane) => OnUnreadable
  enqueue: (lane: Lane, rows: PackedRows, end: Cursor, replay: boolean, deletion: EventDeletion | null) => void
}

/** Queues every lane's replay and the pending event deletions in order; closes the replay readers; returns the rows queued. */
export function replayAfterRestart(d: RestartReplayDeps): number {
  let replayed = 0
  for (const pending of d.pending.all()) {
    for (const state of d.lanes.values()) replayed += replayLane(d, state, pending.cut[state.lane])
    d.enqueue('main', NO_ROWS, pending.cut.main, true, pending)
  }
  for (const state of d.lanes.values()) {
    replayed += replayLane(d, state)
    state.replay?.reader.close()
    state.replay = null
  }
  return replayed
}

/** Queues the lane's replay rows up to `until` (or the end of its stretch); returns how many. */
function replayLane(d: RestartReplayDeps, state: LaneState, until?: Cursor): number {
  if (!state.replay) return 0
  const stop = until && compareCursors(until, state.replay.until) < 0 ? until : state.replay.until
  let replayed = 0
  for (;;) {
    const frames = d.read(state.replay.reader, stop)
    if (frames.count === 0) return replayed
    const events = decodeFrames(frames.frames(), d.unreadable(state.lane)).events
    const rows = packedRows(toEventRows(events, events.map((e) => d.stage.enrich(e)), d.clock.now()))
    state.replay.reader.release()
    replayed += rows.count
    d.enqueue(state.lane, rows, frames.end, true, null)
  }
}
