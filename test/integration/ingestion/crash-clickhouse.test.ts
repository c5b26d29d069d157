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
    storedUuids: async () =>
      (await ch.query("SELECT toString(uuid) FROM crash.events FINAL WHERE event = 'crash test' FORMAT TabSeparated"))
        .split('\n')
        .filter(Boolean),
  })
})
