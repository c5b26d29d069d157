import { getPriority } from 'node:os'
import { Worker } from 'node:worker_threads'
import t from 'tap'
import { hasChrt, importTypeScript, SCHED_IDLE, threadScheduling, type ThreadScheduling } from '../../helpers/threads.js'

const of = (tid: number) => threadScheduling(process.pid, tid)
const linuxOnly = process.platform !== 'linux' && 'Linux only'

/**
 * A worker lowers itself, then starts a thread of its own; both report their thread ids. They stay alive until
 * stopped (a minute at most): lowered to nice 19 on a machine kept busy by other processes, the child took over
 * 5 s to load, and a 5 s limit ended it before it reported, leaving the test unfinished.
 */
async function lowerInWorker(policy: string, nice: number): Promise<{ lowered: string | null; tid: number; childTid: number; stop: () => Promise<number> }> {
  const moduleUrl = new URL('../../../src/common/thread-priority.ts', import.meta.url)
  const imports = `import { parentPort, Worker } from 'node:worker_threads'; ${importTypeScript('{ currentThreadId, lowerThreadPriority }', moduleUrl)}`
  const childSource = `${imports}; parentPort.postMessage(currentThreadId()); setTimeout(() => {}, 60_000)`
  const source = `
    ${imports}
    const lowered = lowerThreadPriority(${JSON.stringify(policy)}, ${nice})
    const child = new Worker(${JSON.stringify(childSource)}, { eval: true, type: 'module' })
    child.once('message', (childTid) => parentPort.postMessage({ lowered, tid: currentThreadId(), childTid }))
    setTimeout(() => child.terminate(), 60_000)
  `
  const worker = new Worker(new URL(`data:text/javascript,${encodeURIComponent(source)}`), { execArgv: process.execArgv })
  const reply = await new Promise<{ lowered: string | null; tid: number; childTid: number }>((resolve, reject) => {
    worker.once('message', resolve)
    worker.once('error', reject)
    worker.once('exit', (code) => reject(new Error(`the worker exited (${code}) before it reported`)))
  })
  return { ...reply, stop: () => worker.terminate() }
}

t.test('the other policy lowers the niceness of the calling thread only, and threads it starts inherit it', { skip: linuxOnly }, async (t) => {
  const main: ThreadScheduling = of(process.pid)
  const w = await lowerInWorker('other', 19)
  t.equal(w.lowered, 'nice')
  t.same(of(w.tid), { nice: 19, policy: 0 }, 'the calling thread')
  t.same(of(w.childTid), { nice: 19, policy: 0 }, 'a thread it started afterwards')
  t.same(of(process.pid), main, 'the main thread is untouched')
  await w.stop()
})

t.test('the idle policy puts the calling thread and the threads it starts under SCHED_IDLE', { skip: linuxOnly || (!hasChrt && 'chrt (util-linux) missing') }, async (t) => {
  const main: ThreadScheduling = of(process.pid)
  const w = await lowerInWorker('idle', 0)
  t.equal(w.lowered, 'idle')
  t.equal(of(w.tid).policy, SCHED_IDLE, 'the calling thread')
  t.equal(of(w.childTid).policy, SCHED_IDLE, 'a thread it started afterwards')
  t.same(of(process.pid), main, 'the main thread is untouched')
  await w.stop()
})

t.test('another thread finds the lowered threads, reads their CPU, raises them and lowers them again', { skip: linuxOnly || (!hasChrt && 'chrt (util-linux) missing') }, async (t) => {
  const { loweredThreads, lowerThreadAgain, PolicyShell, raiseThread, threadCpu } = await import('../../../src/common/thread-priority.js')
  const shell = new PolicyShell()
  t.teardown(() => shell.close())
  const w = await lowerInWorker('idle', 19)
  const found = loweredThreads('idle', 19)
  // (Under tap each worker also has a module-loader thread of its own, lowered with it.)
  t.ok(found.includes(w.tid) && found.includes(w.childTid), 'the lowered thread and the one it started')
  t.notOk(found.includes(process.pid), 'not the main thread')
  const cpu = threadCpu(w.tid)
  t.ok(cpu && cpu.runMs > 0 && cpu.waitMs >= 0, `run ${cpu?.runMs.toFixed(1)} ms, waited ${cpu?.waitMs.toFixed(1)} ms`)
  // Leaving SCHED_IDLE for a lower niceness needs CAP_SYS_NICE (CI runs as root).
  const allowed = process.getuid?.() === 0
  const nice = Math.min(19, getPriority() + 5)
  t.equal(await raiseThread(shell, w.tid, 'idle', nice), allowed, allowed ? 'raised' : 'not allowed without CAP_SYS_NICE')
  if (allowed) t.same(of(w.tid), { nice, policy: 0 }, 'the normal policy at the niceness asked for')
  await lowerThreadAgain(shell, w.tid, 'idle', 19)
  t.same(of(w.tid), { nice: 19, policy: SCHED_IDLE }, 'back under SCHED_IDLE at nice 19')
  await w.stop()
  t.equal(threadCpu(w.tid), null, 'an ended thread has no CPU to read')
})

t.test('the policy shell answers each request in order, false for a thread chrt cannot set, and false once closed', { skip: linuxOnly || (!hasChrt && 'chrt (util-linux) missing') }, async (t) => {
  const { currentThreadId, PolicyShell } = await import('../../../src/common/thread-priority.js')
  const w = await lowerInWorker('idle', 0)
  const shell = new PolicyShell()
  // Back to the normal policy needs CAP_SYS_NICE; idle again is always allowed.
  const allowed = process.getuid?.() === 0
  const answers = await Promise.all([shell.set('other', w.tid), shell.set('idle', 2 ** 22 + 1), shell.set('idle', w.tid)])
  t.same(answers, [allowed, false, true], 'a thread id beyond pid_max fails; each answer is its own request’s')
  t.equal(of(w.tid).policy, SCHED_IDLE, 'the last request applied')
  t.equal(of(currentThreadId()).policy, 0, 'the calling thread is untouched')
  shell.close()
  await new Promise((resolve) => setTimeout(resolve, 200))
  t.equal(await shell.set('idle', w.tid), false, 'a closed shell sets nothing')
  await w.stop()
})

t.test('the machine and process CPU totals grow with this process busy, the machine by at least as much', { skip: linuxOnly }, async (t) => {
  const { cpuTotals } = await import('../../../src/common/thread-priority.js')
  const usage = process.cpuUsage()
  const spentMs = () => {
    const { user, system } = process.cpuUsage(usage)
    return (user + system) / 1000
  }
  const before = cpuTotals()
  // until this process has used 300 ms of CPU by getrusage, however long a busy machine makes that take
  const deadline = performance.now() + 5000
  while (spentMs() < 300 && performance.now() < deadline) for (let i = 0; i < 10_000; i++) Math.sqrt(Math.random())
  const after = cpuTotals()
  const spent = spentMs()
  const processMs = after.processMs - before.processMs
  t.ok(spent >= 300, `spun for ${Math.round(spent)} ms of CPU`)
  t.ok(Math.abs(processMs - spent) <= 30, `this process: ${processMs} ms of CPU, getrusage ${Math.round(spent)} ms (clock ticks of 10 ms)`)
  t.ok(after.machineMs - before.machineMs >= processMs - 20, `the machine: ${after.machineMs - before.machineMs} ms (clock ticks of 10 ms)`)
})
