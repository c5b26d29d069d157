import { Worker } from 'node:worker_threads'
import t from 'tap'
import { threadNiceness } from '../../helpers/threads.js'

const niceOf = (tid: number) => threadNiceness(process.pid, tid)

t.test('lowerThreadPriority lowers only the calling thread, and threads it starts inherit it', { skip: process.platform !== 'linux' && 'Linux only' }, async (t) => {
  const moduleUrl = new URL('../../../src/common/thread-priority.ts', import.meta.url).href
  // The worker lowers itself, then starts a thread of its own; both report their thread ids.
  const source = `
    import { readlinkSync } from 'node:fs'
    import { parentPort, Worker } from 'node:worker_threads'
    const { lowerThreadPriority } = await import(${JSON.stringify(moduleUrl)})
    const tid = () => Number(readlinkSync('/proc/thread-self').split('/').pop())
    const ok = lowerThreadPriority(19)
    const child = new Worker("import { readlinkSync } from 'node:fs'; import { parentPort } from 'node:worker_threads'; parentPort.postMessage(Number(readlinkSync('/proc/thread-self').split('/').pop())); setTimeout(() => {}, 2000)", { eval: true, type: 'module' })
    child.once('message', (childTid) => parentPort.postMessage({ ok, tid: tid(), childTid }))
    setTimeout(() => child.terminate(), 2000)
  `
  const mainNice = niceOf(process.pid)
  const worker = new Worker(new URL(`data:text/javascript,${encodeURIComponent(source)}`), { execArgv: process.execArgv })
  const reply = await new Promise<{ ok: boolean; tid: number; childTid: number }>((resolve, reject) => {
    worker.once('message', resolve)
    worker.once('error', reject)
  })
  t.equal(reply.ok, true)
  t.equal(niceOf(reply.tid), 19, 'the calling thread')
  t.equal(niceOf(reply.childTid), 19, 'a thread it started afterwards')
  t.equal(niceOf(process.pid), mainNice, 'the main thread is untouched')
  await worker.terminate()
})
