/** Reading a thread's scheduling niceness from /proc (Linux). */
import { readdirSync, readFileSync } from 'node:fs'

/** Field 19 of `stat`, counted after the parenthesised name (which may hold spaces). */
export function threadNiceness(pid: number, tid: number): number {
  const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8')
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16])
}

/** Niceness of every thread of a process, by thread id. */
export function nicenessByThread(pid: number): Map<number, number> {
  const out = new Map<number, number>()
  for (const tid of readdirSync(`/proc/${pid}/task`)) out.set(Number(tid), threadNiceness(pid, Number(tid)))
  return out
}
