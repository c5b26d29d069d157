/**
 * Threads in tests: a thread's scheduling read from /proc (Linux), TypeScript imported into a worker thread, and a
 * server's worker thread ended from outside.
 */
import { execFile, spawnSync } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { Worker } from 'node:worker_threads'
import { lowerThreadAgain, PolicyShell, procStatFields } from '../../src/common/thread-priority.js'

export { SCHED_IDLE } from '../../src/common/thread-priority.js'

const execFileAsync = promisify(execFile)

/**
 * Module source for a worker thread that binds `names` (a destructuring pattern such as `{ a, b }`) to a
 * TypeScript module's exports. tap runs the tests under tsx, whose hooks reach only the main thread on Node 20, so
 * the worker registers them itself first, and imports the module dynamically after that.
 */
export function importTypeScript(names: string, moduleUrl: URL): string {
  const tsx = JSON.stringify(import.meta.resolve('tsx/esm/api'))
  return `const { register } = await import(${tsx}); register(); const ${names} = await import(${JSON.stringify(moduleUrl.href)});`
}

/** The normal policy's number in `stat`'s policy field: where a raise puts the ingestion threads. */
export const SCHED_OTHER = 0

/** util-linux's chrt, which the idle policy needs, is installed. */
export const hasChrt = spawnSync('chrt', ['--version'], { stdio: 'ignore' }).status === 0
/** util-linux's setpriv, which runs a process without CAP_SYS_NICE, is installed. */
export const hasSetpriv = spawnSync('setpriv', ['--version'], { stdio: 'ignore' }).status === 0

export interface ThreadScheduling {
  nice: number
  policy: number
}

/** Fields 19 (niceness) and 41 (policy) of `stat`. */
export function threadScheduling(pid: number, tid: number): ThreadScheduling {
  const fields = procStatFields(`/proc/${pid}/task/${tid}/stat`)
  return { nice: Number(fields[16]), policy: Number(fields[38]) }
}

/** The scheduling of every thread of a process, by thread id. */
export function schedulingByThread(pid: number): Map<number, ThreadScheduling> {
  const out = new Map<number, ThreadScheduling>()
  for (const tid of readdirSync(`/proc/${pid}/task`)) out.set(Number(tid), threadScheduling(pid, Number(tid)))
  return out
}

/** The command names of a process's children, by every process's parent in `stat` (this kernel has no `children` files). */
export function childCommands(pid: number): string[] {
  const names: string[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      if (Number(procStatFields(`/proc/${entry}/stat`)[1]) === pid) names.push(readFileSync(`/proc/${entry}/comm`, 'utf8').trim())
    } catch {
      // it ended while the list was read
    }
  }
  return names
}

/** A worker thread that idles, lowered from this thread as the ingestion threads are (SCHED_IDLE at nice 19). */
export async function idleThread(): Promise<{ worker: Worker; tid: number }> {
  const worker = new Worker(
    "require('worker_threads').parentPort.postMessage(Number(require('fs').readlinkSync('/proc/thread-self').split('/').pop())); setInterval(() => {}, 1000)",
    { eval: true },
  )
  const tid = await new Promise<number>((resolve) => worker.once('message', resolve))
  const shell = new PolicyShell()
  await lowerThreadAgain(shell, tid, 'idle', 19)
  shell.close()
  return { worker, tid }
}

const THROW_IN_THREAD = fileURLToPath(new URL('./throw-in-thread.mjs', import.meta.url))

/**
 * Makes the worker thread whose entry URL ends with `suffix`, in a server started with `--inspect=127.0.0.1:0`,
 * throw an uncaught `Error(message)` (`throw-in-thread.mjs`, through the inspector URL the server printed);
 * resolves once the thread is gone.
 */
export async function throwInWorkerThread(server: { stderr: string[] }, suffix: string, message: string): Promise<void> {
  const url = server.stderr.map((line) => /Debugger listening on (ws:\S+)/.exec(line)?.[1]).find(Boolean)
  if (!url) throw new Error('the server was not started with --inspect')
  await execFileAsync(process.execPath, ['--experimental-websocket', '--no-warnings', THROW_IN_THREAD, url, suffix, message])
}
