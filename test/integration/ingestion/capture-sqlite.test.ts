import t from 'tap'
import { ingestionSuite } from './suite.js'

t.test('capture and batch on the embedded SQLite store', async (t) => {
  ingestionSuite(t, { name: 'sqlite', env: () => ({}) })
})
