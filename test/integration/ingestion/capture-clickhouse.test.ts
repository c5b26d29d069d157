import t from 'tap'
import { clickhouseUnavailableReason, startClickHouse, type TestClickHouse } from '../../helpers/clickhouse.js'
import { ingestionSuite } from './suite.js'

const skip = clickhouseUnavailableReason()
t.test('capture and batch on ClickHouse', { skip: skip ?? false }, async (t) => {
  let ch: TestClickHouse
  t.before(async () => {
    ch = await startClickHouse()
  })
  t.teardown(() => ch?.destroy())
  ingestionSuite(t, { name: 'clickhouse', env: () => ({ CLICKHOUSE_URL: ch.url, CLICKHOUSE_DATABASE: 'skylark_test' }) })
})
