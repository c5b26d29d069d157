import t from 'tap'
import { clickhouseUnavailableReason, startClickHouse } from '../../helpers/clickhouse.js'
import { crashRun } from './crash.js'

const skip = clickhouseUnavailableReason()
t.test('kill -9 and consumer thread exits under /batch/ load lose no acknowledged event (ClickHouse)', { skip: skip ?? false }, async (t) => {
  const ch = await startClickHouse()
  t.teardown(() => ch.destroy())
  // FINAL: a replay after a crash may insert a row again; the ReplacingMergeTree collapses it.
  // The table exists once a consumer has migrated ClickHouse, which on a busy machine can come after the kills.
  const storedUuids = (database: string) => async () => {
    const text = await ch.query(`SELECT toString(uuid) FROM ${database}.events FINAL WHERE event = 'crash test' FORMAT TabSeparated`).catch((error: Error) => {
      if (/doesn't exist/.test(error.message)) return ''
      throw error
    })
    return text.split('\n').filter(Boolean)
  }
  await t.test('kill -9', async (t) => {
    await crashRun(t, { kills: 5, env: { CLICKHOUSE_URL: ch.url, CLICKHOUSE_DATABASE: 'crash' }, storedUuids: storedUuids('crash') })
  })
  await t.test('the consumer thread ending', async (t) => {
    const env = { CLICKHOUSE_URL: ch.url, CLICKHOUSE_DATABASE: 'thread_exits' }
    await crashRun(t, { kills: 3, env, storedUuids: storedUuids('thread_exits'), kill: 'consumer thread' })
  })
})
