import t from 'tap'
import { clickhouseUnavailableReason, startClickHouse, type TestClickHouse } from '../../helpers/clickhouse.js'
import { funnelOrderSuite } from './funnel-order-suite.js'

const skip = clickhouseUnavailableReason()
t.test('funnel metrics of each order (POST …/query/) end to end on ClickHouse', { skip: skip ?? false }, async (t) => {
  let ch: TestClickHouse
  t.before(async () => {
    ch = await startClickHouse()
  })
  t.teardown(() => ch?.destroy())
  funnelOrderSuite(t, { env: () => ({ CLICKHOUSE_URL: ch.url, CLICKHOUSE_DATABASE: 'skylark_funnel_order' }) })
})
