import t from 'tap'
import { clickhouseUnavailableReason, startClickHouse, type TestClickHouse } from '../../helpers/clickhouse.js'
import { eventsReadSuite } from './suite.js'

t.test('the events list on ClickHouse', { skip: clickhouseUnavailableReason() ?? false }, async (t) => {
  let ch: TestClickHouse
  t.before(async () => {
    ch = await startClickHouse()
  })
  t.teardown(() => ch?.destroy())
  eventsReadSuite(t, { name: 'clickhouse', env: () => ({ CLICKHOUSE_URL: ch.url, CLICKHOUSE_DATABASE: 'skylark_test' }) })
})
