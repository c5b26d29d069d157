import { getPriority } from 'node:os'
import t from 'tap'
import { serverFor } from '../../helpers/server.js'
import { childCommands, hasChrt, SCHED_IDLE, schedulingByThread } from '../../helpers/threads.js'

t.test('the ingestion threads run under INGEST_THREAD_POLICY and the request thread keeps its priority', { skip: process.platform !== 'linux' && 'Linux only' }, async (t) => {
  const cases = [
    // The priority watch's chrt shell is the server's only child, and only SCHED_IDLE needs it.
    { env: {}, lowered: hasChrt ? 'policy' : 'nice', children: ['sh'] },
    { env: { INGEST_THREAD_POLICY: 'other' }, lowered: 'nice', children: [] },
    { env: { INGEST_THREAD_POLICY: 'other', INGEST_THREAD_NICE: '0' }, lowered: 'none', children: [] },
  ] as const
  for (const { env, lowered, children } of cases) {
    const server = await serverFor(t, { env })
    // The insert thread is started by the consumer thread: wait until the event is stored.
    const res = await server.request('POST', '/capture/', { body: { api_key: server.boot.project_api_key, event: 'e', distinct_id: 'd' } })
    t.equal(res.status, 200)
    const stored = async () => (await server.api('GET', `/api/projects/${server.boot.project_id}/events/`)).body.results?.length > 0
    for (let i = 0; i < 100 && !(await stored()); i++) await new Promise((r) => setTimeout(r, 50))
    const pid = server.proc.pid!
    // At least the consumer thread and the insert thread it started. On a busy machine the starvation watch
    // (priority-watch.ts) may have raised them (5 s at a time), so the count is read until it holds or 15 s pass.
    const lowest = (threads: ReturnType<typeof schedulingByThread>) => ({
      idle: [...threads.values()].filter((s) => s.policy === SCHED_IDLE).length,
      niced: [...threads.values()].filter((s) => s.nice === 19).length,
    })
    const holds = ({ idle, niced }: { idle: number; niced: number }) =>
      lowered === 'policy' ? idle >= 2 : lowered === 'nice' ? niced >= 2 && idle === 0 : niced === 0 && idle === 0
    let threads = schedulingByThread(pid)
    for (let i = 0; i < 750 && !holds(lowest(threads)); i++) {
      await new Promise((r) => setTimeout(r, 20))
      threads = schedulingByThread(pid)
    }
    const { idle, niced } = lowest(threads)
    const label = JSON.stringify(env)
    t.same(threads.get(pid)!, { nice: getPriority(), policy: 0 }, `${label}: the request thread keeps the scheduling it started with`)
    if (lowered === 'policy') t.ok(idle >= 2, `${label}: ${idle} threads under SCHED_IDLE`)
    if (lowered === 'nice') t.ok(niced >= 2 && idle === 0, `${label}: ${niced} threads at nice 19, none idle`)
    if (lowered === 'none') t.ok(niced === 0 && idle === 0, `${label}: every thread as it was`)
    t.same(childCommands(pid), children, `${label}: child processes`)
  }
})
