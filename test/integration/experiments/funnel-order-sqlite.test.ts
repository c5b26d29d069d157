import t from 'tap'
import { funnelOrderSuite } from './funnel-order-suite.js'

t.test('unordered and strict funnel metrics (POST …/query/) end to end on SQLite', async (t) => {
  funnelOrderSuite(t, { env: () => ({}) })
})
