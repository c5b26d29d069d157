/**
 * Background threads (the ingestion consumer and its insert thread) run below the thread answering
 * requests. On a 2-core machine shared with the load, every wake-up of the request thread and of the
 * spool's write waited behind them. Nice 19 gave /capture/ +27–31 % with wrk; SCHED_IDLE instead +22 % more
 * on SQLite and +8 % on ClickHouse, because a normal thread waking preempts an idle-policy thread at once,
 * where nice only shrinks its share (docs/performance.md). Their backlog is durable in the spool.
 */
import { spawn, spawnSync, type ChildProcessByStdio } from 'node:child_process'
import { readdirSync, readFileSync, readlinkSync } from 'node:fs'
import { getPriority, setPriority } from 'node:os'
import type { Readable, Writable } from 'node:stream'

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

/**
 * util-linux's chrt for other threads, run by one shell started with the watch: a process forked from Node's
 * request thread stops it for as long as the fork takes, 12–43 ms at ≈190–240 MB of RSS under /capture/ load
 * (measured), where the shell, a few MB, forks chrt on its own thread. Each line in is a policy and a thread id,
 * each line out chrt's exit status, in order. The shell reads until this process closes its stdin or ends.
 */
export class PolicyShell {
  readonly #shell: ChildProcessByStdio<Writable, Readable, null>
  readonly #waiting: ((ok: boolean) => void)[] = []
  #pending = ''
  #ended = false

  constructor() {
    const loop = 'while read -r policy tid; do chrt "--$policy" --pid 0 "$tid" >/dev/null 2>&1; echo $?; done'
    this.#shell = spawn('sh', ['-c', loop], { stdio: ['pipe', 'pipe', 'ignore'] })
    this.#shell.stdout.setEncoding('utf8').on('data', (chunk: string) => this.#read(chunk))
    this.#shell.on('error', () => this.#end()).on('exit', () => this.#end())
    this.#shell.stdin.on('error', () => this.#end())
    // An idle shell keeps nothing alive.
    this.#shell.unref()
    ;(this.#shell.stdout as Readable & { unref(): void }).unref()
    ;(this.#shell.stdin as Writable & { unref(): void }).unref()
  }

  /** Sets a thread's policy (priority 0): false when chrt failed (not allowed, the thread ended) or the shell is gone. */
  set(policy: ThreadPolicy, tid: number): Promise<boolean> {
    if (this.#ended) return Promise.resolve(false)
    return new Promise((resolve) => {
      this.#waiting.push(resolve)
      this.#shell.stdin.write(`${policy} ${tid}\n`)
    })
  }

  close(): void {
    this.#shell.stdin.end()
  }

  #read(chunk: string): void {
    const lines = (this.#pending + chunk).split('\n')
    this.#pending = lines.pop()!
    for (const status of lines) this.#waiting.shift()?.(status === '0')
  }

  #end(): void {
    this.#ended = true
    for (const resolve of this.#waiting.splice(0)) resolve(false)
  }
}

/**
 * Raises a lowered thread to the normal policy at niceness `nice`, from another thread (the lowered one may be
 * getting no CPU at all). Leaving SCHED_IDLE and lowering niceness need CAP_SYS_NICE or an RLIMIT_NICE that
 * allows it: false when not allowed. `shell` runs chrt, which only SCHED_IDLE needs: null under the other policy.
 */
export async function raiseThread(shell: PolicyShell | null, tid: number, policy: ThreadPolicy, nice: number): Promise<boolean> {
  if (policy === 'idle' && !(await shell?.set('other', tid))) return false
  try {
    setPriority(tid, nice)
    return true
  } catch {
    return false
  }
}

/** Puts a raised thread back where lowerThreadPriority had put it (always allowed). */
export async function lowerThreadAgain(shell: PolicyShell | null, tid: number, policy: ThreadPolicy, nice: number): Promise<void> {
  try {
    if (nice > 0) setPriority(tid, nice)
  } catch {
    // the thread has ended
  }
  if (policy === 'idle') await shell?.set('idle', tid)
}
