/**
 * Background threads (the ingestion consumer and its insert thread) run at a lower priority than the
 * thread answering requests. On a 2-core machine shared with the load, every wake-up of the request thread
 * and of the spool's write waited behind them: /capture/ +27–31 % with wrk, /batch/ accepted +15–68 % with
 * about the same events stored per second (docs/performance.md). Their backlog is durable in the spool.
 */
import { readlinkSync } from 'node:fs'
import { setPriority } from 'node:os'

/**
 * Sets the calling thread's niceness (Linux keeps it per thread, and threads started from this one inherit
 * it). Node has no gettid; /proc/thread-self names the thread. Returns false where that is unavailable.
 */
export function lowerThreadPriority(nice: number): boolean {
  if (process.platform !== 'linux') return false
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop())
    setPriority(tid, nice)
    return true
  } catch {
    return false
  }
}
