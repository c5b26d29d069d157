import t from 'tap'
import { clickhouseUnavailableReason, startClickHouse, type TestClickHouse } from '../../helpers/clickhouse.js'
import { lookupsSuite } from './lookups-suite.js'

t.test('event lookups, values and group reads on ClickHouse', { skip: clickhouseUnavailableReason() ?? false }, async (t) => {
  let ch: TestClickHouse
  t.before(async () => {
    ch = await startClickHouse()
  })
  t.teardown(() => ch?.destroy())
  lookupsSuite(t, { name: 'clickhouse', env: () => ({ CLICKHOUSE_URL: ch.url, CLICKHOUSE_DATABASE: 'skylark_test' }) })
})
