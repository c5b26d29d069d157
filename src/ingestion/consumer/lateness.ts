/**
 * How late the event store is (`skylark_ingestion_lag_seconds`): the age of the oldest event the spool made
 * durable that the store has not confirmed yet, which is what "acknowledged → visible" waits for. The
 * consumer thread publishes each lane's sink checkpoint in shared memory (StoredCursors); the main thread
 * notes when each "durable up to here" went out to it (Lateness) and compares. Shared memory, not a message:
 * a consumer starved of CPU cannot send one, and its silence must read as late, not as caught up. The
 * backlog in bytes does not say this: one second behind is ≈3 MB under the bench's `lag` load and ≈12 MB at
 * full /capture/ speed. The age is low by the notifier's ≤10 ms coalescing and the group write's time.
 */
import { compareCursors, LANES, type Cursor, type SegmentInfo } from '../spool/layout.js'
import type { Lane } from '../types.js'

/** A cursor as one atomic 64-bit word: segment numbers below 2^23, offsets below 1 TiB. */
const OFFSET_BITS = 40n
const OFFSET_MASK = (1n << OFFSET_BITS) - 1n

/** Each lane's sink checkpoint, written by the consumer thread, read by the main thread. */
export class StoredCursors {
  readonly buffer: SharedArrayBuffer
  readonly #words: BigInt64Array

  constructor(buffer = new SharedArrayBuffer(LANES.length * 8)) {
    this.buffer = buffer
    this.#words = new BigInt64Array(buffer)
  }

  set(lane: Lane, at: Cursor): void {
    Atomics.store(this.#words, LANES.indexOf(lane), (BigInt(at.segment) << OFFSET_BITS) | BigInt(at.offset))
  }

  get(lane: Lane): Cursor {
    const word = Atomics.load(this.#words, LANES.indexOf(lane))
    return { segment: Number(word >> OFFSET_BITS), offset: Number(word & OFFSET_MASK) }
  }
}

interface Durable extends Cursor {
  at: number
}

/**
 * Reports kept per lane. The notifier sends at most one a lane every 10 ms, so this is 20 s of them; past
 * that the newest one only moves forward, which keeps the oldest one's age exact.
 */
const MAX_PENDING = 2_000

/** The main thread's side: when each durable position was reported. */
export class Lateness {
  readonly #pending = new Map<Lane, Durable[]>(LANES.map((lane) => [lane, []]))

  /** The spool made `lane` durable up to (segment, offset) at `at` (ms, the caller's clock). */
  durable(lane: Lane, segment: number, offset: number, at: number): void {
    const pending = this.#pending.get(lane)!
    const last = pending.at(-1)
    if (last && pending.length >= MAX_PENDING) Object.assign(last, { segment, offset })
    else pending.push({ segment, offset, at })
  }

  /** `lane` holds events up to `end` that an earlier run acknowledged, at `at` or before: older than any durable() of this run. */
  leftover(lane: Lane, end: Cursor, at: number): void {
    this.#pending.get(lane)!.unshift({ ...end, at })
  }

  /** Milliseconds the oldest durable event the store has not confirmed has waited at `now`; 0 when there is none. */
  ageMs(stored: StoredCursors, now: number): number {
    let oldest = now
    for (const [lane, pending] of this.#pending) {
      const storedAt = stored.get(lane)
      let passed = 0
      while (passed < pending.length && compareCursors(pending[passed], storedAt) <= 0) passed++
      if (passed > 0) pending.splice(0, passed)
      if (pending.length > 0) oldest = Math.min(oldest, pending[0].at)
    }
    return now - oldest
  }
}

/**
 * What an earlier run left in a lane's spool that the store has not confirmed: the segments before this run's
 * first (`firstLive`) with something but unused space (`holdsData`) where reading them resumes, at the lane's
 * sink checkpoint or at their start. A lane never written has an empty segment from each start, and one whose
 * events were all stored may have a crash's zero tail: neither waits. It ends where the last of them does,
 * which the checkpoint reaches once all of it is stored, a torn tail included (the consumer moves the
 * checkpoint past what it could not frame). Its events were acknowledged no later than the oldest of them was
 * last written.
 */
export function leftover(
  segments: readonly SegmentInfo[],
  firstLive: number,
  stored: Cursor,
  holdsData: (segment: number, offset: number) => boolean,
): { end: Cursor; writtenAt: number } | null {
  const unstored = segments.filter((s) => {
    if (s.segment < stored.segment || s.segment >= firstLive) return false
    const from = s.segment === stored.segment ? stored.offset : 0
    return s.bytes > from && holdsData(s.segment, from)
  })
  const last = unstored.at(-1)
  return last ? { end: { segment: last.segment, offset: last.bytes }, writtenAt: unstored[0].modifiedAt } : null
}
