import t from 'tap'
import { offsetChanges } from '../../../src/common/time-zones.js'
import { aggregateVariants } from '../../../src/storage/events/experiment-rows.js'
import { addUnits, retentionOutcome, withinRetention } from '../../../src/storage/events/experiment-retention.js'
import type { ExperimentAggregation, MetricEventRow, RetentionWindow } from '../../../src/storage/events/index.js'

const ms = (iso: string) => Date.parse(iso.endsWith('Z') ? iso : `${iso}Z`)
const FAR = ms('2030-01-01T00:00:00')
const win = (over: Partial<RetentionWindow> = {}): RetentionWindow => ({
  startHandling: 'first_seen',
  unit: 'day',
  start: 1,
  end: 7,
  startBefore: FAR,
  completionBefore: FAR,
  maturedBy: null,
  offsets: [[0, 0]],
  ...over,
})
const START = 1
const DONE = 2

t.test("a day window compares the project's calendar days, both ends inclusive (PostHog's test_retention_window_boundaries)", async (t) => {
  const w = win({ start: 7, end: 14 })
  const s = ms('2024-01-02T12:01:00')
  const on = (day: number) => withinRetention(w, s, ms(`2024-01-${String(2 + day).padStart(2, '0')}T12:01:00`))
  t.same([5, 6, 7, 9, 10, 12, 13, 14, 20].map(on), [false, false, true, true, true, true, true, true, false])
  // Late on day 14 still counts (the truncation's buffer of a day); day 15 does not.
  t.equal(withinRetention(w, s, ms('2024-01-16T23:59:00')), true)
  t.equal(withinRetention(w, s, ms('2024-01-17T00:00:00')), false)
})

t.test('day 0 and hour 0 are the same calendar day or hour as the start (test_retention_day_zero…, test_retention_hour_based_same_hour)', async (t) => {
  const day = win({ start: 0, end: 0 })
  const s = ms('2024-01-02T10:00:00')
  t.same([2, 8, 13, 24, 48].map((h) => withinRetention(day, s, s + h * 3_600_000)), [true, true, true, false, false])
  const hour = win({ unit: 'hour', start: 0, end: 0 })
  const at = (m: number) => ms('2024-01-02T10:00:00') + m * 60_000
  t.equal(withinRetention(hour, at(10), at(15)), true)
  t.equal(withinRetention(hour, at(55), at(59)), true)
  t.equal(withinRetention(hour, at(59), at(61)), false)
  t.equal(withinRetention(hour, at(0), at(0)), true)
  t.equal(withinRetention(hour, at(45), at(105)), false)
})

t.test("days and hours are the project zone's: Kolkata's day starts at 18:30 UTC and its hours at :30", async (t) => {
  const offsets = offsetChanges('Asia/Kolkata', ms('2024-01-01T00:00:00'), ms('2024-02-01T00:00:00'))
  const day = win({ start: 1, end: 1, offsets })
  // 18:00 UTC is 23:30 in Kolkata; 19:00 UTC is already the next day there.
  t.equal(withinRetention(day, ms('2024-01-02T18:00:00'), ms('2024-01-02T19:00:00')), true)
  t.equal(withinRetention(win({ start: 1, end: 1 }), ms('2024-01-02T18:00:00'), ms('2024-01-02T19:00:00')), false)
  const hour = win({ unit: 'hour', start: 0, end: 0, offsets })
  t.equal(withinRetention(hour, ms('2024-01-02T10:10:00'), ms('2024-01-02T10:25:00')), true)
  t.equal(withinRetention(hour, ms('2024-01-02T10:25:00'), ms('2024-01-02T10:35:00')), false)
})

t.test('weeks and months are added on the calendar without truncation; a month keeps its day, clamped to the month', async (t) => {
  t.equal(addUnits(win({ unit: 'month' }), ms('2024-01-31T10:00:00'), 1), ms('2024-02-29T10:00:00'))
  t.equal(addUnits(win({ unit: 'month' }), ms('2023-01-31T10:00:00'), 1), ms('2023-02-28T10:00:00'))
  t.equal(addUnits(win({ unit: 'month' }), ms('2024-11-15T10:00:00'), 3), ms('2025-02-15T10:00:00'))
  // Across a DST change a calendar day keeps the wall time (Berlin goes to summer time on 31 March).
  const berlin = offsetChanges('Europe/Berlin', ms('2024-03-01T00:00:00'), ms('2024-05-01T00:00:00'))
  t.equal(addUnits(win({ unit: 'week', offsets: berlin }), ms('2024-03-28T11:00:00'), 1), ms('2024-04-04T10:00:00'))
  const week = win({ unit: 'week', start: 1, end: 2 })
  const s = ms('2024-01-01T12:00:00')
  t.equal(withinRetention(week, s, ms('2024-01-08T11:59:59')), false)
  t.equal(withinRetention(week, s, ms('2024-01-08T12:00:00')), true)
  t.equal(withinRetention(week, s, ms('2024-01-15T12:00:00')), true)
  t.equal(withinRetention(week, s, ms('2024-01-15T12:00:01')), false)
  // A month window is also bounded by 30 days a month (the join's bound), whichever is earlier.
  const month = win({ unit: 'month', start: 0, end: 1 })
  t.equal(withinRetention(month, ms('2024-01-31T00:00:00'), ms('2024-02-29T00:00:00')), true)
  t.equal(withinRetention(month, ms('2024-03-01T00:00:00'), ms('2024-03-31T12:00:00')), false)
})

t.test('the start is the first or last start event from first exposure on; nothing before exposure counts (test_retention_first_seen_vs_last_seen)', async (t) => {
  const first = ms('2024-01-02T12:00:00')
  const events: Array<[number, number]> = [
    [ms('2024-01-01T10:00:00'), START],
    [ms('2024-01-02T12:01:00'), START],
    [ms('2024-01-05T12:01:00'), START],
    [ms('2024-01-08T12:01:00'), DONE],
  ]
  t.equal(retentionOutcome(win(), null, first, events), 1)
  t.equal(retentionOutcome(win({ startHandling: 'last_seen' }), null, first, events), 1)
  // [1, 3]: the purchase is 6 days after the first signup, 3 after the last.
  t.equal(retentionOutcome(win({ end: 3 }), null, first, events), 0)
  t.equal(retentionOutcome(win({ end: 3, startHandling: 'last_seen' }), null, first, events), 1)
  t.equal(retentionOutcome(win(), null, first, [[ms('2024-01-03T00:00:00'), DONE]]), null)
})

t.test('a conversion window bounds the start after first exposure, inclusive (test_retention_with_conversion_window)', async (t) => {
  const first = ms('2024-01-02T12:00:00')
  const user = (hours: number): Array<[number, number]> => [
    [first + hours * 3_600_000, START],
    [ms('2024-01-04T14:00:00'), DONE],
  ]
  const w = win({ start: 1, end: 3 })
  t.same([1, 1.5, 2, 2.5, 3].map((h) => retentionOutcome(w, 2 * 3_600_000, first, user(h))), [1, 1, 1, null, null])
  t.equal(retentionOutcome(w, null, first, user(3)), 1)
  t.equal(retentionOutcome(win({ startBefore: first + 3_600_000 }), null, first, user(2)), null, 'starts after the experiment (+ window) are not read')
  t.equal(retentionOutcome(win({ completionBefore: ms('2024-01-04T00:00:00') }), null, first, user(1)), 0)
})

t.test('the start event is never its own completion (test_retention_same_start_and_completion_event_excludes_self)', async (t) => {
  const first = ms('2024-01-02T09:00:00')
  const both = START | DONE
  const repeatSameDay: Array<[number, number]> = [
    [ms('2024-01-02T10:00:00'), both],
    [ms('2024-01-02T14:00:00'), both],
  ]
  const single: Array<[number, number]> = [[ms('2024-01-02T10:00:00'), both]]
  const repeatNextDay: Array<[number, number]> = [
    [ms('2024-01-02T10:00:00'), both],
    [ms('2024-01-03T10:00:00'), both],
  ]
  const outcomes = (w: RetentionWindow) => [repeatSameDay, single, repeatNextDay].map((e) => retentionOutcome(w, null, first, e))
  t.same(outcomes(win({ start: 0, end: 0 })), [1, 0, 0])
  t.same(outcomes(win({ start: 0, end: 0, startHandling: 'last_seen' })), [0, 0, 0])
  t.same(outcomes(win({ start: 1, end: 1 })), [0, 0, 1])
})

/** Ten entities a variant exposed at `exposed`, each with the events `of` gives it, summed per variant. */
function variantSums(w: RetentionWindow, exposed: number, of: (variant: string, i: number) => Array<[number, number]>) {
  const a: ExperimentAggregation = { type: 'retention', sources: [], windowMs: null, lowerPercentile: null, upperPercentile: null, ignoreZeros: false, retention: w }
  const exposures = new Map<string, { variant: string; first: number; breakdown: string[] }>()
  const events: MetricEventRow[] = []
  for (const variant of ['control', 'test']) {
    for (let i = 0; i < 10; i++) {
      const e = `${variant}_${i}`
      exposures.set(e, { variant, first: exposed, breakdown: [] })
      for (const [at, mask] of of(variant, i)) events.push([e, at, mask, [], []])
    }
  }
  events.sort((x, y) => x[1] - y[1])
  return aggregateVariants(a, 2, 0, { valueProperties: [] }, [], ['control', 'test'], exposures, events).variants
}
/** A variant's ratio sums: `n` counted, `retained` of them retained, a denominator of 1 each. */
const ratio = (key: string, n: number, r: number) => ({ key, number_of_samples: n, sum: r, sum_squares: r, denominator_sum: n, denominator_sum_squares: n, numerator_denominator_sum_product: r })

t.test("per variant: only entities with a start count, each retained 1 or 0 over a denominator of 1 (test_basic_retention_calculation's sums)", async (t) => {
  const counts: Record<string, [started: number, retained: number]> = { control: [6, 4], test: [8, 6] }
  const sums = variantSums(win(), ms('2020-01-02T12:00:00'), (variant, i) => {
    const [started, retained] = counts[variant]
    const out: Array<[number, number]> = []
    if (i < started) out.push([ms('2020-01-02T12:01:00'), START])
    if (i < retained) out.push([ms('2020-01-05T12:00:00'), DONE])
    return out
  })
  t.same(sums, [ratio('control', 6, 4), ratio('test', 8, 6)])
})

t.test("started at the exposure: the exposure's filter as a first-seen start, so every exposed entity counts from its first exposure and that exposure is never its own completion (build_retention_query with an ExperimentExposureNode start)", async (t) => {
  // Exposed at 12:00 on 2 January (bit 0: the exposure's filter, its first event the first exposure); days 1 to 3.
  const first = ms('2024-01-02T12:00:00')
  const w = win({ start: 1, end: 3 })
  const exposure: [number, number] = [first, START]
  t.equal(retentionOutcome(w, null, first, [exposure]), 0, 'no completion: counted, not retained')
  // 3 Jan 00:30 is day 1; 5 Jan 23:59 day 3; 6 Jan 00:00 day 4; 2 Jan 23:00 day 0.
  t.same(
    ['2024-01-03T00:30:00', '2024-01-05T23:59:00', '2024-01-06T00:00:00', '2024-01-02T23:00:00'].map((c) => retentionOutcome(w, null, first, [exposure, [ms(c), DONE]])),
    [1, 1, 0, 0],
  )
  // A later exposure is no later start: first seen keeps the first (day 4 from it, day 1 from the later one).
  t.equal(retentionOutcome(w, null, first, [exposure, [ms('2024-01-05T09:00:00'), START], [ms('2024-01-06T09:00:00'), DONE]]), 0)
  // The completion is the exposure event: the first exposure is not its own completion; a later one, or a second
  // one in the same millisecond (the larger uuid, after it in the stores' order), is.
  const same = win({ start: 0, end: 0 })
  const both = START | DONE
  t.equal(retentionOutcome(same, null, first, [[first, both]]), 0)
  t.equal(retentionOutcome(same, null, first, [[first, both], [first + 3_600_000, both]]), 1)
  t.equal(retentionOutcome(same, null, first, [[first, both], [first, both]]), 1)
  // Another event of the completion step in the exposure's millisecond is another event: it retains.
  t.equal(retentionOutcome(same, null, first, [[first, START], [first, DONE]]), 1)
  // Days are the project's: exposed at 23:30 in Kolkata (18:00 UTC), back at 00:30 there (19:00 UTC) is day 1.
  const kolkata = offsetChanges('Asia/Kolkata', ms('2024-01-01T00:00:00'), ms('2024-02-01T00:00:00'))
  const late = ms('2024-01-02T18:00:00')
  const nextDay: Array<[number, number]> = [
    [late, START],
    [ms('2024-01-02T19:00:00'), DONE],
  ]
  t.equal(retentionOutcome(win({ start: 1, end: 1, offsets: kolkata }), null, late, nextDay), 1)
  t.equal(retentionOutcome(win({ start: 1, end: 1 }), null, late, nextDay), 0, 'the same day in UTC')
  // Completions at or after the end + window are not read.
  t.equal(retentionOutcome(win({ start: 1, end: 3, completionBefore: ms('2024-01-03T00:00:00') }), null, first, [exposure, [ms('2024-01-03T00:30:00'), DONE]]), 0)
})

t.test('started at the exposure, per variant: the denominator is every exposed entity (hand-computed sums)', async (t) => {
  // control: 10 exposed, 3 back on day 2; test: 10 exposed, 5 back on day 2, 2 more only on the day of exposure.
  const counts: Record<string, [back: number, sameDay: number]> = { control: [3, 0], test: [5, 2] }
  const exposed = ms('2020-01-02T12:00:00')
  const sums = variantSums(win({ start: 1, end: 7 }), exposed, (variant, i) => {
    const [back, sameDay] = counts[variant]
    const out: Array<[number, number]> = [[exposed, START]]
    if (i < back) out.push([ms('2020-01-04T08:00:00'), DONE])
    else if (i < back + sameDay) out.push([ms('2020-01-02T20:00:00'), DONE])
    return out
  })
  t.same(sums, [ratio('control', 10, 3), ratio('test', 10, 5)])
})

t.test("only counting matured entities leaves out those whose start is less than the window's end before now, the last start for last seen (build_retention_maturity_having_clause)", async (t) => {
  const first = ms('2024-01-02T12:00:00')
  // Starts at 13:00 on 2 and 4 January, a completion on 5 January.
  const events = ([['2024-01-02T13:00:00', START], ['2024-01-04T13:00:00', START], ['2024-01-05T13:00:00', DONE]] as const).map(([iso, mask]): [number, number] => [ms(iso), mask])
  // A window ending 7 days after the start, now 9 January 13:00: the first start has matured (on the dot), the second not.
  const maturedBy = ms('2024-01-09T13:00:00') - 7 * 86_400_000
  t.equal(retentionOutcome(win({ maturedBy }), null, first, events), 1)
  t.equal(retentionOutcome(win({ maturedBy: maturedBy - 1 }), null, first, events), null, 'a millisecond short')
  // Last seen is the last start or nothing: PostHog's HAVING reads max(timestamp), never an earlier matured start.
  t.equal(retentionOutcome(win({ maturedBy, startHandling: 'last_seen' }), null, first, events), null)
  t.equal(retentionOutcome(win({ maturedBy: ms('2024-01-04T13:00:00'), startHandling: 'last_seen' }), null, first, events), 1)
  // Started at the exposure: its first exposure must have matured.
  const exposure: Array<[number, number]> = [
    [first, START],
    [ms('2024-01-04T09:00:00'), DONE],
  ]
  t.equal(retentionOutcome(win({ maturedBy: first }), null, first, exposure), 1)
  t.equal(retentionOutcome(win({ maturedBy: first - 1 }), null, first, exposure), null)
})
