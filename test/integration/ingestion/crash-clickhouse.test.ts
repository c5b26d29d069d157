import t from 'tap'
import { clickhouseUnavailableReason, startClickHouse } from '../../helpers/clickhouse.js'
import { clickhouseCrashUuids, crashRun } from './crash.js'

const skip = clickhouseUnavailableReason()
t.test('kill -9 and consumer thread exits under /batch/ load lose no acknowledged event (ClickHouse)', { skip: skip ?? false }, async (t) => {
  const ch = await startClickHouse()
  t.teardown(() => ch.destroy())
  const storedUuids = (database: string) => clickhouseCrashUuids(ch.query, database)
  await t.test('kill -9', async (t) => {
    await crashRun(t, { kills: 5, env: { CLICKHOUSE_URL: ch.url, CLICKHOUSE_DATABASE: 'crash' }, storedUuids: storedUuids('crash') })
  })
  await t.test('the consumer thread ending', async (t) => {
    const env = { CLICKHOUSE_URL: ch.url, CLICKHOUSE_DATABASE: 'thread_exits' }
    await crashRun(t, { kills: 3, env, storedUuids: storedUuids('thread_exits'), kill: 'consumer thread' })
  })
})
