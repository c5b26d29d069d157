import t from 'tap'
import { clickhouseUnavailableReason, startClickHouse, type TestClickHouse } from '../../helpers/clickhouse.js'
import { usageDashboardSuite } from './usage-dashboard.js'

const skip = clickhouseUnavailableReason()
t.test('on ClickHouse', { skip: skip ?? false }, async (t) => {
  let ch: TestClickHouse
  t.before(async () => {
    ch = await startClickHouse()
  })
  t.teardown(() => ch?.destroy())
  usageDashboardSuite(t, () => ({ CLICKHOUSE_URL: ch.url, CLICKHOUSE_DATABASE: 'dashboards' }))
})
