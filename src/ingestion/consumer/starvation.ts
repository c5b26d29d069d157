/**
 * When to raise the lowered ingestion threads, and when to lower them again. Under SCHED_IDLE (or nice 19)
 * they yield to this process's request thread, as intended, but also to every busy process on the machine:
 * with both cores taken by others they got ≈0.3 % of a core, and events acknowledged in a few seconds
 * became visible minutes later; a ClickHouse server's merges on the same machine starved them for a second
 * or two at a time. A thread that waited runnable for most of an interval and ran for almost none of it,
 * while other processes used at least half a core, is starved by them (waiting for this process's own
 * request thread is what the policy is for, and a load generator as light as wrk does not count). After
 * STARVED_TICKS such intervals in a row the threads are raised to normal for RAISED_TICKS intervals, then
 * lowered again and watched anew (the consumer's own view of its backlog is no guide: starved, it has not
 * even read the spool writer's latest "durable up to here"). Under a lasting load from elsewhere they are
 * raised 5 s of every 5.5. Pure: the caller samples the threads and applies the answer.
 */

/** What one thread did over the last interval, from /proc/…/schedstat. */
export interface ThreadInterval {
  runMs: number
  waitMs: number
}

export type StarvationAction = 'raise' | 'lower' | null

/** How often the caller samples the threads. */
export const INTERVAL_MS = 250
/** Intervals in a row a thread must be starved before it is raised (0.5 s): one slow interval is not starvation. */
export const STARVED_TICKS = 2
/** Intervals the threads stay raised before they are lowered again (5 s). */
export const RAISED_TICKS = 20
/** Starved: runnable but waiting for at least this share of the interval… */
const WAITING_SHARE = 0.5
/** …while running for at most this share. A thread keeping up with its work runs or sleeps instead. */
const RUNNING_SHARE = 0.1
/** Cores other processes must have used over the interval for a waiting thread to be starved by them. */
export const OTHERS_CORES = 0.5

export function starved(thread: ThreadInterval, intervalMs: number): boolean {
  return thread.waitMs >= intervalMs * WAITING_SHARE && thread.runMs <= intervalMs * RUNNING_SHARE
}

export class StarvationGuard {
  #starvedTicks = 0
  #raisedTicks = 0

  get raised(): boolean {
    return this.#raisedTicks > 0
  }

  /** One interval: the lowered threads' samples (any of them starved counts) and the cores other processes used. */
  tick(threads: ThreadInterval[], intervalMs: number, othersCores: number): StarvationAction {
    if (this.#raisedTicks > 0) {
      if (++this.#raisedTicks <= RAISED_TICKS) return null
      this.#raisedTicks = 0
      this.#starvedTicks = 0
      return 'lower'
    }
    const byOthers = othersCores >= OTHERS_CORES && threads.some((t) => starved(t, intervalMs))
    this.#starvedTicks = byOthers ? this.#starvedTicks + 1 : 0
    if (this.#starvedTicks < STARVED_TICKS) return null
    this.#raisedTicks = 1
    return 'raise'
  }
}
