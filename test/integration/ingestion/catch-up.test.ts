/**
 * The ingestion threads run at the request thread's priority for a while when the consumer is behind the
 * front (BEHIND_BYTES of durable spool unread) and when a new consumer's first events wait (its code cold),
 * then are lowered again. A real thread lowered as the ingestion threads are, the real watch on this
 * thread; the consumer's report of its work is the watch's input.
 */
import t, { type Test } from 'tap'
import { spawnSync } from 'node:child_process'
import { getPriority } from 'node:os'
import pino from 'pino'
import { PriorityWatch } from '../../../src/ingestion/consumer/priority-watch.js'
import { BEHIND_BYTES, INTERVAL_MS, RAISED_TICKS, WARM_EVENTS, type ConsumerWork } from '../../../src/ingestion/consumer/starvation.js'
import { hasChrt, hasSetpriv, idleThread, SCHED_IDLE, SCHED_OTHER, threadScheduling } from '../../helpers/threads.js'
import { until } from '../reliability/lib.js'

const skip = (process.platform !== 'linux' && 'Linux only') || (!hasChrt && 'chrt (util-linux) missing')

/** A thread lowered as the ingestion threads are, watched with `work` as the consumer's report; its scheduling and the watch's log. */
async function watchedThread(t: Test, work: () => ConsumerWork) {
  const { worker, tid } = await idleThread()
  const scheduling = () => threadScheduling(process.pid, tid)
  t.equal(scheduling().policy, SCHED_IDLE, 'lowered as the ingestion threads are')
  const lines: string[] = []
  const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(line) })
  const watch = new PriorityWatch('idle', 19, logger, work)
  t.teardown(async () => {
    watch.stop()
    await worker.terminate()
  })
  // The raise sets the policy, then the niceness: both must be the request thread's.
  const raised = () => {
    const now = scheduling()
    return now.policy === SCHED_OTHER && now.nice === getPriority()
  }
  return { watch, scheduling, lines, raised }
}

t.test('a consumer behind the front runs at the request thread’s priority for a while, then is lowered again', { skip }, async (t) => {
  let backlog = BEHIND_BYTES
  const { scheduling, lines, raised } = await watchedThread(t, () => ({ backlogBytes: backlog, stored: WARM_EVENTS, waiting: true }))

  if (process.getuid?.() !== 0) {
    await until('the watch to say it may not raise the threads', () => lines.some((l) => l.includes('may not raise them')), 5000, INTERVAL_MS)
    t.pass('without CAP_SYS_NICE the server says it may not raise them, and what to set')
    return
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

t.test(`a new consumer's first ${WARM_EVENTS} events are stored at the request thread’s priority, then it is lowered for good`, { skip }, async (t) => {
  let stored = 0
  let waiting = false
  const { watch, scheduling, lines, raised } = await watchedThread(t, () => ({ backlogBytes: 0, stored, waiting }))
  await new Promise((resolve) => setTimeout(resolve, 3 * INTERVAL_MS))
  t.equal(scheduling().policy, SCHED_IDLE, 'no events yet: left lowered')

  // With nothing waiting the watch stopped ticking: it looks again when the spool makes events durable.
  waiting = true
  await new Promise((resolve) => setTimeout(resolve, 3 * INTERVAL_MS))
  t.equal(scheduling().policy, SCHED_IDLE, 'an idle watch does not tick')
  watch.wake()
  if (process.getuid?.() !== 0) {
    await new Promise((resolve) => setTimeout(resolve, 3 * INTERVAL_MS))
    t.notOk(lines.some((l) => l.includes('may not raise them')), 'without CAP_SYS_NICE a warm-up is skipped without a warning')
    return
  }
  await until("the thread to get the request thread's scheduling", raised, 5000, INTERVAL_MS / 5)
  t.pass('raised when the first events wait')
  stored = WARM_EVENTS
  // Lowered within a few intervals, long before a raise's RAISED_TICKS would end it.
  await until('the thread to be lowered', () => scheduling().policy === SCHED_IDLE, (RAISED_TICKS * INTERVAL_MS) / 2, INTERVAL_MS / 5)
  t.pass('lowered once it has stored them')
  await new Promise((resolve) => setTimeout(resolve, 5 * INTERVAL_MS))
  // On a loaded machine other processes may starve the lowered thread, and the starvation rule raises it (logged as
  // such; it failed one CI run beside other test files). That rule has its own test (test/alone/starvation.test.ts).
  const starved = lines.filter((l) => l.includes('other processes were starving'))
  if (starved.length === 0) t.equal(scheduling().policy, SCHED_IDLE, 'events still waiting do not raise it again')
  else t.comment('the machine starved the lowered thread: whether the warm-up raised it again is not told apart here')
  t.equal(lines.length - starved.length, 0, 'a warm-up is not logged: every start has one')
})

t.test('without CAP_SYS_NICE the warm-up is skipped without a word, and a backlog is still reported at once', { skip: skip || (!hasSetpriv && 'setpriv (util-linux) missing') }, async (t) => {
  const script = new URL('./watch-without-nice.ts', import.meta.url).pathname
  const node = [process.execPath, ...process.execArgv, script]
  // As root, the same process less CAP_SYS_NICE; any other user lacks it already.
  const command = process.getuid?.() === 0 ? ['setpriv', '--inh-caps=-sys_nice', '--bounding-set=-sys_nice', ...node] : node
  const child = spawnSync(command[0], command.slice(1), { encoding: 'utf8', timeout: 30_000 })
  t.equal(child.status, 0, child.stderr)
  const out = child.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l) as { at: number; line?: string; behind?: boolean })
  const behindAt = out.find((o) => o.behind)?.at ?? NaN
  const logged = out.filter((o) => o.line !== undefined)
  t.ok(logged.every((o) => o.at > behindAt), 'nothing logged while the first events waited: the warm-up was skipped')
  const warned = logged.find((o) => o.line!.includes('may not raise them'))
  t.ok(warned, 'behind, the watch says it may not raise the threads, and what to set')
  // A guard left "raised" by the refused warm-up would look again only after RAISED_TICKS intervals (5 s).
  t.ok(warned !== undefined && warned.at - behindAt < 1000, `said ${Math.round((warned?.at ?? NaN) - behindAt)} ms after the backlog appeared`)
})
