import t from 'tap'
import { SpikeDetector } from '../../../src/ingestion/spike.js'

t.test('SpikeDetector', async (t) => {
  t.test('lets a burst through, then refills at the sustained rate', async (t) => {
    const d = new SpikeDetector({ burst: 3, ratePerSec: 2 })
    const at0 = [1, 2, 3, 4, 5].map(() => d.allow(7, 0))
    t.same(at0, [true, true, true, false, false])
    t.equal(d.allow(7, 499), false, 'less than one token refilled after 0.5 s')
    t.equal(d.allow(7, 600), true, 'one token after 0.6 s at 2/s')
    t.equal(d.allow(8, 600), true, 'other keys have their own bucket')
  })

  t.test('forgets idle keys when the map is full', async (t) => {
    const d = new SpikeDetector({ burst: 1, ratePerSec: 1000, maxKeys: 10 })
    for (let k = 0; k < 10; k++) d.allow(k, 0)
    d.allow(99, 10_000)
    t.ok(d.size <= 10)
  })
})
