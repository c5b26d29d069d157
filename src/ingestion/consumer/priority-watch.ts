/**
 * The main thread's watch over the lowered ingestion threads (starvation.ts decides): ten times a second, while
 * acknowledged events wait or the threads are raised, it samples their CPU and other processes' from /proc (≈20 µs
 * a file), raises the threads when other processes starve them, when the consumer is behind or while a new one
 * warms up, and lowers them again a few seconds later. Linux only; nothing to do when the threads were not lowered.
 * With nothing waiting and nothing raised it stops ticking until the spool makes more events durable (wake()).
 */
import { getPriority } from 'node:os'
import { cpuTotals, loweredThreads, lowerThreadAgain, PolicyShell, raiseThread, threadCpu, type ThreadPolicy } from '../../common/thread-priority.js'
import type { Logger } from '../../observability/logger.js'
import { INTERVAL_MS, raisedNice, StarvationGuard, type ConsumerWork, type ThreadInterval } from './starvation.js'

/**
 * Lowered threads are looked for this often (≈20 µs a thread of the process, on the request thread): every
 * 5 s (the insert thread restarts after a failure), every second while raised (one started then lowers itself).
 */
const RESCAN_TICKS = 5_000 / INTERVAL_MS
const RAISED_RESCAN_TICKS = 1_000 / INTERVAL_MS
const LOG_EVERY_MS = 60_000
const RAISE_MESSAGES = {
  raise: 'other processes were starving the ingestion threads: they run at normal priority for a few seconds at a time',
  'catch-up': "the ingest consumer is behind the front: it runs at the request thread's priority until it catches up, and requests are answered slower meanwhile",
} as const

export class PriorityWatch {
  readonly #policy: ThreadPolicy
  readonly #nice: number
  readonly #logger: Logger
  readonly #guard = new StarvationGuard()
  /** null while paused: nothing waits and nothing is raised. */
  #timer: NodeJS.Timeout | null = null
  #stopped = false
  /** Started with the watch, while the process is small (see PolicyShell); none under the other policy, which needs no chrt. */
  readonly #shell: PolicyShell | null
  #tids: number[] = []
  #last = new Map<number, ThreadInterval>()
  #lastTotals = cpuTotals()
  #lastAt = performance.now()
  #ticks = 0
  /** The niceness of the current raise (for threads found while raised), null while lowered. */
  #raisedTo: number | null = null
  /** Raises since each reason was last logged, and when. */
  readonly #logs = { raise: { count: 0, at: 0 }, 'catch-up': { count: 0, at: 0 } }
  #busy = false
  readonly #work: () => ConsumerWork

  /** `work`: what the consumer has reported of its work, and whether acknowledged events wait. */
  constructor(policy: ThreadPolicy, nice: number, logger: Logger, work: () => ConsumerWork) {
    this.#policy = policy
    this.#nice = nice
    this.#logger = logger
    this.#work = work
    this.#shell = policy === 'idle' ? new PolicyShell() : null
    this.wake()
  }

  /** Whether anything was lowered: a process started at the configured niceness or lower has no threads below it. */
  static applies(policy: ThreadPolicy, nice: number): boolean {
    return process.platform === 'linux' && (policy === 'idle' || nice > getPriority())
  }

  /** Acknowledged events may wait: tick again (the first tick back looks for the lowered threads anew). */
  wake(): void {
    if (this.#timer !== null || this.#stopped) return
    this.#tids = []
    this.#timer = setInterval(() => void this.#tick(), INTERVAL_MS).unref()
  }

  stop(): void {
    this.#stopped = true
    this.#pause()
    this.#shell?.close()
  }

  #pause(): void {
    if (this.#timer !== null) clearInterval(this.#timer)
    this.#timer = null
  }

  async #tick(): Promise<void> {
    if (this.#busy) return
    const work = this.#work()
    // Lowered threads with no acknowledged event to store can't be starved of anything that matters. An idle
    // server spent ≈4 ms of its request thread a second on these /proc reads, and the empty ticks still woke it
    // ten times a second (bench/micro/idle.mjs): pause until wake(). Dropping the threads' bases makes the first
    // tick back only set them, so nothing is read as starved over the pause, and a raise for starvation comes
    // one interval later (a warm-up or catch-up does not wait).
    if (this.#raisedTo === null && !work.waiting) {
      this.#last.clear()
      this.#pause()
      return
    }
    this.#busy = true
    try {
      const raisedTo = this.#raisedTo
      if (this.#ticks++ % (raisedTo !== null ? RAISED_RESCAN_TICKS : RESCAN_TICKS) === 0 || this.#tids.length === 0) {
        const found = loweredThreads(this.#policy, this.#nice)
        if (raisedTo === null) this.#tids = found
        else if (found.length > 0) {
          // Started while raised (an insert thread restarted after a failure), it lowered itself: raise it too.
          // A thread started just before the raise may lower itself after it: raised again, it is listed once.
          await Promise.all(found.map((tid) => raiseThread(this.#shell, tid, this.#policy, raisedTo)))
          this.#tids.push(...found.filter((tid) => !this.#tids.includes(tid)))
        }
      }
      const { elapsed, othersCores } = this.#others()
      const action = this.#guard.tick(this.#sample(), elapsed, othersCores, work)
      if (action === 'raise' || action === 'catch-up' || action === 'warm-up') await this.#raise(action)
      else if (action === 'lower') {
        await Promise.all(this.#tids.map((tid) => lowerThreadAgain(this.#shell, tid, this.#policy, this.#nice)))
        this.#raisedTo = null
        this.#tids = loweredThreads(this.#policy, this.#nice)
        this.#last.clear()
      }
    } finally {
      this.#busy = false
    }
  }

  /** Time since the last tick, and the cores other processes used in it: the machine's busy time less this process's. */
  #others(): { elapsed: number; othersCores: number } {
    const totals = cpuTotals()
    const now = performance.now()
    const elapsed = now - this.#lastAt
    const othersMs = totals.machineMs - this.#lastTotals.machineMs - (totals.processMs - this.#lastTotals.processMs)
    this.#lastTotals = totals
    this.#lastAt = now
    return { elapsed, othersCores: othersMs / elapsed }
  }

  /** Each thread's run and wait over the last interval (the first sample of a thread only sets its base). */
  #sample(): ThreadInterval[] {
    const out: ThreadInterval[] = []
    for (const tid of this.#tids) {
      const now = threadCpu(tid)
      const before = this.#last.get(tid)
      if (now) this.#last.set(tid, now)
      if (now && before) out.push({ runMs: now.runMs - before.runMs, waitMs: now.waitMs - before.waitMs })
    }
    return out
  }

  /**
   * Raises the threads (see StarvationAction), saying so at most once a minute for each reason but warm-up,
   * which every new consumer thread goes through once.
   */
  async #raise(reason: 'raise' | 'catch-up' | 'warm-up'): Promise<void> {
    const nice = reason === 'raise' ? raisedNice(this.#policy, this.#nice, getPriority()) : getPriority()
    if (!(await this.#raiseTo(nice, reason !== 'warm-up'))) {
      this.#guard.notRaised()
      return
    }
    this.#raisedTo = nice
    if (reason === 'warm-up') return
    const log = this.#logs[reason]
    log.count++
    const now = Date.now()
    if (now - log.at < LOG_EVERY_MS) return
    this.#logger.info({ component: 'consumer', reason, times: log.count, backlogBytes: this.#work().backlogBytes }, RAISE_MESSAGES[reason])
    log.at = now
    log.count = 0
  }

  /**
   * Raises every watched thread to `nice` under the normal policy; false when not allowed, and then, when
   * the raise was `needed` (not a warm-up, which only shortens the first second of load), the watch stops.
   */
  async #raiseTo(nice: number, needed: boolean): Promise<boolean> {
    const raised = await Promise.all(this.#tids.map((tid) => raiseThread(this.#shell, tid, this.#policy, nice)))
    if (raised.length > 0 && raised.every((ok) => !ok)) {
      if (!needed) return false
      this.#logger.warn(
        { component: 'consumer', policy: this.#policy, nice: this.#nice },
        'other processes are starving the ingestion threads, or the consumer is behind, and this process may not raise them (CAP_SYS_NICE or RLIMIT_NICE): stored events will lag; on a machine shared with busy processes set INGEST_THREAD_POLICY=other and INGEST_THREAD_NICE=0',
      )
      this.stop()
      return false
    }
    return true
  }
}
