import t from 'tap'
import { querySuite } from './query-suite.js'

t.test('new-engine experiment results (POST …/query/) end to end on SQLite', async (t) => {
  querySuite(t, { env: () => ({}) })
})
