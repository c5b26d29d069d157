import t from 'tap'
import { clickhouseUnavailableReason, startClickHouse, type TestClickHouse } from '../../helpers/clickhouse.js'
import { querySuite } from './query-suite.js'

const skip = clickhouseUnavailableReason()
t.test('new-engine experiment results (POST …/query/) end to end on ClickHouse', { skip: skip ?? false }, async (t) => {
  let ch: TestClickHouse
  t.before(async () => {
    ch = await startClickHouse()
  })
  t.teardown(() => ch?.destroy())
  querySuite(t, { env: () => ({ CLICKHOUSE_URL: ch.url, CLICKHOUSE_DATABASE: 'skylark_query' }) })
})
