import t from 'tap'
import { clickhouseUnavailableReason, startClickHouse, type TestClickHouse } from '../../helpers/clickhouse.js'
import { hogqlQuerySuite } from './hogql-query-suite.js'

t.test('HogQL queries on ClickHouse', { skip: clickhouseUnavailableReason() ?? false }, async (t) => {
  let ch: TestClickHouse
  t.before(async () => {
    ch = await startClickHouse()
  })
  t.teardown(() => ch?.destroy())
  hogqlQuerySuite(t, { name: 'clickhouse', env: () => ({ CLICKHOUSE_URL: ch.url, CLICKHOUSE_DATABASE: 'skylark_test' }) })
})
