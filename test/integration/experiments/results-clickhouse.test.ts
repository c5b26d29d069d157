import t from 'tap'
import { clickhouseUnavailableReason, startClickHouse, type TestClickHouse } from '../../helpers/clickhouse.js'
import { resultsSuite } from './suite.js'

const skip = clickhouseUnavailableReason()
t.test('experiment results end to end on ClickHouse', { skip: skip ?? false }, async (t) => {
  let ch: TestClickHouse
  t.before(async () => {
    ch = await startClickHouse()
  })
  t.teardown(() => ch?.destroy())
  resultsSuite(t, { env: () => ({ CLICKHOUSE_URL: ch.url, CLICKHOUSE_DATABASE: 'skylark_exp' }) })
})
