/** Reading a thread's scheduling from /proc (Linux). */
import { spawnSync } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'

/** util-linux's chrt, which the idle policy needs, is installed. */
export const hasChrt = spawnSync('chrt', ['--version'], { stdio: 'ignore' }).status === 0

/** SCHED_IDLE's number in `stat`'s policy field. */
export const SCHED_IDLE = 5

export interface ThreadScheduling {
  nice: number
  policy: number
}

/** Fields 19 (niceness) and 41 (policy) of `stat`, counted after the parenthesised name (which may hold spaces). */
export function threadScheduling(pid: number, tid: number): ThreadScheduling {
  const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return { nice: Number(fields[16]), policy: Number(fields[38]) }
}

/** The scheduling of every thread of a process, by thread id. */
export function schedulingByThread(pid: number): Map<number, ThreadScheduling> {
  const out = new Map<number, ThreadScheduling>()
  for (const tid of readdirSync(`/proc/${pid}/task`)) out.set(Number(tid), threadScheduling(pid, Number(tid)))
  return out
}
