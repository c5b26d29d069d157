import t from 'tap'
import { metricEventNames, strictFurthestStep, unorderedFurthestStep } from '../../../src/storage/events/experiment-funnel.js'
import { aggregateVariants } from '../../../src/storage/events/experiment-rows.js'
import { EXPOSURE_BIT, type ExperimentAggregation, type ExperimentEventsQuery, type FunnelOrder } from '../../../src/storage/events/index.js'

// Two steps, A then B, after the exposure X; events are [ms, bits], oldest first (then by uuid).
const X = EXPOSURE_BIT
const A = 0b01
const B = 0b10
type Ev = [number, number]
const strict = (events: Ev[], windowMs = 100, steps = 2) => strictFurthestStep(events, steps, windowMs)
const unordered = (events: Ev[], windowMs = 100, steps = 2) => unorderedFurthestStep(events, steps, windowMs)

t.test('strict: every chain starts at an exposure, and an event read that is not its next step breaks it', async (t) => {
  t.equal(strict([[0, X], [10, A], [20, B]]), 1, 'exposure, A, B')
  t.equal(strict([[0, X], [10, A], [15, A], [20, B]]), 1, 'a repeated step keeps the chain at that step')
  t.equal(strict([[0, X], [10, A], [10, A], [20, B]]), 1, 'so do two of the same step at one instant')
  t.equal(strict([[0, X], [10, A], [15, X], [20, B]]), 0, 'another exposure between A and B restarts the chain')
  t.equal(strict([[0, X], [5, B], [10, A], [20, B]]), -1, 'B before A clears the exposure: nothing after it counts')
  t.equal(strict([[10, A], [20, X], [30, B]]), -1, 'A before the exposure is no step')
  t.equal(strict([]), -1)
  t.equal(strict([[0, X]]), -1, 'the exposure alone reaches no step')
})

t.test('strict: the window runs from the chain’s exposure, both ends inclusive, and a later exposure starts anew', async (t) => {
  t.equal(strict([[0, X], [50, A], [100, B]]), 1, 'B exactly the window after the exposure')
  t.equal(strict([[0, X], [50, A], [101, B]]), 0, 'B past it')
  t.equal(strict([[0, X], [101, A]]), -1, 'A past it')
  t.equal(strict([[0, X], [200, X], [250, A], [260, B]]), 1, 'the second exposure’s window')
})

t.test('strict: events at one instant with different steps are taken in step order, each advancing a chain once', async (t) => {
  t.equal(strict([[0, X], [10, A], [10, B]]), 1, 'A and B together')
  t.equal(strict([[0, X], [10, B], [10, A]]), 1, 'whatever their uuids’ order')
  t.equal(strict([[0, X], [10, A | B]]), 0, 'one event of both steps is one step')
  // Split by step: A of the first event, A of the second (already reached), B of the first: used for A.
  t.equal(strict([[0, X], [10, A | B], [10, A]]), 0, 'the event that was A cannot be B too')
  t.equal(strict([[0, X], [10, A], [10, A | B]]), 1, 'the other event can')
  t.equal(strict([[0, X], [10, A], [10, X], [20, B]]), 1, 'no clearing among them: A follows the new exposure')
})

t.test('strict: an exposure that also matches a step', async (t) => {
  t.equal(strict([[0, X | A], [5, B]]), -1, 'starts a chain, which it cannot advance itself')
  t.equal(strict([[0, X | A], [3, A], [5, B]]), 1)
})

t.test('unordered: the most steps, the exposure one of them, holding an event within one window', async (t) => {
  t.equal(unordered([[0, X], [10, B], [20, A]]), 1, 'B before A completes')
  t.equal(unordered([[0, X], [10, A]]), 0)
  t.equal(unordered([[0, X], [10, B]]), 0, 'B with the exposure is two steps too: step 0 counts it')
  t.equal(unordered([[0, X]]), -1)
  t.equal(unordered([]), -1)
  t.equal(unordered([[0, X], [10, B], [15, B], [20, B]]), 0, 'repeated, B is one step')
})

t.test('unordered: the window drops what is older, the exposure included (inclusive)', async (t) => {
  t.equal(unordered([[0, X], [50, A], [100, B]]), 1, 'all three within 100')
  t.equal(unordered([[0, X], [50, A], [150, B]]), 0, 'X dropped at B: two at a time')
  t.equal(unordered([[0, X], [150, A], [160, B]]), 0, 'A and B within the window without the exposure are step 0')
  t.equal(unordered([[0, X], [120, X], [150, A], [160, B]]), 1, 'a later exposure holds the exposure step')
  t.equal(unordered([[0, X], [100, A], [100, B]]), 1, 'events at one instant, in any order')
})

t.test('unordered: an event of several steps is kept for the one whose latest event is the oldest', async (t) => {
  t.equal(unordered([[0, X], [10, A | B]]), 0, 'once: the first step')
  t.equal(unordered([[0, X], [10, A | B], [20, A | B]]), 1, 'twice: both steps')
  t.equal(unordered([[0, X | A]]), -1, 'an exposure matching A is the exposure')
  t.equal(unordered([[0, X | A], [5, X | A]]), 0, 'a second one is A')
})

const funnel = (funnelOrder: FunnelOrder, windowMs: number | null): ExperimentAggregation => ({
  type: 'funnel',
  funnelOrder,
  sources: [],
  windowMs,
  lowerPercentile: null,
  upperPercentile: null,
  ignoreZeros: false,
})

t.test('unordered and strict funnels read every event after the first exposure, the window applying in the walk', async (t) => {
  const exposures = new Map([
    ['late', { variant: 'control', first: 0, breakdown: [] }],
    ['before', { variant: 'control', first: 100, breakdown: [] }],
  ])
  const rows = (): Array<[string, number, number, [], []]> => [
    // Exposed again long after the first exposure's window, converting in the second one's.
    ['late', 0, X, [], []],
    ['late', 500, X, [], []],
    ['late', 550, A, [], []],
    ['late', 560, B, [], []],
    // B before the first exposure is not read: one step after it.
    ['before', 50, B, [], []],
    ['before', 100, X, [], []],
    ['before', 150, A, [], []],
  ]
  for (const order of ['strict', 'unordered'] as const) {
    const [control] = aggregateVariants(funnel(order, 100), 2, 0, [], [], ['control'], exposures, rows()).variants
    t.same([control.number_of_samples, control.sum, control.step_counts], [2, 1, [2, 1]], order)
  }
  const [ordered] = aggregateVariants(funnel('ordered', 100), 2, 0, [], [], ['control'], exposures, rows()).variants
  t.same(ordered.step_counts, [1, 0], 'ordered keeps to the first exposure’s window')
})

t.test('the exposure’s event names are read with the steps’ when the walk reads the exposures', async (t) => {
  const q = (exposure: string | undefined, step: string | null): ExperimentEventsQuery => ({
    teamId: 1,
    groupTypeIndex: null,
    exposure: { teamId: 1, event: exposure },
    variantProperty: '$feature_flag_response',
    breakdowns: [],
    metric: { after: 0, before: 1, steps: [{ event: step, properties: [] }], valueProperties: [], distinctKeys: [] },
  })
  t.same(metricEventNames(q('$feature_flag_called', 'buy'), false), ['buy'])
  t.same(metricEventNames(q('$feature_flag_called', 'buy'), true), ['buy', '$feature_flag_called'])
  t.equal(metricEventNames(q('$feature_flag_called', null), true), null, 'a step of any event')
  t.equal(metricEventNames(q(undefined, 'buy'), true), null, 'an exposure of any event')
})

t.test('thirty steps: the exposure’s bit is past every step’s', async (t) => {
  const steps = 30
  const all = Array.from({ length: steps }, (_, k): Ev => [10 * (k + 1), 1 << k])
  const backwards = Array.from({ length: steps }, (_, k): Ev => [10 * (k + 1), 1 << (steps - 1 - k)])
  t.equal(strict([[0, X], ...all], 1000, steps), 29, 'strict, in order')
  t.equal(strict([[0, X], ...backwards], 1000, steps), -1, 'strict, backwards')
  t.equal(unordered([[0, X], ...backwards], 1000, steps), 29, 'unordered, backwards')
  t.equal(strict([[0, X], ...all.slice(1)], 1000, steps), -1, 'strict without the first step')
  t.equal(unordered([[0, X], ...all.slice(1)], 1000, steps), 28, 'unordered: all but one of 31')
})
