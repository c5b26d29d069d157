import t from 'tap'
import { activatedExposures } from '../../../src/storage/events/experiment-activation.js'

const flags = new Map([
  ['a', { variant: 'control', first: 100, breakdown: ['Chrome'] }],
  ['b', { variant: '$multiple', first: 100, breakdown: ['Chrome'] }],
  ['c', { variant: 'test', first: 100, breakdown: ['Chrome'] }],
])

t.test("an activated entity keeps its exposure events' variant, and takes its first activation's time and breakdown", async (t) => {
  const out = activatedExposures(
    flags,
    [
      ['a', 300, ['Safari']],
      ['a', 200, ['Firefox']],
      ['b', 150, ['Edge']],
      // Two at one millisecond: the smaller texts, as for exposures.
      ['c', 400, ['Zeta']],
      ['c', 400, ['Alpha']],
    ],
    null,
  )
  t.same([...out], [
    ['a', { variant: 'control', first: 200, breakdown: ['Firefox'] }],
    ['b', { variant: '$multiple', first: 150, breakdown: ['Edge'] }],
    ['c', { variant: 'test', first: 400, breakdown: ['Alpha'] }],
  ])
})

t.test('an entity never activated is not exposed, and maturity reads the activation time', async (t) => {
  const out = activatedExposures(flags, [['a', 200, []], ['c', 500, []], ['z', 100, []]], 300)
  t.same([...out.keys()], ['a'], 'c activated after the cutoff; z has no exposure event')
})
