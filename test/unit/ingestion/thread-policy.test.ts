import t from 'tap'
import { loadConfig } from '../../../src/config/index.js'
import { threadPolicy } from '../../../src/ingestion/index.js'

t.test('INGEST_THREAD_POLICY=auto is idle with SQLite and the normal policy with ClickHouse; a set policy is kept', async (t) => {
  const clickhouse = { CLICKHOUSE_URL: 'http://127.0.0.1:8123' }
  t.equal(threadPolicy(loadConfig({})), 'idle')
  t.equal(threadPolicy(loadConfig(clickhouse)), 'other')
  t.equal(threadPolicy(loadConfig({ INGEST_THREAD_POLICY: 'other' })), 'other')
  t.equal(threadPolicy(loadConfig({ ...clickhouse, INGEST_THREAD_POLICY: 'idle' })), 'idle')
  t.throws(() => loadConfig({ INGEST_THREAD_POLICY: 'fifo' }), /INGEST_THREAD_POLICY/)
})
