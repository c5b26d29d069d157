import t from 'tap'
import {
  BreakdownSummer,
  compareText,
  MAX_BREAKDOWN_ROWS,
  MULTIPLE_VARIANT_KEY,
  quantileExact,
  VariantSummer,
  type Exposure,
} from '../../../src/storage/events/experiment-aggregate.js'
import { aggregateVariants as aggregate, exposuresByEntity, sourceProperties } from '../../../src/storage/events/experiment-rows.js'
import { EXPOSURE_BIT, type ExperimentAggregation, type ExposureRow, type MetricEventRow } from '../../../src/storage/events/index.js'

type Plan = ExperimentAggregation & { steps: number }
const plan = (over: Partial<Plan>): Plan => ({
  type: 'mean',
  steps: 1,
  sources: [{ kind: 'count' }],
  windowMs: null,
  lowerPercentile: null,
  upperPercentile: null,
  ignoreZeros: false,
  ...over,
})
const ev = (entity: string, t: number, mask = 1, values: Array<string | null> = [], keys: Array<string | null> = []): MetricEventRow => [entity, t, mask, values, keys]
/** The store's call: the value properties and distinct keys are those the sources name, in order. */
const aggregateGroups = (p: Plan, breakdowns: number, variants: string[], exposures: ReadonlyMap<string, Exposure>, events: MetricEventRow[]) =>
  aggregate(
    p,
    p.steps,
    breakdowns,
    { valueProperties: sourceProperties(p.sources) },
    [...new Set(p.sources.flatMap((m) => (m.kind === 'distinct' ? [m.key] : [])))],
    variants,
    exposures,
    events,
  )
/** Without breakdowns: the per-variant sums. */
const aggregateVariants = (p: Plan, variants: string[], exposures: ReadonlyMap<string, Exposure>, events: MetricEventRow[]) => aggregateGroups(p, 0, variants, exposures, events).variants
/** Exposure rows without breakdown texts. */
const exposed = (rows: Array<[string, string, number]>): ExposureRow[] => rows.map(([e, v, at]) => [e, v, at, []])

t.test('an entity seen in two variants is $multiple, or its earliest variant with first_seen', async (t) => {
  const rows = exposed([
    ['a', 'control', 100],
    ['b', 'test', 300],
    ['b', 'control', 200],
  ])
  t.same(
    [...exposuresByEntity(rows, 'exclude')],
    [
      ['a', { variant: 'control', first: 100, breakdown: [] }],
      ['b', { variant: MULTIPLE_VARIANT_KEY, first: 200, breakdown: [] }],
    ],
  )
  t.same(exposuresByEntity(rows, 'first_seen').get('b'), { variant: 'control', first: 200, breakdown: [] })
})

t.test('mean metrics count only events at or after first exposure, within the conversion window', async (t) => {
  const exposures = exposuresByEntity(exposed([['a', 'control', 1000], ['b', 'test', 1000], ['c', 'test', 5000]]), 'exclude')
  const events = [ev('a', 999), ev('a', 1000), ev('a', 1500), ev('a', 2100), ev('b', 1200), ev('x', 1200)]
  const all = aggregateVariants(plan({}), ['control', 'test'], exposures, events)
  t.same(all, [
    { key: 'control', number_of_samples: 1, sum: 3, sum_squares: 9 },
    { key: 'test', number_of_samples: 2, sum: 1, sum_squares: 1 },
  ])
  const windowed = aggregateVariants(plan({ windowMs: 1000 }), ['control', 'test'], exposures, events)
  t.equal(windowed[0].sum, 2, 'the event at first exposure + window is out')
  t.same(aggregateVariants(plan({}), ['control', 'test', 'holdout-1'], exposures, [])[2], { key: 'holdout-1', number_of_samples: 0, sum: 0, sum_squares: 0 })
})

t.test('property math reads numbers (anything else is 0) and unique sessions count distinct ids', async (t) => {
  const exposures = exposuresByEntity(exposed([['a', 'control', 0]]), 'exclude')
  const events = [ev('a', 1, 1, ['5'], ['s1']), ev('a', 2, 1, ['2.5'], ['s1']), ev('a', 3, 1, ['n/a'], ['s2']), ev('a', 4, 1, [null], [null])]
  const value = (math: Plan['sources'][number]) => aggregateVariants(plan({ sources: [math] }), ['control'], exposures, events)[0].sum
  t.equal(value({ kind: 'sum', property: 'amount' }), 7.5)
  t.equal(value({ kind: 'avg', property: 'amount' }), 7.5 / 4)
  t.equal(value({ kind: 'min', property: 'amount' }), 0)
  t.equal(value({ kind: 'max', property: 'amount' }), 5)
  t.equal(value({ kind: 'distinct', key: '$session_id' }), 2)
})

t.test('dau counts distinct persons and unique_group distinct group keys, never an empty one or the zero UUID; any says whether there was an event', async (t) => {
  const exposures = exposuresByEntity(exposed([['org-a', 'control', 0], ['org-b', 'control', 0], ['org-c', 'control', 0]]), 'exclude')
  const zero = '00000000-0000-0000-0000-000000000000'
  const events = [
    ev('org-a', 0b11, 1, [], ['p1', 'x']),
    ev('org-a', 2, 0b11, [], ['p2', 'x']),
    ev('org-a', 3, 0b11, [], ['p1', '']),
    ev('org-a', 4, 0b11, [], [zero, 'y']),
    ev('org-b', 0b11, 1, [], ['', '']),
  ]
  const per = (math: Plan['sources'][number], keys: Plan['sources'][number][]) =>
    aggregateVariants(plan({ type: 'ratio', sources: [math, ...keys] }), ['control'], exposures, events)[0]
  const dau = per({ kind: 'distinct', key: 'person' }, [{ kind: 'distinct', key: '$group_1' }])
  t.equal(dau.sum, 2 + 0 + 0, 'org-a: p1 and p2 (the zero UUID no person); org-b: an empty person; org-c: no events')
  t.equal(dau.denominator_sum, 2, 'org-a: x and y (an empty key none)')
  t.equal(dau.numerator_denominator_sum_product, 4)
  const any = aggregateVariants(plan({ sources: [{ kind: 'any' }] }), ['control'], exposures, events)[0]
  t.same([any.number_of_samples, any.sum], [3, 2], 'org-a and org-b had events, org-c none')
})

t.test("a mean's threshold makes each entity 1 when its value reaches it, else 0", async (t) => {
  const exposures = exposuresByEntity(exposed([['a', 'control', 0], ['b', 'control', 0], ['c', 'control', 0]]), 'exclude')
  const events = [ev('a', 1, 1, ['3']), ev('a', 2, 1, ['2']), ev('b', 1, 1, ['4.5']), ev('c', 1, 1, ['9'])]
  const sums = aggregateVariants(plan({ sources: [{ kind: 'sum', property: 'amount' }], threshold: 5 }), ['control'], exposures, events)[0]
  t.same([sums.number_of_samples, sums.sum, sums.sum_squares], [3, 2, 2], 'a: 5 reaches 5, b: 4.5 does not, c: 9 does')
  const counted = aggregateVariants(plan({ threshold: 2 }), ['control'], exposures, events)[0]
  t.same([counted.sum, counted.sum_squares], [1, 1], 'only a has two events')
})

t.test('winsorisation clamps to quantileExact bounds over all entities; ignore_zeros takes the upper bound over non-zero values', async (t) => {
  t.equal(quantileExact([4, 1, 3, 2], 0.5), 3, 'the element at floor(0.5 × 4) of the sorted values, not 2.5')
  t.equal(quantileExact([0, 10], 0.9), 10)
  t.equal(quantileExact([5, 1, 9], 1), 9)
  t.equal(quantileExact([5, 1, 9], 0), 1)
  const rows: ExposureRow[] = ['a', 'b', 'c', 'd', 'e'].map((e) => [e, 'control', 0, []])
  const events = [...Array(10)].map((_, i) => ev('a', i + 1)).concat([ev('b', 1), ev('c', 1), ev('c', 2)])
  const counts = [10, 1, 2, 0, 0]
  const upper = quantileExact(counts, 0.8)
  const clamped = aggregateVariants(plan({ upperPercentile: 0.8 }), ['control'], exposuresByEntity(rows, 'exclude'), events)[0]
  t.equal(clamped.sum, counts.map((c) => Math.min(c, upper)).reduce((a, b) => a + b))
  const nonZeroUpper = quantileExact([10, 1, 2], 0.8)
  const ignoring = aggregateVariants(plan({ upperPercentile: 0.8, ignoreZeros: true }), ['control'], exposuresByEntity(rows, 'exclude'), events)[0]
  t.equal(ignoring.sum, counts.map((c) => Math.min(c, nonZeroUpper)).reduce((a, b) => a + b))
})

t.test('funnels: each entity’s furthest step from its exposures (experiment-funnel.ts walks them), counted step by step', async (t) => {
  const exposures = exposuresByEntity(exposed([['a', 'control', 0], ['b', 'control', 0], ['c', 'control', 0]]), 'exclude')
  const stats = aggregateVariants(plan({ type: 'funnel', steps: 3, sources: [] }), ['control'], exposures, [
    ev('a', 0, EXPOSURE_BIT),
    ev('b', 0, EXPOSURE_BIT),
    ev('c', 0, EXPOSURE_BIT),
    ev('a', 1, 0b001),
    ev('a', 2, 0b010),
    ev('a', 3, 0b100),
    ev('b', 1, 0b001),
    // c's second step without its first.
    ev('c', 2, 0b010),
  ])
  t.same(stats[0], { key: 'control', number_of_samples: 3, sum: 1, sum_squares: 1, step_counts: [2, 1, 1] })
})

t.test('ratio metrics sum numerator and denominator per entity, with their squares and products', async (t) => {
  const exposures = exposuresByEntity(exposed([['a', 'control', 0], ['b', 'control', 0]]), 'exclude')
  const ratio = plan({ type: 'ratio', steps: 2, sources: [{ kind: 'sum', property: 'v' }, { kind: 'count' }] })
  const [s] = aggregateVariants(ratio, ['control'], exposures, [ev('a', 1, 0b01, ['3']), ev('a', 2, 0b10), ev('a', 3, 0b10), ev('b', 1, 0b01, ['4'])])
  t.same(s, { key: 'control', number_of_samples: 2, sum: 7, sum_squares: 25, denominator_sum: 2, denominator_sum_squares: 4, numerator_denominator_sum_product: 6 })
})

t.test('per-entity values added up in any order give the same sums; winsorised ones wait for every value', async (t) => {
  const a = plan({ upperPercentile: 0.8 })
  const values: Array<[string, number]> = [
    ['control', 10],
    ['test', 1],
    ['control', 2],
    ['test', 0],
    ['other', 99],
  ]
  const sum = (order: Array<[string, number]>) => {
    const summer = new VariantSummer(a, ['control', 'test'], 1)
    for (const [variant, value] of order) summer.addValue(variant, value)
    return summer.result()
  }
  const upper = quantileExact([10, 1, 2, 0], 0.8)
  t.same(sum(values), [
    { key: 'control', number_of_samples: 2, sum: Math.min(10, upper) + 2, sum_squares: Math.min(10, upper) ** 2 + 4 },
    { key: 'test', number_of_samples: 2, sum: 1, sum_squares: 1 },
  ], 'a variant not asked for is left out of the bounds and the sums')
  t.same(sum([...values].reverse()), sum(values))
  const funnel = new VariantSummer(plan({ type: 'funnel', steps: 2 }), ['control'], 2)
  funnel.addFunnel('control', 1)
  funnel.addFunnel('control', -1)
  funnel.addSums('elsewhere', { number_of_samples: 5, sum: 5, sum_squares: 5 })
  t.same(funnel.result(), [{ key: 'control', number_of_samples: 2, sum: 1, sum_squares: 1, step_counts: [1, 1] }])
})

t.test("an entity's breakdown group is its first exposure's texts, the smaller on a tie, whatever the variant", async (t) => {
  const rows: ExposureRow[] = [
    ['a', 'control', 200, ['Safari']],
    ['a', 'control', 100, ['Chrome']],
    ['b', 'test', 100, ['Zeta', 'x']],
    ['b', 'test', 100, ['Alpha', 'y']],
    ['c', 'test', 300, ['Firefox']],
    ['c', 'control', 50, ['Edge']],
  ]
  const byEntity = exposuresByEntity(rows, 'first_seen')
  t.same(byEntity.get('a'), { variant: 'control', first: 100, breakdown: ['Chrome'] })
  t.same(byEntity.get('b'), { variant: 'test', first: 100, breakdown: ['Alpha', 'y'] }, 'one row gives every text')
  t.same(byEntity.get('c'), { variant: 'control', first: 50, breakdown: ['Edge'] })
  t.ok(compareText('\uffff', '\u{10000}') < 0, 'by code point, as UTF-8 bytes compare, not by UTF-16 unit')
  t.ok(compareText('a', 'ab') < 0)
  t.equal(compareText('$$_posthog_breakdown_null_$$', 'Chrome') < 0, true)
})

t.test('breakdown groups: each summed on its own and in text order, everyone the groups added up, winsorised per group', async (t) => {
  // Chrome: a (control, 3 events), b (test, 1); Safari: c (control, 10), d (control, 0); e is $multiple.
  const rows: ExposureRow[] = [
    ['a', 'control', 0, ['Chrome']],
    ['b', 'test', 0, ['Chrome']],
    ['c', 'control', 0, ['Safari']],
    ['d', 'control', 0, ['Safari']],
    ['e', 'control', 0, ['Opera']],
    ['e', 'test', 0, ['Opera']],
  ]
  const events = [ev('a', 1), ev('a', 2), ev('a', 3), ev('b', 1), ...[...Array(10)].map((_, i) => ev('c', i + 1)), ev('e', 1)]
  const sums = aggregateGroups(plan({}), 1, ['control', 'test'], exposuresByEntity(rows, 'exclude'), events)
  t.same(sums.breakdowns, [
    {
      values: ['Chrome'],
      variants: [
        { key: 'control', number_of_samples: 1, sum: 3, sum_squares: 9 },
        { key: 'test', number_of_samples: 1, sum: 1, sum_squares: 1 },
      ],
    },
    {
      values: ['Safari'],
      variants: [
        { key: 'control', number_of_samples: 2, sum: 10, sum_squares: 100 },
        { key: 'test', number_of_samples: 0, sum: 0, sum_squares: 0 },
      ],
    },
  ], 'the $multiple entity makes no group; a variant nobody in a group saw answers zeros')
  t.same(sums.variants, [
    { key: 'control', number_of_samples: 3, sum: 13, sum_squares: 109 },
    { key: 'test', number_of_samples: 1, sum: 1, sum_squares: 1 },
  ])
  // The upper bound per group: Chrome's values [3, 1] → quantileExact 0.5 = 3; Safari's [10, 0] → 10.
  const winsorised = aggregateGroups(plan({ upperPercentile: 0.5 }), 1, ['control', 'test'], exposuresByEntity(rows, 'exclude'), events)
  t.same(
    winsorised.breakdowns!.map((g) => g.variants[0].sum),
    [3, 10],
    'each group clamps to its own bound (over everyone, 0.5 of [3, 1, 10, 0] would be 3)',
  )
  t.equal(winsorised.variants[0].sum, 13)
  // Without breakdowns there is one group and no breakdown results, even with nobody exposed.
  t.same(aggregateGroups(plan({ type: 'funnel', steps: 2, sources: [] }), 0, ['control'], new Map(), []), {
    variants: [{ key: 'control', number_of_samples: 0, sum: 0, sum_squares: 0, step_counts: [0, 0] }],
    breakdowns: null,
  })
})

t.test('funnel and ratio sums add up over the groups, step counts step by step', async (t) => {
  const funnel = new BreakdownSummer(plan({ type: 'funnel', steps: 2, sources: [] }), ['control'], 2, 1)
  funnel.group(['x']).addFunnel('control', 1)
  funnel.group(['y']).addFunnel('control', 0)
  funnel.group(['y']).addFunnel('control', -1)
  t.same(funnel.result().variants, [{ key: 'control', number_of_samples: 3, sum: 1, sum_squares: 1, step_counts: [2, 1] }])
  const ratio = new BreakdownSummer(plan({ type: 'ratio', steps: 2 }), ['control'], 2, 2)
  ratio.group(['x', 'p']).addValue('control', 2, 3)
  ratio.group(['x', 'q']).addValue('control', 1, 1)
  const r = ratio.result()
  t.same(r.variants, [{ key: 'control', number_of_samples: 2, sum: 3, sum_squares: 5, denominator_sum: 4, denominator_sum_squares: 10, numerator_denominator_sum_product: 7 }])
  t.same(
    r.breakdowns!.map((g) => g.values),
    [
      ['x', 'p'],
      ['x', 'q'],
    ],
  )
})

t.test("breakdown results stop at PostHog's row limit; the sums over everyone count every group", async (t) => {
  const summer = new BreakdownSummer(plan({}), ['control', 'test'], 1, 1)
  const groups = MAX_BREAKDOWN_ROWS / 2 + 1
  for (let i = 0; i < groups; i++) {
    const values = [String(i).padStart(6, '0')]
    summer.group(values).addValue('control', 1)
    summer.group(values).addValue('test', 2)
  }
  const sums = summer.result()
  t.equal(sums.breakdowns!.length, MAX_BREAKDOWN_ROWS / 2, 'two rows a group: the last group is past the limit')
  t.same(sums.breakdowns!.at(-1)!.values, [String(MAX_BREAKDOWN_ROWS / 2 - 1).padStart(6, '0')])
  t.equal(sums.variants[0].number_of_samples, groups)
})
