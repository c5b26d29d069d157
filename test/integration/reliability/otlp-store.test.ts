/**
 * The OTLP routes when their store fails: the write of /i/v1/logs and /i/v1/metrics happens on the store's
 * thread, and a write that fails there is a 503 with Retry-After (the exporter sends again), stores nothing of
 * that request, and leaves the store working for the next one, with no restart.
 */
import t from 'tap'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { startServer } from '../../helpers/server.js'

const nowNs = () => `${BigInt(Date.now()) * 1_000_000n}`

const signals = [
  {
    path: '/i/v1/logs',
    table: 'logs',
    what: 'logs',
    body: () => ({ resourceLogs: [{ resource: { attributes: [] }, scopeLogs: [{ scope: {}, logRecords: [{ timeUnixNano: nowNs(), body: { stringValue: 'hello' } }] }] }] }),
  },
  {
    path: '/i/v1/metrics',
    table: 'metrics',
    what: 'metrics',
    body: () => ({ resourceMetrics: [{ resource: { attributes: [] }, scopeMetrics: [{ scope: {}, metrics: [{ name: 'queue.depth', gauge: { dataPoints: [{ timeUnixNano: nowNs(), asDouble: 3 }] } }] }] }] }),
  },
]

t.test('a write the OTLP store refuses is a 503; the next request is stored without a restart', async (t) => {
  const server = await startServer()
  t.teardown(async () => {
    await server.stop()
    server.cleanup()
  })
  for (const signal of signals) {
    t.test(signal.path, async (t) => {
      const post = () => server.request('POST', `${signal.path}?token=${server.boot.project_api_key}`, { body: signal.body() })
      t.equal((await post()).status, 200, 'stored while the store works')

      const db = new Database(join(server.dataDir, `${signal.table}.db`))
      t.teardown(() => db.close())
      db.exec(`CREATE TRIGGER refuse BEFORE INSERT ON ${signal.table} BEGIN SELECT RAISE(ABORT, 'refused by the test'); END`)
      const refused = await post()
      t.equal(refused.status, 503)
      t.match(refused.body, { type: 'server_error', code: 'service_unavailable', detail: `Unable to store ${signal.what}: refused by the test. Please try again.` })
      t.equal(refused.headers.get('retry-after'), '1')

      db.exec('DROP TRIGGER refuse')
      t.equal((await post()).status, 200, 'stored again')
      t.equal(db.prepare(`SELECT COUNT(*) FROM ${signal.table}`).pluck().get(), 2, 'the two acknowledged, nothing of the refused one')
    })
  }
})
