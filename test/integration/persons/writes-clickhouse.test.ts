import t from 'tap'
import { clickhouseUnavailableReason, startClickHouse, type TestClickHouse } from '../../helpers/clickhouse.js'
import { deletionCrashSuite, personWritesSuite } from './writes-suite.js'

const skip = clickhouseUnavailableReason()
t.test('persons API writes on ClickHouse', { skip: skip ?? false }, async (t) => {
  let ch: TestClickHouse
  t.before(async () => {
    ch = await startClickHouse()
  })
  t.teardown(() => ch?.destroy())
  const setup = { name: 'clickhouse', env: () => ({ CLICKHOUSE_URL: ch.url, CLICKHOUSE_DATABASE: 'skylark_test' }) }
  personWritesSuite(t, setup)
  deletionCrashSuite(t, setup)
})
