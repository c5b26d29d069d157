import t from 'tap'
import { hogqlQuerySuite } from './hogql-query-suite.js'

t.test('HogQL queries on the embedded SQLite store', async (t) => {
  hogqlQuerySuite(t, { name: 'sqlite', env: () => ({}) })
})
