import t from 'tap'
import { funnelOrderSuite } from './funnel-order-suite.js'

t.test('funnel metrics of each order (POST …/query/) end to end on SQLite', async (t) => {
  funnelOrderSuite(t, { env: () => ({}) })
})
