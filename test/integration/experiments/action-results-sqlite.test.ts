import t from 'tap'
import { actionResultsSuite } from './action-suite.js'

t.test('experiment results by action on SQLite', async (t) => {
  actionResultsSuite(t, () => ({}))
})
