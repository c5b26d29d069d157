/**
 * A consumer behind the front (BEHIND_BYTES of durable spool unread) runs at the request thread's priority
 * for a few seconds at a time, then is lowered again. A real thread lowered as the ingestion threads are,
 * the real watch on this thread; the backlog is the watch's input.
 */
import t from 'tap'
import { getPriority } from 'node:os'
import { Worker } from 'node:worker_threads'
import pino from 'pino'
import { lowerThreadAgain } from '../../../src/common/thread-priority.js'
import { PriorityWatch } from '../../../src/ingestion/consumer/priority-watch.js'
import { BEHIND_BYTES, INTERVAL_MS, RAISED_TICKS } from '../../../src/ingestion/consumer/starvation.js'
import { hasChrt, SCHED_IDLE, SCHED_OTHER, threadScheduling } from '../../helpers/threads.js'
import { until } from '../reliability/lib.js'

t.test('a consumer behind the front runs at the request thread’s priority for a while, then is lowered again', { skip: (process.platform !== 'linux' && 'Linux only') || (!hasChrt && 'chrt (util-linux) missing') }, async (t) => {
  const worker = new Worker(
    "require('worker_threads').parentPort.postMessage(Number(require('fs').readlinkSync('/proc/thread-self').split('/').pop())); setInterval(() => {}, 1000)",
    { eval: true },
  )
  const tid = await new Promise<number>((resolve) => worker.once('message', resolve))
  await lowerThreadAgain(tid, 'idle', 19)
  const scheduling = () => threadScheduling(process.pid, tid)
  t.equal(scheduling().policy, SCHED_IDLE, 'lowered as the ingestion threads are')

  const lines: string[] = []
  const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(line) })
  let backlog = BEHIND_BYTES
  const watch = new PriorityWatch('idle', 19, logger, () => backlog)
  t.teardown(async () => {
    watch.stop()
    await worker.terminate()
  })

  if (process.getuid?.() !== 0) {
    await until('the watch to say it may not raise the threads', () => lines.some((l) => l.includes('may not raise them')), 5000, INTERVAL_MS)
    t.pass('without CAP_SYS_NICE the server says it may not raise them, and what to set')
    return
  }
  // The raise sets the policy, then the niceness: wait for both.
  const raised = () => {
    const now = scheduling()
    return now.policy === SCHED_OTHER && now.nice === getPriority()
  }
  await until("the thread to get the request thread's scheduling", raised, 5000, INTERVAL_MS / 5)
  t.pass("raised to the request thread's own scheduling")
  await until('the watch to say why', () => lines.some((l) => l.includes('the ingest consumer is behind the front')), 1000, INTERVAL_MS / 5)
  t.pass('the server says why')

  backlog = 0
  // A raise lasts RAISED_TICKS intervals; a busy machine may delay the watch's ticks.
  await until('the thread to be lowered again', () => scheduling().policy === SCHED_IDLE, 3 * RAISED_TICKS * INTERVAL_MS, INTERVAL_MS / 5)
  t.pass('lowered again at the end of the raise')
  await new Promise((resolve) => setTimeout(resolve, 5 * INTERVAL_MS))
  t.equal(scheduling().policy, SCHED_IDLE, 'caught up: it stays lowered')
})
