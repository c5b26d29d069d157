/**
 * An idle server leaves the machine alone: once its events are stored, the request thread wakes for the event
 * loop's delay samples (ten a second, metrics.ts) and uWS's timeout sweep, and for nothing else that repeats.
 * With prom-client's default 10 ms samples it woke ≈100 times a second (bench/micro/idle.mjs measures the CPU
 * this costs). The priority watch's pause is catch-up.test.ts's: its 100 ms ticks fall in the same wakeups as
 * the samples, so this count does not see them.
 */
import { readFileSync } from 'node:fs'
import t from 'tap'
import { INTERVAL_MS, RAISED_TICKS } from '../../../src/ingestion/consumer/starvation.js'
import { serverFor } from '../../helpers/server.js'
import { until } from '../../helpers/wait.js'

/**
 * Windows in a row, of which the quietest is counted: what repeats wakes the thread in each, where a one-off (V8's
 * memory reducer collecting after the requests, a CI neighbour's load) took two runs of one 3 s window to 16.0 and 16.3.
 */
const WINDOWS = 3
const WINDOW_MS = 2000
/** Ten delay samples and a quarter of a uWS sweep a second, with room for a few wakeups more. */
const MOST_PER_SECOND = 15

/** Times a thread of a process has slept and been woken (Linux's voluntary context switches). */
function wakeups(pid: number, tid: number): number {
  const status = readFileSync(`/proc/${pid}/task/${tid}/status`, 'utf8')
  return Number(/^voluntary_ctxt_switches:\s+(\d+)/m.exec(status)![1])
}

t.test('an idle server wakes its request thread only to sample the event loop', { skip: process.platform !== 'linux' && 'Linux only' }, async (t) => {
  const server = await serverFor(t)
  const res = await server.request('POST', '/capture/', { body: { api_key: server.boot.project_api_key, event: 'e', distinct_id: 'd' } })
  t.equal(res.status, 200)
  // Stored, then the new consumer's warm-up raise ends (RAISED_TICKS intervals), the watch's next tick finds
  // nothing waiting, and the consumer's stats stop changing.
  await until('the event to be stored', async () => (await server.api('GET', `/api/projects/${server.boot.project_id}/events/`)).body.results?.length > 0)
  await new Promise((resolve) => setTimeout(resolve, RAISED_TICKS * INTERVAL_MS + 1500))

  const pid = server.proc.pid!
  const rates: number[] = []
  for (let w = 0; w < WINDOWS; w++) {
    const before = wakeups(pid, pid)
    await new Promise((resolve) => setTimeout(resolve, WINDOW_MS))
    rates.push((wakeups(pid, pid) - before) / (WINDOW_MS / 1000))
  }
  const perSecond = Math.min(...rates)
  t.ok(perSecond <= MOST_PER_SECOND, `${perSecond.toFixed(1)} wakeups a second in the quietest of ${rates.map((r) => r.toFixed(1)).join(', ')} (at most ${MOST_PER_SECOND})`)
})
