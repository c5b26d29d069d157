import t from 'tap'
import { personSplitSuite, splitCrashSuite } from './split-suite.js'

t.test('persons API split on SQLite', async (t) => {
  personSplitSuite(t, { name: 'sqlite', env: () => ({}) })
  splitCrashSuite(t, { name: 'sqlite', env: () => ({}) })
})
