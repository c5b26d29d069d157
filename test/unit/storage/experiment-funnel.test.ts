import t from 'tap'
import { chainFurthestStep, funnelReached, metricEventNames, unorderedFurthestStep } from '../../../src/storage/events/experiment-funnel.js'
import { aggregateVariants } from '../../../src/storage/events/experiment-rows.js'
import { EXPOSURE_BIT, type ExperimentAggregation, type ExperimentEventsQuery, type FunnelOrder } from '../../../src/storage/events/index.js'

// Two steps, A then B, after the exposure X; events are [ms, bits], oldest first (then by uuid).
const X = EXPOSURE_BIT
const A = 0b01
const B = 0b10
type Ev = [number, number]
const strict = (events: Ev[], windowMs = 100, steps = 2) => chainFurthestStep(events, steps, windowMs, true)
const ordered = (events: Ev[], windowMs = 100, steps = 2) => chainFurthestStep(events, steps, windowMs, false)
const unordered = (events: Ev[], windowMs = 100, steps = 2) => unorderedFurthestStep(events, steps, windowMs)

const funnel = (funnelOrder: FunnelOrder, windowMs: number | null): ExperimentAggregation => ({
  type: 'funnel',
  funnelOrder,
  sources: [],
  windowMs,
  lowerPercentile: null,
  upperPercentile: null,
  ignoreZeros: false,
})

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

t.test('ordered: every chain starts at an exposure; events out of order break nothing', async (t) => {
  t.equal(ordered([[0, X], [10, A], [20, B]]), 1, 'exposure, A, B')
  t.equal(ordered([[0, X], [5, B], [10, A], [20, B]]), 1, 'B before A is passed over (strict: -1)')
  t.equal(ordered([[0, X], [10, A], [15, X], [20, B]]), 1, 'another exposure between A and B does not restart the first chain')
  t.equal(ordered([[10, A], [20, X], [30, B]]), -1, 'A before the exposure is no step')
  t.equal(ordered([[0, X | A], [5, B]]), -1, 'an exposure matching A starts a chain it cannot advance itself')
  t.equal(ordered([]), -1)
  t.equal(ordered([[0, X]]), -1, 'the exposure alone reaches no step')
})

// The three cases where skylark's walk before this (chains from the first step, events cut at the first
// exposure + window) answered otherwise; each worked out by hand from steps.rs.
t.test('ordered: a later exposure starts a chain of its own, with its own window', async (t) => {
  // Old walk: A and B are past first exposure + 100, cut: -1.
  t.equal(ordered([[0, X], [200, X], [250, A], [260, B]]), 1, 'converted in the second exposure’s window')
  // X@0 took A@50; X@80 holds step 0 afresh, and B@170 is 170 after the chain holding A: too late.
  t.equal(ordered([[0, X], [50, A], [80, X], [170, B]]), 0, 'the later exposure’s chain needs an A of its own')
  t.equal(ordered([[0, X], [50, A], [80, X], [90, A], [170, B]]), 1, 'which it gets at 90: B is 90 after its exposure')
  // A repeated within one chain changes nothing: the chain from X@0 keeps A@10, B@150 is past its window.
  t.equal(ordered([[0, X], [10, A], [90, A], [150, B]]), 0, 'a repeated step does not move the chain’s start')
})

t.test('ordered: the window runs from the chain’s exposure and is inclusive at its end', async (t) => {
  // Old walk: B at first exposure + window was cut (`t < first + window`): 0.
  t.equal(ordered([[0, X], [50, A], [100, B]]), 1, 'B exactly the window after the exposure')
  t.equal(ordered([[0, X], [50, A], [101, B]]), 0, 'B 1 ms past it, though 51 after A')
  t.equal(ordered([[0, X], [101, A]]), -1, 'A past it')
  // A window of 0, handed to the UDF as set: only what shares the exposure's instant.
  t.equal(ordered([[0, X], [0, A], [0, B]], 0), 1, 'a window of 0: every step at the exposure’s millisecond')
  t.equal(ordered([[0, X], [0, A], [1, B]], 0), 0, 'a window of 0: a step 1 ms later is out')
})

t.test('ordered: different steps at one millisecond are taken in step order, each event once', async (t) => {
  // Old walk: B (first by uuid) found no A before it: 0.
  t.equal(ordered([[0, X], [10, B], [10, A]]), 1, 'B before A by uuid still follows A')
  t.equal(ordered([[0, X], [10, A], [10, B]]), 1)
  t.equal(ordered([[10, A], [10, X], [10, B]]), 1, 'the exposure too, whatever its place')
  t.equal(ordered([[0, X], [10, A | B]]), 0, 'one event of both steps is one step')
  t.equal(ordered([[0, X], [10, A | B], [10, A]]), 0, 'the event that was A cannot be B too')
  t.equal(ordered([[0, X], [10, A], [10, A | B]]), 1, 'the other event can')
})

t.test('ordered and strict take the window as set, three years without one', async (t) => {
  const year3 = 3 * 365 * 86_400_000
  for (const order of ['ordered', 'strict'] as const) {
    t.equal(funnelReached(funnel(order, null), [[0, X], [year3, A]], 2), 0, `${order}: A three years after the exposure`)
    t.equal(funnelReached(funnel(order, null), [[0, X], [year3 + 1, A]], 2), -1, `${order}: 1 ms later`)
    t.equal(funnelReached(funnel(order, 0), [[5, X], [5, A], [5, B]], 2), 1, `${order}: a window of 0 and one millisecond`)
    t.equal(funnelReached(funnel(order, 0), [[5, X], [6, A]], 2), -1, `${order}: a window of 0 and the next millisecond`)
  }
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


t.test('funnels of every order read every event after the first exposure, the window applying in the walk', async (t) => {
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
  for (const order of ['ordered', 'strict', 'unordered'] as const) {
    const [control] = aggregateVariants(funnel(order, 100), 2, 0, { valueProperties: [] }, [], ['control'], exposures, rows()).variants
    t.same([control.number_of_samples, control.sum, control.step_counts], [2, 1, [2, 1]], order)
  }
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
  t.equal(ordered([[0, X], ...all], 1000, steps), 29, 'ordered, in order')
  t.equal(ordered([[0, X], ...backwards], 1000, steps), 0, 'ordered, backwards: the first step, last of all')
  t.equal(strict([[0, X], ...backwards], 1000, steps), -1, 'strict, backwards')
  t.equal(unordered([[0, X], ...backwards], 1000, steps), 29, 'unordered, backwards')
  t.equal(strict([[0, X], ...all.slice(1)], 1000, steps), -1, 'strict without the first step')
  t.equal(unordered([[0, X], ...all.slice(1)], 1000, steps), 28, 'unordered: all but one of 31')
})
