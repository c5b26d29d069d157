import t from 'tap'
import { queryCacheSuite } from './query-cache-suite.js'

t.test('the query cache and its refresh modes on SQLite', async (t) => {
  await queryCacheSuite(t, { env: () => ({}) })
})
