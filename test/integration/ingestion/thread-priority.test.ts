import { getPriority } from 'node:os'
import t from 'tap'
import { startServer } from '../../helpers/server.js'
import { nicenessByThread } from '../../helpers/threads.js'

t.test('the ingestion threads run at INGEST_THREAD_NICE and the request thread keeps its priority', { skip: process.platform !== 'linux' && 'Linux only' }, async (t) => {
  for (const [env, lowered] of [[{}, true], [{ INGEST_THREAD_NICE: '0' }, false]] as const) {
    const server = await startServer({ env })
    t.teardown(async () => {
      await server.stop()
      server.cleanup()
    })
    // The insert thread starts with the first insert: wait until the event is stored.
    const res = await server.request('POST', '/capture/', { body: { api_key: server.boot.project_api_key, event: 'e', distinct_id: 'd' } })
    t.equal(res.status, 200)
    const stored = async () => (await server.api('GET', `/api/projects/${server.boot.project_id}/events/`)).body.results?.length > 0
    for (let i = 0; i < 100 && !(await stored()); i++) await new Promise((r) => setTimeout(r, 50))
    const pid = server.proc.pid!
    const niceness = nicenessByThread(pid)
    const main = niceness.get(pid)!
    const atLowered = [...niceness.values()].filter((n) => n === 19).length
    t.equal(main, getPriority(), `${JSON.stringify(env)}: the request thread keeps the niceness it started with`)
    if (lowered) t.ok(atLowered >= 2, `the consumer thread and the insert thread it started (${atLowered} lowered)`)
    else t.equal(atLowered, 0, 'INGEST_THREAD_NICE=0 leaves every thread as it was')
  }
})
