import t from 'tap'
import { lookupsSuite } from './lookups-suite.js'

t.test('event lookups, values and group reads on the embedded SQLite store', async (t) => {
  lookupsSuite(t, { name: 'sqlite', env: () => ({}) })
})
