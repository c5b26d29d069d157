/**
 * `only_count_matured_users` for means, funnels and ratios: the latest first exposure whose conversion window has
 * ended, computed by hand from PostHog's `min(timestamp) + toIntervalSecond(window) <= toDateTime(now, 'UTC')`
 * with now formatted to the second; and the entities the embedded store then counts.
 */
import t from 'tap'
import { exposureMaturedBy, maturedBy } from '../../../src/experiments/query/maturity.js'
import { exposuresByEntity } from '../../../src/storage/events/experiment-rows.js'
import type { ExposureRow } from '../../../src/storage/events/index.js'

const at = (iso: string) => Date.parse(iso)
const HOUR = 3_600_000

t.test('a first exposure matures when it plus the conversion window is at most now, now read to the second', async (t) => {
  const cutoff = exposureMaturedBy('mean', HOUR, at('2024-06-01T12:00:00.700Z'))
  t.equal(cutoff, at('2024-06-01T11:00:00.000Z'), 'the fraction of a second of now is dropped: 12:00:00 less an hour')
  const matured = (first: string) => at(first) <= cutoff!
  t.ok(matured('2024-06-01T11:00:00.000Z'), 'exposed an hour before now on the dot: matured')
  t.notOk(matured('2024-06-01T11:00:00.001Z'), '1 ms short of the hour: not yet')
  t.notOk(matured('2024-06-01T11:00:00.500Z'), 'half a second short, though now is 0.7 s past the second: not yet')
  t.notOk(matured('2024-06-01T11:00:01.000Z'), '1 s short: not yet')
  t.equal(exposureMaturedBy('funnel', HOUR, at('2024-06-01T12:00:00.999Z')), cutoff, 'the same second of now, the same cutoff')
  t.equal(exposureMaturedBy('ratio', HOUR, at('2024-06-01T12:00:01.000Z')), cutoff! + 1000, 'a second later, a second more')
  t.equal(exposureMaturedBy('mean', 1000, at('2024-06-01T12:00:00.000Z')), at('2024-06-01T11:59:59.000Z'), 'a one-second window: exposed at most a second ago')
})

t.test('no gate without a conversion window, for a zero one, for retention, or without the setting', async (t) => {
  const now = at('2024-06-01T12:00:00Z')
  t.equal(exposureMaturedBy('mean', null, now), null, 'no conversion window: every entity counts')
  t.equal(exposureMaturedBy('funnel', null, now), null, "a funnel's default window of three years is no conversion window")
  t.equal(exposureMaturedBy('ratio', 0, now), null, "a zero window is none (PostHog's `if metric.conversion_window`)")
  t.equal(exposureMaturedBy('retention', HOUR, now), null, 'retention gates its start event instead')
  t.equal(exposureMaturedBy('mean', HOUR, null), null, 'the experiment does not ask for matured users')
})

t.test('a window of any length gives a cutoff a store can compare with', async (t) => {
  const now = at('2024-06-01T12:00:00Z')
  t.equal(maturedBy(now, Number.POSITIVE_INFINITY), -8.64e15, 'an endless window: nobody has matured')
  t.equal(maturedBy(now, -Number.MAX_VALUE), 8.64e15, 'a negative one (PostHog adds it too): everybody has')
  t.equal(maturedBy(now, 90 * 86_400_000), now - 90 * 86_400_000)
})

t.test('the embedded store counts the entities first exposed by the cutoff, whenever they were exposed again', async (t) => {
  const cutoff = at('2024-06-01T11:00:00.000Z')
  const rows: ExposureRow[] = [
    ['on-the-dot', 'control', cutoff, []],
    ['a-ms-short', 'control', cutoff + 1, []],
    // First exposed before the cutoff, again after: the first exposure is the anchor, not the last.
    ['again-later', 'test', cutoff - 1000, []],
    ['again-later', 'test', cutoff + HOUR, []],
    // Exposed to both variants before the cutoff: `$multiple` as without the gate.
    ['both', 'control', cutoff - 5, []],
    ['both', 'test', cutoff + 5, []],
  ]
  t.same([...exposuresByEntity(rows, 'exclude', cutoff).keys()], ['on-the-dot', 'again-later', 'both'])
  t.equal(exposuresByEntity(rows, 'exclude', cutoff).get('both')!.variant, '$multiple')
  t.same([...exposuresByEntity(rows, 'exclude', cutoff - 1).keys()], ['again-later', 'both'], 'a ms earlier, the one on the dot is short too')
  t.equal(exposuresByEntity(rows, 'exclude').size, 4, 'no cutoff: everyone')
})
