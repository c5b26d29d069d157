// Summary of V8 .cpuprofile files (from `node --cpu-prof` on the server): self time by function, per thread,
// each with the caller that accounts for most of it.
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { round } from './system.mjs'

// Frames that are waiting, not working: V8's idle marker and piscina's blocking Atomics.wait between tasks.
export const WAITING = new Set(['(idle)', 'atomicsWaitLoop'])

/** A frame as the reports name it: function, then file:line relative to the build root. */
export function frameName(root, callFrame) {
  const { functionName, url, lineNumber } = callFrame
  const where = url.startsWith('file://') ? `${relative(root, url.slice(7))}:${lineNumber + 1}` : url ? `${url}:${lineNumber + 1}` : ''
  return `${functionName || '(anonymous)'} ${where}`.trim()
}

/** The server's log message for a worker thread's start (THREAD_STARTED in src/observability/logger.ts). */
const THREAD_STARTED = 'thread started'
/** A cheap test for a line that may log a thread's start (threadRoles parses it). */
export const isThreadStart = (line) => line.includes(`"${THREAD_STARTED}"`)

/**
 * Thread id → role ('main', 'pool', 'consumer', 'insert', 'fill') from the server's log lines: it logs
 * `thread started` with the id V8 puts in each thread's profile name (src/observability/logger.ts).
 */
export function threadRoles(lines) {
  const roles = new Map([[0, 'main']])
  for (const line of lines.filter(isThreadStart)) {
    try {
      const { msg, thread, threadId } = JSON.parse(line)
      if (msg === THREAD_STARTED && Number.isInteger(threadId)) roles.set(threadId, thread)
    } catch {
      // Not a log line (the first-run banner, a stack trace).
    }
  }
  return roles
}

/** How reports name a profile's thread: 'consumer thread 2', or 'thread 2' when its role is unknown. */
export const threadLabel = (p) => `${p.role ? `${p.role} ` : ''}thread ${p.thread}`

/**
 * Top `limit` functions by self time for each profile in `dir` (one per thread: main thread is tid 0), each
 * named by its role in `roles` (threadRoles) where known.
 */
export function summariseProfiles(dir, root, limit = 15, roles = new Map()) {
  const out = []
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.cpuprofile')).sort()) {
    const profile = JSON.parse(readFileSync(join(dir, file), 'utf8'))
    const byId = new Map(profile.nodes.map((node) => [node.id, node]))
    const parent = new Map()
    for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id)
    const self = new Map() // name → µs
    const callers = new Map() // name → Map(caller name → µs)
    let total = 0
    let idle = 0
    for (let i = 0; i < profile.samples.length; i++) {
      const node = byId.get(profile.samples[i])
      const dt = profile.timeDeltas[i] ?? 0
      if (WAITING.has(node.callFrame.functionName)) {
        idle += dt
        continue
      }
      total += dt
      const name = frameName(root, node.callFrame)
      self.set(name, (self.get(name) ?? 0) + dt)
      const up = byId.get(parent.get(node.id))
      if (up) {
        const byCaller = callers.get(name) ?? new Map()
        const callerName = frameName(root, up.callFrame)
        byCaller.set(callerName, (byCaller.get(callerName) ?? 0) + dt)
        callers.set(name, byCaller)
      }
    }
    const thread = /\.(\d+)\.(\d+)\.(\d+)\.cpuprofile$/.exec(file) // CPU.<date>.<time>.<pid>.<tid>.<seq>
    const top = [...self.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, limit)
      .map(([fn, us]) => {
        const caller = [...(callers.get(fn) ?? new Map()).entries()].sort((a, b) => b[1] - a[1])[0]
        return { fn, ms: round(us / 1000, 1), pct: round((100 * us) / total, 1), caller: caller ? caller[0] : null }
      })
    const tid = thread ? Number(thread[2]) : null
    out.push({ file, path: join(dir, file), thread: tid, role: roles.get(tid) ?? null, busyMs: round(total / 1000), idleMs: round(idle / 1000), top })
  }
  return out
}
