/**
 * Reads one spool lane in order for the consumer thread. Segments the running writer owns are read only up
 * to the offset it reported durable; older segments (from before a restart) are read to their last valid
 * frame, so a torn tail after a crash is skipped instead of misread: a frame cut short, or one damaged
 * with nothing but the writer's zero fill after it (a write cut off at a page). A corrupt frame in the
 * middle of a segment ends that segment and is reported, never silently dropped.
 */
import { closeSync, openSync, readSync, statSync } from 'node:fs'
import type { Lane } from '../types.js'
import { FrameKind, HEADER_BYTES, readFrame } from './format.js'
import { compareCursors, listSegments, segmentPath, type Cursor } from './layout.js'

const READ_CHUNK = 4 * 1024 * 1024

export interface SpoolFrame {
  kind: number
  payload: Buffer
  /** Position just after this frame. */
  end: Cursor
}

export interface CorruptionReport {
  lane: Lane
  segment: number
  offset: number
  reason: string
}

/** Whether a segment holds anything but unused space (zero fill) at `offset`: a frame, or what is left of one. */
export function holdsDataAt(dir: string, lane: Lane, segment: number, offset: number): boolean {
  let fd = -1
  try {
    fd = openSync(segmentPath(dir, lane, segment), 'r')
    const header = Buffer.alloc(HEADER_BYTES)
    const n = readSync(fd, header, 0, HEADER_BYTES, offset)
    return n > 0 && readFrame(header.subarray(0, n), 0).status !== 'unused'
  } catch {
    return false // deleted meanwhile: nothing left to read
  } finally {
    if (fd >= 0) closeSync(fd)
  }
}

export class LaneReader {
  readonly lane: Lane
  readonly #dir: string
  /** Segments at or above this one belong to the running writer and are trusted only up to `#durable`. */
  readonly #firstLive: number
  readonly #durable = new Map<number, number>()
  /** The sizes of the segments from before a restart that are left to read: they count in the backlog. */
  readonly #older: ReadonlyMap<number, number>
  #maxKnownSegment: number
  #position: Cursor
  #fd = -1
  #fdSegment = -1
  #buffer: Buffer = Buffer.alloc(0)
  #bufferStart = 0
  /**
   * Full-size (READ_CHUNK) buffers: `#whole` is the one `#buffer` views, `#replaced` the last one read from
   * before it, which frames handed out may still view, and `#free` one that none does any more (release()),
   * read into again. A fresh 4 MB buffer is a mapping of its own (glibc's mmap threshold, architecture.md
   * "malloc") whose every page faults when the read fills it: ≈1.5 % of the consumer thread's time in a drain.
   */
  #whole: Buffer | null = null
  #replaced: Buffer | null = null
  #free: Buffer | null = null

  constructor(dir: string, lane: Lane, start: Cursor, firstLiveSegment: number) {
    this.#dir = dir
    this.lane = lane
    this.#firstLive = firstLiveSegment
    this.#maxKnownSegment = firstLiveSegment - 1
    // A checkpoint in a segment that is gone (or none: segment 0) reads as an exhausted segment, and
    // #advanceSegment moves on to the oldest segment still on disk.
    this.#position = { ...start }
    const older = listSegments(dir, lane).filter((s) => s.segment >= start.segment && s.segment < firstLiveSegment)
    this.#older = new Map(older.map((s) => [s.segment, s.bytes]))
  }

  get position(): Cursor {
    return { ...this.#position }
  }

  /** The writer made `segment` durable up to `offset`. */
  durable(segment: number, offset: number): void {
    this.#durable.set(segment, offset)
    if (segment > this.#maxKnownSegment) this.#maxKnownSegment = segment
  }

  /** The caller is done with every frame read so far: their buffers may be read into again. */
  release(): void {
    if (this.#replaced === null) return
    this.#free = this.#replaced
    this.#replaced = null
  }

  /**
   * Bytes known durable but not read yet: an estimate for metrics and the priority watch. Segments from
   * before a restart count by their size, so after a crash their unused zero-filled tail counts until the
   * reader reaches it.
   */
  backlogBytes(): number {
    return this.#unread(this.#older) + this.#unread(this.#durable)
  }

  #unread(ends: ReadonlyMap<number, number>): number {
    let total = 0
    for (const [segment, end] of ends) {
      if (segment > this.#position.segment) total += end
      else if (segment === this.#position.segment) total += Math.max(0, end - this.#position.offset)
    }
    return total
  }

  /**
   * Up to `maxFrames` frames from the current position; empty when nothing durable is left. With `until`,
   * stops at that position (used to replay a stretch that was already read once). A control frame is always
   * the last of a read: what follows it must wait until the consumer has applied it.
   */
  read(maxFrames: number, onCorrupt: (report: CorruptionReport) => void, until?: Cursor): SpoolFrame[] {
    const frames: SpoolFrame[] = []
    while (frames.length < maxFrames) {
      if (until && compareCursors(this.#position, until) >= 0) break
      const { segment } = this.#position
      const limit = this.#limitOf(segment)
      if (limit === null) break
      if (this.#position.offset >= limit) {
        if (!this.#advanceSegment()) break
        continue
      }
      const chunk = this.#chunk(segment, this.#position.offset, limit)
      const result = readFrame(chunk, 0)
      if (result.status === 'ok') {
        this.#position = { segment, offset: this.#position.offset + result.next }
        frames.push({ kind: result.kind, payload: result.payload, end: { ...this.#position } })
        if (result.kind === FrameKind.control) break
        continue
      }
      // The chunk always reaches either a whole frame or the readable limit, so this frame is damaged, cut
      // short or unused space. In a segment from before a restart, a torn tail is the last write, never
      // acknowledged; anything else is damage worth reporting. Either way the rest of the segment can't be
      // framed, so reading continues with the next one.
      const offset = this.#position.offset
      const torn = result.status !== 'corrupt' || this.#onlyZerosAfter(offset + HEADER_BYTES + chunk.readUInt32LE(0), limit)
      if (segment >= this.#firstLive || !torn) {
        const reason = result.status === 'corrupt' ? result.reason : result.status === 'unused' ? 'unwritten space' : 'truncated frame'
        onCorrupt({ lane: this.lane, segment, offset, reason })
      }
      this.#position = { segment, offset: limit }
    }
    return frames
  }

  /** How far this segment may be read: durable offset, file size for old segments, null if unknown. */
  #limitOf(segment: number): number | null {
    if (segment >= this.#firstLive) return this.#durable.get(segment) ?? null
    try {
      return statSync(segmentPath(this.#dir, this.lane, segment)).size
    } catch {
      return 0 // deleted: nothing to read
    }
  }

  #advanceSegment(): boolean {
    const next = this.#position.segment + 1
    if (next < this.#firstLive) {
      const exists = listSegments(this.#dir, this.lane).find((s) => s.segment >= next)
      this.#position = { segment: exists && exists.segment < this.#firstLive ? exists.segment : this.#firstLive, offset: 0 }
      this.#closeFinished()
      return true
    }
    if (next > this.#maxKnownSegment) return false
    this.#position = { segment: next, offset: 0 }
    this.#closeFinished()
    return true
  }

  /**
   * Lets go of the segment read last once the position has left it: the consumer deletes finished segments,
   * and an open descriptor would keep a deleted file's space taken (on a full disk, the space the writer
   * needs) until the next segment with data is opened.
   */
  #closeFinished(): void {
    if (this.#fd >= 0 && this.#fdSegment < this.#position.segment) {
      this.close()
      if (this.#whole !== null) this.#replaced = this.#whole
      this.#whole = null
      this.#buffer = Buffer.alloc(0)
      this.#bufferStart = 0
    }
  }

  /** A buffer that starts at `offset` of the segment and holds at least one whole frame if available. */
  #chunk(segment: number, offset: number, limit: number): Buffer {
    const bufferEnd = this.#bufferStart + this.#buffer.length
    if (this.#fdSegment === segment && offset >= this.#bufferStart && offset < bufferEnd) {
      const view = this.#buffer.subarray(offset - this.#bufferStart)
      const declared = view.length >= 4 ? view.readUInt32LE(0) + 9 : Infinity
      if (view.length >= declared || bufferEnd >= limit) return view
    }
    if (this.#fdSegment !== segment) {
      if (this.#fd >= 0) closeSync(this.#fd)
      this.#fd = openSync(segmentPath(this.#dir, this.lane, segment), 'r')
      this.#fdSegment = segment
    }
    const want = Math.min(limit - offset, Math.max(READ_CHUNK, this.#frameSizeAt(offset)))
    if (this.#whole !== null) this.#replaced = this.#whole
    const free = want <= READ_CHUNK ? this.#free : null
    if (free !== null) this.#free = null
    // Full size even for a short read (near the durable end, as while the consumer keeps up): so it can be reused.
    const buf = free ?? Buffer.allocUnsafe(Math.max(want, READ_CHUNK))
    this.#whole = buf.length === READ_CHUNK ? buf : null
    const n = readSync(this.#fd, buf, 0, want, offset)
    this.#buffer = buf.subarray(0, n)
    this.#bufferStart = offset
    return this.#buffer
  }

  /** True when the open segment holds only zero bytes from `from` (the end a damaged frame declares) to `limit`. */
  #onlyZerosAfter(from: number, limit: number): boolean {
    if (from > limit) return false
    const buf = Buffer.allocUnsafe(1024 * 1024)
    for (let at = from; at < limit; ) {
      const n = readSync(this.#fd, buf, 0, Math.min(buf.length, limit - at), at)
      if (n <= 0) break
      for (let i = 0; i < n; i++) if (buf[i] !== 0) return false
      at += n
    }
    return true
  }

  #frameSizeAt(offset: number): number {
    const header = Buffer.alloc(4)
    return readSync(this.#fd, header, 0, 4, offset) === 4 ? header.readUInt32LE(0) + 9 : 0
  }

  close(): void {
    if (this.#fd >= 0) closeSync(this.#fd)
    this.#fd = -1
    this.#fdSegment = -1
  }
}
