/**
 * A funnel's walk on SQLite reads the exposure events once (with the first exposures) and merges them into the
 * stream of step events: the merged stream must be what one query over both gave, in (time, uuid) order with
 * an event that is both an exposure and a step as one row.
 */
import t from 'tap'
import { sortExposureEvents, withExposureEvents, type ExposureEvent } from '../../../src/storage/events/experiment-rows.js'
import { EXPOSURE_BIT, type MetricEventRow } from '../../../src/storage/events/index.js'

const X = EXPOSURE_BIT
const step = (entity: string, ms: number, mask: number, id: string, amount: string | null = null): [MetricEventRow, string] => [[entity, ms, mask, [amount], []], id]
const merged = (events: Array<[MetricEventRow, string]>, exposures: ExposureEvent[]) => [...withExposureEvents(events, sortExposureEvents(exposures))].map(([e, ms, mask]) => [e, ms, mask])

t.test('exposures fall among the step events by time, then by uuid at one millisecond', async (t) => {
  const events = [step('a', 100, 1, 'u-2'), step('b', 100, 2, 'u-5'), step('a', 300, 2, 'u-1')]
  const exposures: ExposureEvent[] = [['a', 300, 'u-0'], ['b', 100, 'u-3'], ['a', 50, 'u-9'], ['b', 400, 'u-4']]
  t.same(merged(events, exposures), [
    ['a', 50, X],
    ['a', 100, 1],
    ['b', 100, X],
    ['b', 100, 2],
    ['a', 300, X],
    ['a', 300, 2],
    ['b', 400, X],
  ])
})

t.test('an event that is both an exposure and a step is one row with both bits and its texts', async (t) => {
  const rows = [...withExposureEvents([step('a', 100, 1, 'u-1', '7')], [['a', 100, 'u-1']])]
  t.same(rows, [['a', 100, 1 | X, ['7'], []]])
})

t.test('uuids compare as SQLite orders them, by code point, not by UTF-16 unit', async (t) => {
  // U+FF5E sorts after U+1F600 in UTF-16 units (0xFF5E > 0xD83D) but before it in UTF-8 bytes, as SQLite sorts.
  const exposures: ExposureEvent[] = [['a', 100, '\u{1F600}'], ['a', 100, '\uFF5E']]
  t.same(sortExposureEvents(exposures).map((e) => e[2]), ['\uFF5E', '\u{1F600}'])
  t.same(merged([step('a', 100, 1, '\uFFFF')], [['a', 100, '\u{1F600}']]), [['a', 100, 1], ['a', 100, X]])
})

t.test('with no step event at all, the exposures alone come through in order', async (t) => {
  t.same(merged([], [['b', 20, 'u-2'], ['a', 10, 'u-1']]), [['a', 10, X], ['b', 20, X]])
})
