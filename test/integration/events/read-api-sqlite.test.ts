import t from 'tap'
import { eventsReadSuite } from './suite.js'

t.test('the events list on the embedded SQLite store', async (t) => {
  eventsReadSuite(t, { name: 'sqlite', env: () => ({}) })
})
