/**
 * Background threads (the ingestion consumer and its insert thread) run below the thread answering
 * requests. On a 2-core machine shared with the load, every wake-up of the request thread and of the
 * spool's write waited behind them. Nice 19 gave /capture/ +27–31 % with wrk; SCHED_IDLE instead +22 % more
 * on SQLite and +8 % on ClickHouse, because a normal thread waking preempts an idle-policy thread at once,
 * where nice only shrinks its share (docs/performance.md). Their backlog is durable in the spool.
 */
import { spawnSync } from 'node:child_process'
import { readlinkSync } from 'node:fs'
import { setPriority } from 'node:os'

export const THREAD_POLICIES = ['idle', 'other'] as const
export type ThreadPolicy = (typeof THREAD_POLICIES)[number]

/** What lowerThreadPriority applied: SCHED_IDLE, a niceness, or nothing (not Linux, or not allowed). */
export type LoweredTo = 'idle' | 'nice' | null

/** The calling thread's Linux thread id: Node has no gettid, and /proc/thread-self names the thread. */
export function currentThreadId(): number {
  return Number(readlinkSync('/proc/thread-self').split('/').pop())
}

/**
 * Lowers the calling thread (Linux keeps policy and niceness per thread, and threads started from this
 * one inherit both). Node cannot call
 * sched_setscheduler either, so SCHED_IDLE is set by util-linux's chrt (Essential on Debian); without it
 * the niceness still applies.
 */
export function lowerThreadPriority(policy: ThreadPolicy, nice: number): LoweredTo {
  if (process.platform !== 'linux') return null
  let tid: number
  try {
    tid = currentThreadId()
  } catch {
    return null
  }
  let lowered: LoweredTo = null
  try {
    if (nice > 0) {
      setPriority(tid, nice)
      lowered = 'nice'
    }
  } catch {
    // not allowed: try the policy anyway
  }
  if (policy === 'idle') {
    const chrt = spawnSync('chrt', ['--idle', '--pid', '0', String(tid)], { stdio: 'ignore', timeout: 5000 })
    if (chrt.status === 0) lowered = 'idle'
  }
  return lowered
}
