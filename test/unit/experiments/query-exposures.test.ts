import t from 'tap'
import { isoformat } from '../../../src/common/time-zones.js'
import { exposuresAnswer, exposureWindow, type ExposuresInput } from '../../../src/experiments/query/exposures.js'
import type { ExperimentRecord } from '../../../src/experiments/record.js'

const T0 = Date.parse('2026-03-01T10:00:00Z')
const DAY = 86_400_000
const split = (...pcts: number[]) => pcts.map((p, i) => ({ key: i === 0 ? 'control' : `test${i === 1 ? '' : `-${i}`}`, name: null, rollout_percentage: p }))

function input(over: Partial<ExposuresInput>): ExposuresInput {
  const s = over.split ?? split(50, 50)
  return { counts: [], split: s, variants: s.map((v) => v.key), excluded: new Set(), holdoutPercentage: 0, handling: 'exclude', start: T0, end: null, zone: 'UTC', nowMs: T0 + 2 * DAY, ...over }
}

t.test("each variant's first exposures are summed up to each day, every variant on every day, $multiple last, as PostHog's exposures runner", async (t) => {
  const answer = exposuresAnswer(
    input({
      counts: [
        { variant: 'test', at: T0, count: 2 },
        { variant: '$multiple', at: T0 + DAY, count: 1 },
        { variant: 'control', at: T0 + DAY, count: 3 },
        { variant: 'control', at: T0 + DAY + 900_000, count: 1 },
        { variant: 'test', at: T0 + 2 * DAY, count: 4 },
      ],
    }),
  )
  const days = ['2026-03-01', '2026-03-02', '2026-03-03']
  t.same(answer.timeseries, [
    { variant: 'control', days, exposure_counts: [0, 4, 4] },
    { variant: 'test', days, exposure_counts: [2, 2, 6] },
    { variant: '$multiple', days, exposure_counts: [0, 1, 1] },
  ])
  t.same(answer.total_exposures, { control: 4, test: 6, $multiple: 1 })
  t.same(answer.date_range, { date_from: '2026-03-01T10:00:00+00:00', date_to: null, explicitDate: true })
})

t.test("days are the project zone's, to the end date or today there", async (t) => {
  // 10:00 UTC is 19:00 in Tokyo; an exposure at 16:00 UTC is the next day there.
  const answer = exposuresAnswer(input({ zone: 'Asia/Tokyo', end: T0 + DAY, counts: [{ variant: 'control', at: T0 + 6 * 3_600_000, count: 1 }] }))
  t.same((answer.timeseries as unknown[])[0], { variant: 'control', days: ['2026-03-01', '2026-03-02'], exposure_counts: [0, 1] })
  t.same(answer.date_range, { date_from: '2026-03-01T19:00:00+09:00', date_to: '2026-03-02T19:00:00+09:00', explicitDate: true })
  t.equal(isoformat(Date.parse('2026-03-01T10:00:00.250Z') * 1000, 'America/St_Johns'), '2026-03-01T06:30:00.250000-03:30', "Python's isoformat: microseconds when there are any")
})

t.test('a draft (no start) has no days and nothing else', async (t) => {
  t.same(exposuresAnswer(input({ start: null })), {
    timeseries: [],
    total_exposures: {},
    date_range: { date_from: null, date_to: null, explicitDate: true },
    sample_ratio_mismatch: null,
    bias_risk: null,
  })
})

t.test("sample ratio mismatch: Pearson's chi-square of the totals against the split, from 100 exposures on, as PostHog's _calculate_srm", async (t) => {
  const srm = (over: Partial<ExposuresInput>) => exposuresAnswer(input(over)).sample_ratio_mismatch as { expected: Record<string, number>; p_value: number } | null
  const at = T0
  const even = srm({ counts: [{ variant: 'control', at, count: 60 }, { variant: 'test', at, count: 40 }] })!
  t.same(even.expected, { control: 50, test: 50 })
  // scipy.stats.chisquare([60, 40], [50, 50]).pvalue
  t.ok(Math.abs(even.p_value - 0.04550026389635842) < 1e-12, `${even.p_value}`)
  t.equal(srm({ counts: [{ variant: 'control', at, count: 60 }, { variant: 'test', at, count: 39 }] }), null, 'under 100 exposures')
  const multiple = srm({ counts: [{ variant: 'control', at, count: 50 }, { variant: 'test', at, count: 50 }, { variant: '$multiple', at, count: 40 }] })!
  t.equal(multiple.p_value, 1, '$multiple takes no part')
  // A holdout of 20 % scales every share alike; an excluded variant leaves the test.
  const held = srm({ split: split(34, 33, 33), variants: ['control', 'test'], excluded: new Set(['test-2']), holdoutPercentage: 20, counts: [{ variant: 'control', at, count: 67 }, { variant: 'test', at, count: 67 }] })!
  t.same(Object.keys(held.expected).sort(), ['control', 'test'])
  t.ok(Math.abs(held.expected.control - (34 / 67) * 134) < 1e-9)
  t.equal(srm({ split: split(100, 0), counts: [{ variant: 'control', at, count: 200 }] }), null, 'one variant with a share: nothing to test')
})

t.test("bias risk: an uneven split, exclude handling and over 0.1 % of the exposed in $multiple, while running, as PostHog's evaluate_bias_risk", async (t) => {
  const at = T0
  const counts = [{ variant: 'control', at, count: 700 }, { variant: 'test', at, count: 298 }, { variant: '$multiple', at, count: 2 }]
  t.same(exposuresAnswer(input({ split: split(70, 30), counts })).bias_risk, { multiple_variant_percentage: 0.2 })
  t.equal(exposuresAnswer(input({ split: split(50, 50), counts })).bias_risk, null, 'an even split')
  t.equal(exposuresAnswer(input({ split: split(34, 33, 33), counts })).bias_risk, null, "34/33/33 is the auto-even split")
  t.equal(exposuresAnswer(input({ split: split(70, 30), counts, handling: 'first_seen' })).bias_risk, null, 'first_seen handling')
  t.equal(exposuresAnswer(input({ split: split(70, 30), counts, end: T0 + DAY })).bias_risk, null, 'an ended experiment')
  const few = [{ variant: 'control', at, count: 1000 }, { variant: '$multiple', at, count: 1 }]
  t.equal(exposuresAnswer(input({ split: split(70, 30), counts: few })).bias_risk, null, '0.1 % or less')
})

t.test("the window is the query's start_date and end_date where it names them (null too), else the experiment's", async (t) => {
  const experiment = { start_date: '2026-03-01T10:00:00Z', end_date: null } as unknown as ExperimentRecord
  t.same(exposureWindow({}, experiment), { start: T0, end: null })
  t.same(exposureWindow({ start_date: null }, experiment), { start: null, end: null }, 'a draft, as the query says')
  t.same(exposureWindow({ end_date: '2026-03-02T10:00:00Z' }, experiment), { start: T0, end: T0 + DAY })
  t.throws(() => exposureWindow({ start_date: 'yesterday' }, experiment), { code: 'invalid', attr: 'start_date', detail: 'start_date must be an ISO 8601 date and time.' })
  t.throws(() => exposureWindow({ end_date: 7 }, experiment), { code: 'invalid', attr: 'end_date' })
})
