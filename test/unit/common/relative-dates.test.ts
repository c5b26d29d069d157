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

// In a project's timezone: values from Python's relativedelta on a zoneinfo datetime, as relative_date_parse with
// team.timezone_info computes them.
const inZone = (text: string, now: string, zone: string) => {
  const ms = parseRelativeDate(text, Date.parse(now), zone)
  return ms === null ? null : new Date(ms).toISOString()
}

t.test("in a project's timezone, days start at its midnight and keep its time of day", async (t) => {
  const now = '2026-03-30T10:15:00Z' // 12:15 in Berlin, the day after the clocks went forward
  t.equal(inZone('dStart', now, 'Europe/Berlin'), '2026-03-29T22:00:00.000Z')
  t.equal(inZone('-1dStart', now, 'Europe/Berlin'), '2026-03-28T23:00:00.000Z', 'the day before began in CET')
  t.equal(inZone('-7dStart', now, 'America/New_York'), '2026-03-23T04:00:00.000Z', "a draft experiment's window: midnight in New York a week back")
  t.equal(inZone('-1dEnd', now, 'Europe/Berlin'), '2026-03-29T21:59:59.999Z')
  t.equal(inZone('-1d', now, 'Europe/Berlin'), '2026-03-29T10:15:00.000Z', '12:15 the day before')
  t.equal(inZone('-1h', now, 'Europe/Berlin'), '2026-03-30T09:15:00.000Z')
  t.equal(inZone('mStart', now, 'Europe/Berlin'), '2026-03-01T11:15:00.000Z', 'the 1st at the same wall time, in CET')
  t.equal(inZone('-1d', '2026-03-08T07:30:00Z', 'America/New_York'), '2026-03-07T08:30:00.000Z', '25 hours back across the change')
})

t.test('a wall time the clock skips or repeats is read as Python reads it (fold=0)', async (t) => {
  t.equal(inZone('-1d', '2026-03-30T00:30:00Z', 'Europe/Berlin'), '2026-03-29T01:30:00.000Z', '02:30 on the 29th does not exist: read at the offset before the gap')
  t.equal(inZone('-1d', '2026-10-26T01:30:00Z', 'Europe/Berlin'), '2026-10-25T00:30:00.000Z', '02:30 on the 25th happens twice: the first')
})
