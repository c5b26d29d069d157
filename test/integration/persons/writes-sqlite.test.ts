import t from 'tap'
import { deletionCrashSuite, personWritesSuite } from './writes-suite.js'

t.test('persons API writes on SQLite', async (t) => {
  personWritesSuite(t, { name: 'sqlite', env: () => ({}) })
  deletionCrashSuite(t, { name: 'sqlite', env: () => ({}) })
})
