/**
 * When to raise the lowered ingestion threads, and when to lower them again. Under SCHED_IDLE (or nice 19)
 * they yield to this process's request thread, as intended, but also to every busy process on the machine:
 * with both cores taken by others they got ≈0.3 % of a core, and events acknowledged in a few seconds
 * became visible minutes later; a ClickHouse server's merges on the same machine starved them for a second
 * or two at a time. A thread that waited runnable for most of an interval and ran for almost none of it,
 * while other processes used at least half a core, is starved by them (waiting for this process's own
 * request thread is what the policy is for, and a load generator as light as wrk does not count). After
 * STARVED_TICKS such intervals in a row the threads are raised (raisedNice) for RAISED_TICKS intervals, then
 * lowered again and watched anew (the consumer's own view of its backlog is no guide to starvation: starved,
 * it has not even read the spool writer's latest "durable up to here"). Under a lasting load from elsewhere
 * they are raised 5 s of every 5.2.
 *
 * The backlog is a guide to the other case: the front accepting more than the consumer stores. Lowered, the
 * consumer then gets what the request thread leaves, and the front's CPU goes to growing the backlog while
 * acknowledged events wait longer and longer to be visible. With BEHIND_BYTES of durable spool unread, the
 * threads run at the request thread's own priority ('catch-up') for RAISED_TICKS intervals at a time: the
 * front answers slower and the backlog drains.
 *
 * A new consumer thread is raised the same way when its first events wait ('warm-up'), until it has stored
 * WARM_EVENTS, and only then left to the rules above. Pure: the caller samples the threads and applies the
 * answer.
 */

import type { ThreadPolicy } from '../../common/thread-priority.js'

/** What one thread did over the last interval, from /proc/…/schedstat. */
export interface ThreadInterval {
  runMs: number
  waitMs: number
}

/** What the consumer reports of its work: the guard's view of whether it is behind or still cold. */
export interface ConsumerWork {
  /** Durable spool bytes it has not read (its latest report). */
  backlogBytes: number
  /** Events it has stored since its thread started. */
  stored: number
  /** Acknowledged events are waiting to be stored: the ingestion lag is above 0, or the spool holds unread bytes (after a restart). */
  waiting: boolean
}

/**
 * 'raise': starved by other processes (raisedNice); 'catch-up' (behind) and 'warm-up' (cold): the request
 * thread's own niceness.
 */
export type StarvationAction = 'raise' | 'catch-up' | 'warm-up' | 'lower' | null

/**
 * How often the caller samples the threads. At 250 ms (raised after 0.5 s) most stalls under the bench's `lag`
 * load (ClickHouse merging, the load generators) ended before the threads were raised: persons API p99
 * 290–462 ms against 169–222 ms at 100 ms (three alternated pairs; 55–71 ms never lowered).
 */
export const INTERVAL_MS = 100
/** Intervals in a row a thread must be starved before it is raised (0.2 s): one slow interval is not starvation. */
export const STARVED_TICKS = 2
/** Intervals the threads stay raised before they are lowered again (5 s). */
export const RAISED_TICKS = 50
/**
 * Raised threads run this much nicer than the request thread (CFS weight ≈⅓ of its): enough to end a stall,
 * and they leave it most of a core. With 100 ms intervals and raised to its niceness, they cost /capture/ on
 * ClickHouse 14–32 % in three alternated pairs (ClickHouse alone uses ≈0.3–0.5 cores there, so they are raised
 * often); 5 nicer read −16 to +10 % in six, within the machine's noise.
 */
export const RAISED_NICE_ABOVE_MAIN = 5
/**
 * Durable spool the consumer has not read that makes it behind: ≈3 s of /capture/ at the rate the consumer
 * keeps up with on the Firecracker machine, half a second of /batch/ 100 accepted at full speed. Catching up,
 * /batch/ on ClickHouse stored more in seven of eight alternated pairs (100 and 1,000 events a request, by up
 * to 30 %; docs/performance.md), the front answering ≈30 % fewer requests meanwhile.
 */
export const BEHIND_BYTES = 16 * 1024 * 1024
/**
 * Events a new consumer thread stores at the request thread's priority ('warm-up', for RAISED_TICKS intervals
 * at most) once the first acknowledged events wait. Its code is cold then, and lowered beside a front at full
 * load it ran 14–38 ms of each 100 ms, too much to count as starved: under the bench's `lag` load the events
 * of the first second became visible 0.7–1.1 s late. With the warm-up, in alternated runs, the events API's
 * p99 read 168–209 ms against 250–514 ms on SQLite (four pairs) and 279–443 ms against 344–1,717 ms on
 * ClickHouse (seven); 60,000 events read no better. At full /capture/ speed it is over before the bench
 * measures, and req/s stayed within the machine's noise (docs/performance.md, "Ingestion lag").
 */
export const WARM_EVENTS = 20_000
/** Starved: runnable but waiting for at least this share of the interval… */
const WAITING_SHARE = 0.5
/** …while running for at most this share. A thread keeping up with its work runs or sleeps instead. */
const RUNNING_SHARE = 0.1
/** Cores other processes must have used over the interval for a waiting thread to be starved by them. */
export const OTHERS_CORES = 0.5

/**
 * The niceness raised threads get: RAISED_NICE_ABOVE_MAIN nicer than the request thread (`mainNice`), unless
 * that is no higher than where they were lowered to (INGEST_THREAD_NICE of 5 or less under the other policy,
 * where it would not raise them): then the request thread's own.
 */
export function raisedNice(policy: ThreadPolicy, loweredNice: number, mainNice: number): number {
  const above = Math.min(19, mainNice + RAISED_NICE_ABOVE_MAIN)
  return policy === 'idle' || above < loweredNice ? above : mainNice
}

export function starved(thread: ThreadInterval, intervalMs: number): boolean {
  return thread.waitMs >= intervalMs * WAITING_SHARE && thread.runMs <= intervalMs * RUNNING_SHARE
}

export class StarvationGuard {
  #starvedTicks = 0
  #raisedTicks = 0
  /** 'cold' until the first events wait, 'warming' while raised for them, then 'warm' for good (a consumer that stored WARM_EVENTS first is never raised for it). */
  #warmth: 'cold' | 'warming' | 'warm' = 'cold'

  get raised(): boolean {
    return this.#raisedTicks > 0
  }

  /**
   * The raise just asked for could not be made (no CAP_SYS_NICE): the threads are still lowered, so the guard
   * watches them as such. A warm-up is not tried again: the consumer counts as warm.
   */
  notRaised(): void {
    this.#raisedTicks = 0
    this.#starvedTicks = 0
    if (this.#warmth === 'warming') this.#warmth = 'warm'
  }

  /**
   * One interval: the lowered threads' samples (any of them starved counts), the cores other processes used,
   * and the consumer's latest report of its work.
   */
  tick(threads: ThreadInterval[], intervalMs: number, othersCores: number, work: ConsumerWork): StarvationAction {
    if (this.#raisedTicks > 0) {
      const warmed = this.#warmth === 'warming' && work.stored >= WARM_EVENTS
      if (!warmed && ++this.#raisedTicks <= RAISED_TICKS) return null
      if (this.#warmth === 'warming') this.#warmth = 'warm'
      this.#raisedTicks = 0
      this.#starvedTicks = 0
      return 'lower'
    }
    if (this.#warmth === 'cold' && work.waiting && work.stored < WARM_EVENTS) {
      this.#warmth = 'warming'
      this.#raisedTicks = 1
      return 'warm-up'
    }
    if (work.backlogBytes >= BEHIND_BYTES) {
      this.#raisedTicks = 1
      return 'catch-up'
    }
    const byOthers = othersCores >= OTHERS_CORES && threads.some((t) => starved(t, intervalMs))
    this.#starvedTicks = byOthers ? this.#starvedTicks + 1 : 0
    if (this.#starvedTicks < STARVED_TICKS) return null
    this.#raisedTicks = 1
    return 'raise'
  }
}
