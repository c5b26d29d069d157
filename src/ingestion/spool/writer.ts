/**
 * The durable side of "acknowledged = never lost". Capture appends frames here and answers 200 only when
 * the promise resolves, after the frames are written to a segment opened with O_DSYNC. Appends arriving
 * while a write runs share the next one (group commit), so durability costs one synced write per group,
 * not per request. Writes run on libuv's thread pool: the event loop never waits for the disk.
 *
 * Segments are written at explicit offsets into space zero-filled ahead of the frames (#fillAhead, on the
 * fill thread of filler.ts) while a lane's group writes are small: an O_DSYNC write that grows a file must
 * also commit its new size through the filesystem's journal, one into blocks already written only flushes its
 * data (PostgreSQL zero-fills its WAL segments for the same reason).
 * A segment is cut back to its frames when it is closed; after a crash its zero tail reads as unused space.
 *
 * On startup every lane begins a new segment: old segments (possibly with a torn tail from a crash) are
 * never appended to, and the consumer reads them to their last valid frame. A new segment's first frames are
 * acknowledged only once its folder is synced too (LaneState.named), or a power loss could lose its name.
 */
import { closeSync, constants, ftruncateSync, openSync, unlinkSync, writev } from 'node:fs'
import { dirname } from 'node:path'
import { promisify } from 'node:util'
import { AppError } from '../../common/errors.js'
import type { Lane } from '../types.js'
import type { ZeroFill } from './filler.js'
import { LANES, laneDir, listSegments, segmentPath, syncDirectory } from './layout.js'

const writevAsync = promisify(writev)
/** Durable on return from each write (the per-write equivalent of fdatasync). */
const SEGMENT_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_DSYNC
/**
 * Zeros are kept up to FILL_AHEAD_BYTES ahead of the frames, FILL_STEP_BYTES a fill (each synced when done),
 * while the lane's group writes are small. Measured on the first AMD machine: a group write ≈0.44 → ≈0.3 ms in
 * a bare server; /capture/ with wrk +15 % on SQLite and +9 % on ClickHouse in alternated runs
 * (docs/performance.md). fallocate would not do: its unwritten extents are converted, a journaled change, on
 * their first write.
 */
const FILL_STEP_BYTES = 2 * 1024 * 1024
const FILL_AHEAD_BYTES = 8 * 1024 * 1024
/**
 * Lanes whose group writes average more than this append instead: the journal commit of growing the file is
 * small beside such a write, and the zeros would double what the disk takes. Under /batch/ 100 (≈1.2 MB a
 * group) on the Firecracker machine two thirds of the writes waited for a fill that the disk, busy with the
 * frames, the zeros and the event store, could not write fast enough.
 */
const FILL_MAX_GROUP_BYTES = 256 * 1024

/** How long clients are told to wait when the spool is full or the disk failed. */
const RETRY_AFTER_SECONDS = 5
/** writev accepts at most IOV_MAX (1024 on Linux) buffers per call. */
const IOV_MAX = 1024

export interface SpoolWriterOptions {
  dir: string
  segmentBytes: number
  maxBytes: number
  fsyncIntervalMs: number
  /** Writes the zeros ahead of the frames (filler.ts: FillThread in the service, writeZerosSync in tests). */
  fill: ZeroFill
  /** fsync of a folder (layout.ts's syncDirectory unless a test controls it). */
  syncDir?: (dir: string) => Promise<void>
  /** Told after every successful sync: frames up to `offset` of `segment` are durable. */
  onDurable: (lane: Lane, segment: number, offset: number) => void
  onError: (error: Error) => void
}

/** The appends that share one write: one promise for all of them (no promise or closure per request). */
interface Group {
  done: Promise<void>
  resolve: () => void
  reject: (error: Error) => void
}

function newGroup(): Group {
  let resolve!: () => void
  let reject!: (error: Error) => void
  const done = new Promise<void>((res, rej) => {
    resolve = res
    reject = rej
  })
  return { done, resolve, reject }
}

interface LaneState {
  lane: Lane
  fd: number
  segment: number
  /** Bytes of the segment holding frames (durable ones, and the write in progress). */
  size: number
  /** Bytes from the start of the segment already written, by frames or zeros: writes below it grow nothing. */
  filled: number
  /** Moving average of this lane's group writes, in bytes (FILL_MAX_GROUP_BYTES). */
  groupBytes: number
  /** The zero fill in progress, if any (it writes past `filled`). */
  filling: Promise<void> | null
  /** The sync of the folders naming this segment, until the segment's first write has waited for it. */
  named: Promise<unknown> | null
  pending: Buffer[]
  pendingBytes: number
  /** The appends waiting for the next write of this lane; null when none. */
  group: Group | null
}

export interface SpoolState {
  /** Per lane: the segment being written; every older segment is closed. */
  segments: Record<Lane, number>
  /** Per lane: bytes of that segment that are durable. */
  sizes: Record<Lane, number>
}

export class SpoolWriter {
  readonly #options: SpoolWriterOptions
  readonly #syncDir: (dir: string) => Promise<void>
  readonly #lanes = new Map<Lane, LaneState>()
  #usedBytes = 0
  #timer: NodeJS.Timeout | null = null
  #flushing: Promise<void> | null = null
  #lastError: Error | null = null
  #closed = false

  constructor(options: SpoolWriterOptions) {
    this.#options = options
    this.#syncDir = options.syncDir ?? syncDirectory
    const existing = LANES.map((lane) => listSegments(options.dir, lane)) // creates the folders on a first start
    // A new DATA_DIR's spool and lane folders are new names too: the lanes' first segments wait for them.
    const parents = Promise.all([this.#syncDir(options.dir), this.#syncDir(dirname(options.dir))])
    for (const [i, lane] of LANES.entries()) {
      const segments = existing[i]
      for (const s of segments) this.#usedBytes += s.bytes
      const segment = (segments.at(-1)?.segment ?? 0) + 1
      this.#lanes.set(lane, {
        lane,
        fd: openSync(segmentPath(options.dir, lane, segment), SEGMENT_FLAGS),
        segment,
        size: 0,
        filled: 0,
        groupBytes: 0,
        filling: null,
        named: quiet(Promise.all([parents, this.#syncDir(laneDir(options.dir, lane))])),
        pending: [],
        pendingBytes: 0,
        group: null,
      })
    }
  }

  currentState(): SpoolState {
    const segments = {} as Record<Lane, number>
    const sizes = {} as Record<Lane, number>
    for (const [lane, state] of this.#lanes) {
      segments[lane] = state.segment
      sizes[lane] = state.size
    }
    return { segments, sizes }
  }

  /** True when `bytes` more would fit under the cap (checked before a request appends to several lanes). */
  hasRoom(bytes: number): boolean {
    return this.#usedBytes + bytes <= this.#options.maxBytes
  }

  /** Bytes on disk (or about to be) that the consumer has not released yet. */
  get usedBytes(): number {
    return this.#usedBytes
  }

  /** The last write or sync error, until a later sync succeeds. */
  get lastError(): Error | null {
    return this.#lastError
  }

  /** Resolves once the frames are durable; rejects with 503 when the spool is full or the disk fails. */
  append(lane: Lane, frames: readonly Buffer[], bytes: number): Promise<void> {
    if (this.#closed) return Promise.reject(unavailable('The service is shutting down.'))
    if (this.#usedBytes + bytes > this.#options.maxBytes) {
      return Promise.reject(unavailable('The event spool is full; the event store is behind.'))
    }
    const state = this.#lanes.get(lane)!
    this.#usedBytes += bytes
    for (const frame of frames) state.pending.push(frame)
    state.pendingBytes += bytes
    if (!state.group) {
      state.group = newGroup()
      this.#schedule()
    }
    return state.group.done
  }

  /** The consumer deleted segments holding this many bytes. */
  release(bytes: number): void {
    this.#usedBytes = Math.max(0, this.#usedBytes - bytes)
  }

  /**
   * Group commit: an append to an idle spool waits `fsyncIntervalMs` (0 = the rest of this tick) for
   * company, then one write makes the group durable. Appends arriving during that write form the next
   * group, which starts the moment the write completes, so under load the disk is never idle and no
   * timer adds latency.
   */
  #schedule(): void {
    if (this.#timer || this.#flushing) return
    const wait = this.#options.fsyncIntervalMs
    this.#timer = wait > 0 ? setTimeout(() => this.#run(), wait) : (setImmediate(() => this.#run()) as unknown as NodeJS.Timeout)
  }

  #run(): void {
    this.#timer = null
    this.#flushing = this.#flush().finally(() => {
      this.#flushing = null
      if (this.#waiting()) this.#run()
    })
  }

  #waiting(): boolean {
    for (const state of this.#lanes.values()) if (state.group) return true
    return false
  }

  async #flush(): Promise<void> {
    const work: Array<{ state: LaneState; frames: Buffer[]; bytes: number; group: Group }> = []
    for (const s of this.#lanes.values()) {
      if (!s.group) continue
      work.push({ state: s, frames: s.pending, bytes: s.pendingBytes, group: s.group })
      s.pending = []
      s.pendingBytes = 0
      s.group = null
    }
    await Promise.all(
      work.map(async ({ state, frames, bytes, group }) => {
        try {
          // A fill reaching the range of these frames must end first, or its zeros could land on them.
          if (state.filling && state.size + bytes > state.filled) await state.filling
          // Segments are opened with O_DSYNC: each write returns once its data is on stable storage, so a
          // group costs one trip through libuv's thread pool instead of a write and an fdatasync.
          let at = state.size
          for (let i = 0; i < frames.length; i += IOV_MAX) {
            at = await writeAll(state.fd, frames.slice(i, i + IOV_MAX), at)
          }
          if (state.named) {
            await state.named
            state.named = null
          }
        } catch (error) {
          this.#usedBytes -= bytes
          this.#lastError = error as Error
          this.#options.onError(error as Error)
          // The segment may now end in a partial frame: never append after it.
          await this.#rotate(state)
          const failure = unavailable('The event spool could not be written.')
          group.reject(failure)
          return
        }
        this.#lastError = null
        state.size += bytes
        state.filled = Math.max(state.filled, state.size)
        state.groupBytes += (bytes - state.groupBytes) / 8
        this.#options.onDurable(state.lane, state.segment, state.size)
        group.resolve()
        if (state.size >= this.#options.segmentBytes) await this.#rotate(state)
        else if (state.filled - state.size < FILL_AHEAD_BYTES && state.groupBytes <= FILL_MAX_GROUP_BYTES) this.#fillAhead(state)
      }),
    )
  }

  /** Writes zeros past `filled` in the background; a failed fill only costs the next frames' speed. */
  #fillAhead(state: LaneState): void {
    const from = state.filled
    const to = Math.min(this.#options.segmentBytes, from + FILL_STEP_BYTES)
    if (state.filling || state.fd < 0 || to <= from) return
    state.filling = this.#options.fill(segmentPath(this.#options.dir, state.lane, state.segment), from, to).then(
      () => {
        state.filled = Math.max(state.filled, to)
        state.filling = null
      },
      () => {
        state.filling = null
      },
    )
  }

  /** Cuts the segment back to its frames and closes it (its fill, if any, ends first). */
  async #close(state: LaneState): Promise<void> {
    if (state.filling) await state.filling
    if (state.fd < 0) return
    try {
      if (state.filled > state.size) ftruncateSync(state.fd, state.size)
      closeSync(state.fd)
    } catch {
      // already closed or the disk is gone; the next open reports the real problem (a zero tail left
      // behind reads as unused space)
    }
  }

  async #rotate(state: LaneState): Promise<void> {
    await this.#close(state)
    state.segment += 1
    state.size = 0
    state.filled = 0
    try {
      state.fd = openSync(segmentPath(this.#options.dir, state.lane, state.segment), SEGMENT_FLAGS)
      state.named = quiet(this.#syncDir(laneDir(this.#options.dir, state.lane)))
    } catch (error) {
      this.#lastError = error as Error
      this.#options.onError(error as Error)
      state.fd = -1
    }
    // Tell the consumer the previous segment is finished even before anything is written to this one: after
    // a failed write on a full disk, that segment is what must be deleted for the next write to succeed.
    this.#options.onDurable(state.lane, state.segment, 0)
  }

  /** Waits for pending appends to become durable, then closes the segments (empty ones are removed). */
  async close(): Promise<void> {
    if (this.#timer) {
      clearTimeout(this.#timer)
      this.#timer = null
    }
    while (this.#flushing || this.#waiting()) {
      if (this.#flushing) await this.#flushing
      else await (this.#flushing = this.#flush().finally(() => (this.#flushing = null)))
    }
    this.#closed = true
    for (const state of this.#lanes.values()) {
      await this.#close(state)
      if (state.size === 0) {
        try {
          unlinkSync(segmentPath(this.#options.dir, state.lane, state.segment))
        } catch {
          // nothing to remove
        }
      }
    }
  }
}

/** `promise`, marked handled: a failed sync is reported by the write that awaits it, not as unhandled. */
function quiet<T>(promise: Promise<T>): Promise<T> {
  promise.catch(() => {})
  return promise
}

/** Writes `buffers` at `position`; returns the position after them. */
async function writeAll(fd: number, buffers: Buffer[], position: number): Promise<number> {
  if (fd < 0) throw new Error('spool segment is not open')
  let remaining = buffers
  while (remaining.length > 0) {
    let { bytesWritten: written } = await writevAsync(fd, remaining, position)
    position += written
    // Short writes are rare on regular files but legal: continue from where the kernel stopped.
    let i = 0
    while (i < remaining.length && written >= remaining[i].length) written -= remaining[i++].length
    remaining = remaining.slice(i)
    if (written > 0) remaining[0] = remaining[0].subarray(written)
  }
  return position
}

function unavailable(detail: string): AppError {
  return new AppError('service_unavailable', { detail, retryAfter: RETRY_AFTER_SECONDS })
}
