import t from 'tap'
import { resultsSuite } from './suite.js'

t.test('experiment results end to end on SQLite', async (t) => {
  resultsSuite(t, { env: () => ({}) })
})
