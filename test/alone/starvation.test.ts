/**
 * Other processes keeping both cores busy: the ingestion threads, under SCHED_IDLE by default, would get
 * almost no CPU (2,000 events took 69 s to be stored here), so the server raises them while they are
 * starved and lowers them again afterwards.
 */
import t from 'tap'
import { spawn, type ChildProcess } from 'node:child_process'
import { serverFor } from '../helpers/server.js'
import { hasChrt, SCHED_IDLE, SCHED_OTHER, schedulingByThread } from '../helpers/threads.js'
import { INTERVAL_MS } from '../../src/ingestion/consumer/starvation.js'
import { sleep, until } from '../integration/reliability/lib.js'

const EVENTS = 2000

t.test('events are stored within seconds while other processes keep every core busy', { skip: (process.platform !== 'linux' && 'Linux only') || (!hasChrt && 'chrt (util-linux) missing') }, async (t) => {
  const server = await serverFor(t)
  const hogs: ChildProcess[] = []
  // Registered after the server's teardown, so it runs first: the server stops with the cores free again.
  t.teardown(() => {
    for (const hog of hogs) hog.kill('SIGKILL')
  })
  const pid = server.proc.pid!
  const idleTids = () => [...schedulingByThread(pid)].filter(([, s]) => s.policy === SCHED_IDLE).map(([tid]) => tid)
  const stored = async () => Number(/skylark_consumer_total\{kind="stored"\} (\d+)/.exec((await server.request('GET', '/metrics')).text)?.[1] ?? 0)
  const batch = (event: string) => Array.from({ length: 100 }, (_, i) => ({ event, properties: { distinct_id: `u${i % 10}` } }))
  const root = process.getuid?.() === 0

  // The insert thread starts with the first insert.
  t.equal((await server.request('POST', '/capture/', { body: { api_key: server.boot.project_api_key, event: 'first', distinct_id: 'd' } })).status, 200)
  await until('the first event to be stored', async () => (await stored()) === 1)
  // A new consumer thread is raised once while its first events wait (starvation.ts, WARM_EVENTS): let that
  // happen before the load from elsewhere, so that what raises the threads below is their starvation. The
  // watch samples every INTERVAL_MS, so a single event stored at once may pass unseen: send more until it acts.
  let sent = 1
  if (root) {
    await until('the warm-up raise', async () => {
      if (idleTids().length < 2) return true
      const res = await server.request('POST', '/batch/', { body: { api_key: server.boot.project_api_key, batch: batch('warming') } })
      if (res.status === 200) sent += 100
      return idleTids().length < 2
    }, 10_000, INTERVAL_MS)
  }
  // On a busy machine the watch may have raised them already: wait for a moment they are lowered.
  await until('the ingestion threads to be lowered', () => idleTids().length >= 2, 15_000, INTERVAL_MS / 5).catch(() => {})
  const lowered = idleTids()
  t.ok(lowered.length >= 2, `${lowered.length} threads under SCHED_IDLE: the consumer, the insert thread and what they started`)
  await until('the warm-up events to be stored', async () => (await stored()) === sent, 10_000, 100)

  for (let i = 0; i < 2; i++) hogs.push(spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }))
  await sleep(500)
  const started = Date.now()
  for (let r = 0; r < EVENTS / 100; r++) {
    t.equal((await server.request('POST', '/batch/', { body: { api_key: server.boot.project_api_key, batch: batch('under load') } })).status, 200)
  }
  await until(`${EVENTS} events to be stored`, async () => (await stored()) === sent + EVENTS, 30_000, 100)
  const seconds = (Date.now() - started) / 1000
  t.ok(seconds < 20, `stored ${seconds.toFixed(1)} s after the first was sent`)

  const said = (text: string) => server.stdout.some((line) => line.includes(text))
  if (root) t.ok(said('other processes were starving the ingestion threads'), 'the server says it raised them')
  else t.ok(said('this process may not raise them'), 'without CAP_SYS_NICE the server says it may not raise them, and what to set')

  for (const hog of hogs) hog.kill('SIGKILL')
  // The rest of a full test run may still starve them, and then they are raised again STARVED_TICKS intervals
  // after each lowering, which lowers them one at a time: each thread is looked for on its own, often enough
  // to see it lowered in between (one that ended is not raised either).
  const notSeenLowered = new Set(lowered)
  await until(
    'each ingestion thread to be lowered again',
    () => {
      const now = schedulingByThread(pid)
      for (const tid of notSeenLowered) if (now.get(tid)?.policy !== SCHED_OTHER) notSeenLowered.delete(tid)
      return notSeenLowered.size === 0
    },
    15_000,
    INTERVAL_MS / 5,
  )
  t.pass('each back under SCHED_IDLE once the load from elsewhere is gone')
})
