import t from 'tap'
import { clickhouseUnavailableReason, startClickHouse } from '../../helpers/clickhouse.js'
import { queryCacheSuite } from './query-cache-suite.js'

const skip = clickhouseUnavailableReason()
t.test('the query cache and its refresh modes on ClickHouse', { skip: skip ?? false }, async (t) => {
  const ch = await startClickHouse()
  t.teardown(() => ch.destroy())
  await queryCacheSuite(t, { env: () => ({ CLICKHOUSE_URL: ch.url, CLICKHOUSE_DATABASE: 'skylark_query_cache' }) })
})
