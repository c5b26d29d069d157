import t from 'tap'
import { clickhouseUnavailableReason, startClickHouse } from '../../helpers/clickhouse.js'
import { crashRun } from './crash.js'

const skip = clickhouseUnavailableReason()
t.test('kill -9 under /batch/ load loses no acknowledged event (ClickHouse)', { skip: skip ?? false }, async (t) => {
  const ch = await startClickHouse()
  t.teardown(() => ch.destroy())
  await crashRun(t, {
    kills: 5,
    env: { CLICKHOUSE_URL: ch.url, CLICKHOUSE_DATABASE: 'crash' },
    // FINAL: a replay after a crash may insert a row again; the ReplacingMergeTree collapses it.
    // The table exists once a consumer has migrated ClickHouse, which on a busy machine can come after the kills.
    storedUuids: async () => {
      const text = await ch.query("SELECT toString(uuid) FROM crash.events FINAL WHERE event = 'crash test' FORMAT TabSeparated").catch((error: Error) => {
        if (/doesn't exist/.test(error.message)) return ''
        throw error
      })
      return text.split('\n').filter(Boolean)
    },
  })
})
