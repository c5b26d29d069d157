import t from 'tap'
import { parseRelativeDate } from '../../../src/common/relative-dates.js'

// Expected values worked out with dateutil's relativedelta rules, which PostHog's relative_date_parse applies.
const NOW = Date.parse('2024-03-31T15:45:30.250Z')
const at = (text: string) => {
  const ms = parseRelativeDate(text, NOW)
  return ms === null ? null : new Date(ms).toISOString()
}

t.test('relative dates count back from now in fixed units', async (t) => {
  t.equal(at('-1d'), '2024-03-30T15:45:30.250Z')
  t.equal(at('-2h'), '2024-03-31T13:45:30.250Z')
  t.equal(at('-30M'), '2024-03-31T15:15:30.250Z', 'M is minutes')
  t.equal(at('-10s'), '2024-03-31T15:45:20.250Z')
  t.equal(at('-1w'), '2024-03-24T15:45:30.250Z')
  t.equal(at('-1q'), '2023-12-31T15:45:30.250Z', 'a quarter is 13 weeks')
})

t.test('months and years move the calendar, keeping the day within the month reached', async (t) => {
  t.equal(at('-1m'), '2024-02-29T15:45:30.250Z')
  t.equal(at('-13m'), '2023-02-28T15:45:30.250Z')
  t.equal(at('-1y'), '2023-03-31T15:45:30.250Z')
})

t.test('Start and End set the hour, day or month edge before counting back', async (t) => {
  t.equal(at('dStart'), '2024-03-31T00:00:00.000Z')
  t.equal(at('-1dEnd'), '2024-03-30T23:59:59.999Z')
  t.equal(at('-3hStart'), '2024-03-31T12:00:00.000Z')
  t.equal(at('mStart'), '2024-03-01T15:45:30.250Z', 'only the day, as relativedelta(day=1)')
  t.equal(at('yStart'), '2024-01-01T15:45:30.250Z')
})

t.test('anything else is not a relative date', async (t) => {
  for (const text of ['yesterday', '2024-01-01', '-1x', '1.5d', '', '-d1']) t.equal(at(text), null, text)
})
