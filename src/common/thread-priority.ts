/**
 * Background threads (the ingestion consumer and its insert thread) run below the thread answering
 * requests. On a 2-core machine shared with the load, every wake-up of the request thread and of the
 * spool's write waited behind them. Nice 19 gave /capture/ +27–31 % with wrk; SCHED_IDLE instead +22 % more
 * on SQLite and +8 % on ClickHouse, because a normal thread waking preempts an idle-policy thread at once,
 * where nice only shrinks its share (docs/performance.md). Their backlog is durable in the spool.
 */
import { execFile, spawnSync } from 'node:child_process'
import { readdirSync, readFileSync, readlinkSync } from 'node:fs'
import { getPriority, setPriority } from 'node:os'
import { promisify } from 'node:util'

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
    const chrt = spawnSync('chrt', chrtArgs('idle', tid), { stdio: 'ignore', timeout: 5000 })
    if (chrt.status === 0) lowered = 'idle'
  }
  return lowered
}

/** util-linux's chrt setting a thread's policy (SCHED_IDLE or SCHED_OTHER, priority 0). */
function chrtArgs(policy: ThreadPolicy, tid: number): string[] {
  return [policy === 'idle' ? '--idle' : '--other', '--pid', '0', String(tid)]
}

/** SCHED_IDLE's number in `stat`'s policy field. */
export const SCHED_IDLE = 5

/**
 * Fields of a /proc `stat` file (a process's or a thread's) after the parenthesised name, which may hold
 * spaces: niceness is [16], policy [38], user and system time [11] and [12].
 */
export function procStatFields(path: string): string[] {
  const stat = readFileSync(path, 'utf8')
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')
}

/**
 * The threads of this process that lowerThreadPriority lowered (SCHED_IDLE, or the given niceness under the
 * other policy): nothing else in the process runs below normal, so these are the ingestion threads.
 */
export function loweredThreads(policy: ThreadPolicy, nice: number): number[] {
  const out: number[] = []
  for (const name of readdirSync('/proc/self/task')) {
    try {
      const fields = procStatFields(`/proc/self/task/${name}/stat`)
      const lowered = policy === 'idle' ? Number(fields[38]) === SCHED_IDLE : Number(fields[16]) === nice
      if (lowered) out.push(Number(name))
    } catch {
      // the thread ended while we looked
    }
  }
  return out
}

/** Milliseconds a thread has run and has waited runnable for a core (/proc/…/schedstat), or null once it has ended. */
export function threadCpu(tid: number): { runMs: number; waitMs: number } | null {
  try {
    const [run, wait] = readFileSync(`/proc/self/task/${tid}/schedstat`, 'utf8').split(' ')
    return { runMs: Number(run) / 1e6, waitMs: Number(wait) / 1e6 }
  } catch {
    return null
  }
}

/**
 * Busy CPU time of the whole machine and of this process so far, in ms (/proc/stat and /proc/self/stat,
 * both in clock ticks of 10 ms): their difference over an interval is what other processes used.
 */
export function cpuTotals(): { machineMs: number; processMs: number } {
  const [, ...ticks] = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0].trim().split(/\s+/).map(Number)
  // user nice system idle iowait irq softirq steal: busy is everything but idle and iowait (guest time is in user).
  const busy = ticks.slice(0, 8).reduce((a, b) => a + b, 0) - ticks[3] - ticks[4]
  const fields = procStatFields('/proc/self/stat')
  return { machineMs: busy * 10, processMs: (Number(fields[11]) + Number(fields[12])) * 10 }
}

const execFileAsync = promisify(execFile)

/**
 * Raises a lowered thread to the normal policy at niceness `nice`, from another thread (the lowered one may be
 * getting no CPU at all). Leaving SCHED_IDLE and lowering niceness need CAP_SYS_NICE or an RLIMIT_NICE that
 * allows it: false when not allowed.
 */
export async function raiseThread(tid: number, policy: ThreadPolicy, nice: number): Promise<boolean> {
  try {
    if (policy === 'idle') await execFileAsync('chrt', chrtArgs('other', tid), { timeout: 5000 })
    setPriority(tid, nice)
    return true
  } catch {
    return false
  }
}

/** Puts a raised thread back where lowerThreadPriority had put it (always allowed). */
export async function lowerThreadAgain(tid: number, policy: ThreadPolicy, nice: number): Promise<void> {
  try {
    if (nice > 0) setPriority(tid, nice)
    if (policy === 'idle') await execFileAsync('chrt', chrtArgs('idle', tid), { timeout: 5000 })
  } catch {
    // the thread has ended
  }
}
