/**
 * The ingest consumer: one thread, one writer. Two loops share it:
 *
 *   person loop  spool frames ─▶ person & group processing (persons.db transaction, with its checkpoint;
 *                              person-batch.ts)
 *                              ─▶ rows queued for the sink (bounded, so a slow store pauses reading)
 *   sink loop    queued rows ─▶ event store (batched by size and time) ─▶ sink checkpoint ─▶ delete
 *                segments both checkpoints have passed
 *
 * Because the loops are decoupled, person properties stay fresh for /decide while the event store is
 * down. After a crash the sink resumes from its own checkpoint (restart-replay.ts).
 *
 * On ClickHouse the sink loop appends batches to one INSERT spanning several, and the sink checkpoint moves once
 * it commits (sink-span.ts says when and why); if it fails, the thread restarts and writes those events again.
 *
 * Person deletions and splits arrive as control frames on the main lane; the person loop holds and applies them
 * (held-controls.ts), and with `delete_events` the sink loop deletes the persons' events once every row queued
 * before the deletion is stored, before any row queued after it.
 */
import type { Clock } from '../../common/clock.js'
import type { Db } from '../../storage/index.js'
import type { DeadLetterInput, DeadLetters } from '../../storage/dead-letters.js'
import type { PackedRows } from '../../storage/events/packed-rows.js'
import type { EventRow } from '../../storage/events/types.js'
import { compareCursors, LANES, type Cursor } from '../spool/layout.js'
import { LaneReader, type CorruptionReport } from '../spool/reader.js'
import type { EventDeletion } from '../control.js'
import type { Lane } from '../types.js'
import { Alarm } from './alarm.js'
import { Checkpoints } from './checkpoints.js'
import type { CookielessIngest } from '../../persons/index.js'
import { PersonBatches, type DefinitionRecorder, type OnUnreadable, type PersonStage } from './person-batch.js'
import type { ConsumerStats } from './messages.js'
import { readBatch, READ_BYTES, type FrameBatch } from './read-batch.js'
import { BATCH_BYTES, RowQueue, type Batch } from './row-queue.js'
import type { StreamTarget, Stretch } from './spanning-insert.js'
import { backlogBytes, SinkSpan } from './sink-span.js'
import { replayDeadLetters } from './dead-letter-replay.js'
import { releaseSegments } from './segment-release.js'
import { SinkWriter } from './sink-writer.js'
import { PendingDeletions } from './pending-deletions.js'
import { HeldControls, type LaneState } from './held-controls.js'
import { replayAfterRestart } from './restart-replay.js'
import type { BackfillRunner } from './backfill.js'

export interface ConsumerOptions {
  spoolDir: string
  personsDb: Db
  stage: PersonStage
  /** Records event and property definitions in the persons transaction; absent: none are recorded. */
  definitions?: DefinitionRecorder
  /** Gives cookieless events their ids before person processing (absent in tests that need none). */
  cookieless?: CookielessIngest
  /** Derives the definitions of events stored before they were recorded (backfill.ts); absent: none. */
  backfill?: BackfillRunner
  sinkWriter: SinkWriter
  deadLetter: (entries: DeadLetterInput[]) => void
  /** One attempt at the event store, no retries (dead-letter replay decides itself what a failure means). */
  writeDirect: (rows: EventRow[]) => Promise<void>
  activeSegments: Record<Lane, number>
  batchRows: number
  /** Most bytes of row text in one insert (default BATCH_BYTES); the queue holds up to QUEUED_BATCHES of them. */
  batchBytes?: number
  /** Bytes of spool frames read at a time (default READ_BYTES). */
  readBytes?: number
  /** ClickHouse: INSERTs spanning several batches (spanning-insert.ts); null: an INSERT per batch. */
  stream?: StreamTarget | null
  flushIntervalMs: number
  clock: Clock
  log: (level: 'info' | 'warn' | 'error', msg: string, fields?: Record<string, unknown>) => void
  onFreed: (bytes: number) => void
  /** Makes everything the stores (persons, dead letters, an embedded event store) committed durable; throws if it can't. */
  syncStores: () => void
  /** A lane's sink checkpoint moved (and once for each lane at the start): the main thread's ingestion lag (lateness.ts) compares against it. */
  onStoredAt?: (lane: Lane, at: Cursor) => void
}

/** Lanes are served in this repeating order: the live lane most, the historical lane next, overflow least. */
const SCHEDULE: readonly Lane[] = ['main', 'main', 'main', 'historical', 'main', 'main', 'main', 'overflow']
export class Consumer {
  readonly #o: ConsumerOptions
  readonly #checkpoints: Checkpoints
  readonly #lanes = new Map<Lane, LaneState>()
  readonly #queue: RowQueue
  readonly #persons: PersonBatches
  readonly #readBytes: number
  #schedulePos = 0
  #stopping = false
  #replaying = false
  #personsDone = false
  /** Each lane's persons checkpoint at the start: once the sink has passed them all, the restart's replay is stored. */
  readonly #startedAt = new Map<Lane, Cursor>()
  readonly #personsAlarm = new Alarm()
  readonly #sinkAlarm = new Alarm()
  readonly #span: SinkSpan | null
  readonly #pending: PendingDeletions
  readonly #controls: HeldControls
  readonly stats: ConsumerStats = { stored: 0, personsProcessed: 0, deadLettered: 0, cookielessDropped: 0, sinkErrors: 0, sinkUp: true, backlogBytes: 0, queuedRows: 0, lastError: null }

  constructor(options: ConsumerOptions) {
    this.#o = options
    this.#queue = new RowQueue(options.batchRows, options.batchBytes ?? BATCH_BYTES)
    this.#readBytes = options.readBytes ?? READ_BYTES
    this.#span = options.stream
      ? new SinkSpan(options.stream, this.#lanes, options, {
          stopping: () => this.#stopping,
          onFailed: () => this.#sinkAlarm.wake(),
          onStored: ({ rows, stretches }) => this.#afterStored(rows, stretches),
        })
      : null
    this.#checkpoints = new Checkpoints(options.personsDb)
    this.#pending = new PendingDeletions(options.personsDb)
    this.#controls = new HeldControls({
      lanes: this.#lanes,
      personsDb: options.personsDb,
      checkpoints: this.#checkpoints,
      pending: this.#pending,
      stage: options.stage,
      enqueue: (lane, rows, end, replay, deletion) => this.#enqueue(lane, rows, end, replay, deletion),
      unreadable: (lane) => this.#unreadable(lane),
      deadLetter: (entries) => this.#deadLetter(entries),
      log: options.log,
    })
    this.#persons = new PersonBatches({
      db: options.personsDb,
      stage: options.stage,
      definitions: options.definitions,
      cookieless: options.cookieless,
      checkpoints: this.#checkpoints,
      clock: options.clock,
      log: options.log,
      deadLetter: (entries) => this.#deadLetter(entries),
    })
    for (const lane of LANES) {
      const personsAt = this.#checkpoints.get('persons', lane)
      const sinkAt = this.#checkpoints.get('sink', lane)
      const active = options.activeSegments[lane]
      const behind = compareCursors(sinkAt, personsAt) < 0
      this.#lanes.set(lane, {
        lane,
        reader: new LaneReader(options.spoolDir, lane, personsAt, active),
        replay: behind ? { reader: new LaneReader(options.spoolDir, lane, sinkAt, active), until: personsAt } : null,
        personsAt,
        sinkAt,
        held: null,
      })
      options.onStoredAt?.(lane, sinkAt)
      this.#startedAt.set(lane, personsAt)
    }
  }

  /** The writer made more of a lane durable. */
  durable(lane: Lane, segment: number, offset: number): void {
    const state = this.#lanes.get(lane)!
    state.reader.durable(segment, offset)
    // After a restart of this thread alone (not of the process) the stretch to replay can end in the segment
    // the writer is still appending to, which the replay reader reads only as far as it is told is durable.
    state.replay?.reader.durable(segment, offset)
    this.#span?.arrived()
    this.#personsAlarm.wake()
  }

  /** Runs both loops until stop() and everything durable is stored (or the sink writer gives up). */
  async run(): Promise<void> {
    const replayed = replayAfterRestart({
      lanes: this.#lanes,
      pending: this.#pending,
      stage: this.#o.stage,
      clock: this.#o.clock,
      read: (reader, until) => this.#read(reader, until),
      unreadable: (lane) => this.#unreadable(lane),
      enqueue: (lane, rows, end, replay, deletion) => this.#enqueue(lane, rows, end, replay, deletion),
    })
    if (replayed > 0) this.#o.log('info', 'replaying events not yet confirmed by the event store', { events: replayed })
    await Promise.all([this.#personsLoop(), this.#sinkLoop()])
  }

  /** The person loop has other work than the spool (a back-fill slice is ready). */
  wake(): void {
    this.#personsAlarm.wake()
  }

  /** Drain: read what is durable now, store it, then let run() resolve. */
  stop(): void {
    this.#stopping = true
    this.#personsAlarm.wake()
    this.#sinkAlarm.wake()
  }

  refreshStats(): ConsumerStats {
    this.stats.backlogBytes = backlogBytes(this.#lanes)
    this.stats.queuedRows = this.#queue.rows
    return this.stats
  }

  async #personsLoop(): Promise<void> {
    for (;;) {
      if (this.#queue.atCapacity) {
        await this.#personsAlarm.sleep(null)
        continue
      }
      const did = this.#processOneBatch()
      if (did) {
        this.#backfillSlice(false)
        await new Promise((resolve) => setImmediate(resolve))
        continue
      }
      if (this.#stopping) break
      // Nothing to read: back-fill slices back to back, looking at the spool between them.
      if (this.#backfillSlice(true)) {
        await new Promise((resolve) => setImmediate(resolve))
        continue
      }
      await this.#personsAlarm.sleep(1000)
    }
    await this.#o.backfill?.close()
    this.#personsDone = true
    this.#sinkAlarm.wake()
  }

  /** One slice of the definitions back-fill (backfill.ts), started once the restart's replay is stored; true if one ran. */
  #backfillSlice(idle: boolean): boolean {
    const backfill = this.#o.backfill
    if (!backfill || backfill.done) return false
    if (LANES.every((lane) => compareCursors(this.#lanes.get(lane)!.sinkAt, this.#startedAt.get(lane)!) >= 0)) backfill.start()
    return backfill.slice(idle)
  }

  /** Reads and processes one batch from the next lane that has data; false when no lane had any. */
  #processOneBatch(): boolean {
    for (let tried = 0; tried < SCHEDULE.length; tried++) {
      const lane = SCHEDULE[this.#schedulePos]
      this.#schedulePos = (this.#schedulePos + 1) % SCHEDULE.length
      const state = this.#lanes.get(lane)!
      if (state.held) {
        if (this.#controls.apply(state)) return true
        continue
      }
      const frames = this.#read(state.reader)
      if (frames.count === 0) {
        this.#passEmptySegments(state)
        continue
      }
      const control = frames.takeControl()
      if (frames.count > 0) {
        const { end } = frames
        const { rows, processed } = this.#persons.process(lane, frames, this.#unreadable(lane))
        this.stats.personsProcessed += processed
        this.stats.cookielessDropped = this.#persons.cookielessDropped
        state.personsAt = end
        this.#enqueue(lane, rows, end)
      }
      if (control) this.#controls.hold(state, control.payload, control.end)
      state.reader.release()
      return true
    }
    return false
  }

  /**
   * The reader went past the end of a finished segment into one with nothing in it yet (the writer moved on
   * after a failed write, or has not written since rotating). Once the sink has stored everything read so
   * far, both checkpoints move there and the finished segments are deleted: on a full disk that is the
   * space the next write needs, and no new frame would ever arrive to move the checkpoints otherwise.
   */
  #passEmptySegments(state: LaneState): void {
    const at = state.reader.position
    if (compareCursors(at, state.personsAt) <= 0 || compareCursors(state.sinkAt, state.personsAt) !== 0) return
    this.#o.personsDb
      .transaction(() => {
        this.#checkpoints.set('persons', state.lane, at)
        this.#checkpoints.set('sink', state.lane, at)
      })
      .immediate()
    state.personsAt = at
    state.sinkAt = at
    this.#o.onStoredAt?.(state.lane, at)
    this.#releaseSegments(new Set([state.lane]))
  }

  #read(reader: LaneReader, until?: Cursor): FrameBatch {
    return readBatch(reader, this.#readBytes, (r) => this.#corrupt(r), until)
  }

  #unreadable(lane: Lane): OnUnreadable {
    return (payload, error) =>
      this.#deadLetter([{ lane, stage: 'spool', error: `unreadable record: ${String(error)}`, payload: payload.toString('base64') }])
  }

  #enqueue(lane: Lane, rows: PackedRows, end: Cursor, replay = false, deletion: EventDeletion | null = null): void {
    this.#queue.push(lane, rows, end, this.#o.clock.now(), replay, deletion)
    this.#sinkAlarm.wake()
  }

  async #sinkLoop(): Promise<void> {
    const span = this.#span
    for (;;) {
      if (span?.insert.failed && !(await span.settled())) return
      if (this.#queue.empty) {
        // Caught up or the span is over: make the open INSERT's rows visible.
        const commitIn = span?.insert.open ? span.commitIn() : null
        if (span && commitIn !== null && (this.#personsDone || commitIn <= 0)) {
          if (!(await span.commit())) return
          continue
        }
        if (this.#personsDone) {
          if (span?.insert.busy) await span.settled()
          return
        }
        await this.#sinkAlarm.sleep(commitIn)
        continue
      }
      const age = this.#o.clock.now() - this.#queue.oldestAt
      if (!this.#queue.batchReady && age < this.#o.flushIntervalMs && !this.#stopping) {
        await this.#sinkAlarm.sleep(this.#o.flushIntervalMs - age)
        continue
      }
      const batch = this.#queue.take()
      if (span?.insert.ready && !batch.replay && !batch.deletion) {
        // The batch's buffers went to the insert thread; the ones it gave back are packed into again.
        const back = await span.insert.append(batch.rows, batch.items)
        this.#settle(batch, back)
        this.#personsAlarm.wake()
        if (span.commitIn() <= 0 && !(await span.commit())) return
        continue
      }
      if (span?.insert.open && !(await span.commit())) return
      // Only when there is something to wait for: any await here lets the person loop, woken at the end of the
      // last pass, process a whole read before this write reaches the insert thread, which then sits idle
      // (measured: /batch/ on SQLite stored 24.6 k events/s instead of 32.0 k).
      if (span?.insert.busy && !(await span.settled())) return
      if (batch.rows.count > 0) {
        const stored = await this.#o.sinkWriter.write(batch.rows, batch.items.map((i) => i.lane).join(','))
        if (!stored) return // shutdown gave up: the spool still has these rows for the next start
      }
      const { deletion } = batch
      if (deletion && !(await this.#o.sinkWriter.deleteEvents(deletion.teamId, deletion.distinctIds))) return
      this.#settle(batch)
      this.#afterStored(batch.rows.count, batch.items, deletion)
      this.#personsAlarm.wake()
    }
  }

  #settle(batch: Batch, rows: PackedRows = batch.rows): void {
    this.#queue.settle(batch)
    this.#persons.recycle(rows)
  }

  /** Counts stored rows, moves the sink checkpoints past their items, and forgets the event deletion carried out with them in the same transaction. */
  #afterStored(rows: number, items: readonly Stretch[], deletion: EventDeletion | null = null): void {
    this.stats.stored += rows
    const touched = new Set<Lane>()
    for (const item of items) {
      const state = this.#lanes.get(item.lane)!
      state.sinkAt = item.end
      touched.add(item.lane)
    }
    this.#o.personsDb
      .transaction(() => {
        for (const lane of touched) this.#checkpoints.set('sink', lane, this.#lanes.get(lane)!.sinkAt)
        if (deletion) this.#pending.done(deletion.id)
      })
      .immediate()
    for (const lane of touched) this.#o.onStoredAt?.(lane, this.#lanes.get(lane)!.sinkAt)
    this.#releaseSegments(touched)
  }

  /** Deletes segments that both checkpoints have left behind (segment-release.ts) and tells the writer the space is free. */
  #releaseSegments(lanes: Set<Lane>): void {
    const keepFrom = [...lanes].map((lane) => {
      const state = this.#lanes.get(lane)!
      return [lane, Math.min(state.personsAt.segment, state.sinkAt.segment)] as const
    })
    const bytes = releaseSegments(this.#o.spoolDir, keepFrom, this.#o.clock.now(), this.#o.syncStores, this.#o.log)
    if (bytes > 0) this.#o.onFreed(bytes)
  }

  /** Retries the dead letters an operator marked for replay (dead-letter-replay.ts), one pass at a time. */
  async replayDeadLetters(store: DeadLetters): Promise<void> {
    if (this.#replaying) return
    this.#replaying = true
    try {
      await replayDeadLetters(store, this.#o, (rows) => (this.stats.stored += rows))
    } finally {
      this.#replaying = false
    }
  }

  #corrupt(report: CorruptionReport): void {
    this.#o.log('error', 'damaged spool data skipped', { ...report })
    this.#deadLetter([{ lane: report.lane, stage: 'spool', error: `${report.reason} at segment ${report.segment} offset ${report.offset}`, payload: null }])
  }

  #deadLetter(entries: DeadLetterInput[]): void {
    this.#o.deadLetter(entries)
    this.stats.deadLettered += entries.length
  }
}
