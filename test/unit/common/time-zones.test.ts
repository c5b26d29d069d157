/**
 * Time zones through Node's Intl: which names a project's timezone takes (PostHog's choices are the tz
 * database's names, spelled exactly) and the offset a zone has at an instant, across daylight saving.
 */
import t from 'tap'
import { TZ_NAMES } from '../../../src/common/tz-names.js'
import { isKnownTimeZone, isoformat, isTimeZoneName, offsetChanges, wallInstants, wallToInstant, zoneOffsetMs } from '../../../src/common/time-zones.js'

const HOUR = 3_600_000

t.test('names the tz database writes are taken, as written: canonical, current and linked', async (t) => {
  for (const name of ['UTC', 'Europe/Berlin', 'America/New_York', 'America/Argentina/Buenos_Aires', 'Asia/Kolkata', 'Asia/Calcutta', 'Europe/Kyiv', 'US/Eastern', 'Etc/GMT+5', 'America/Port-au-Prince', 'Pacific/Chatham', 'GB', 'Etc/GMT-14', 'America/Indiana/Indianapolis']) {
    t.ok(isTimeZoneName(name), name)
  }
})

t.test("every tz database name is one the runtime computes times in, so none is refused for Intl's sake", async (t) => {
  t.same([...TZ_NAMES].filter((name) => !isTimeZoneName(name)), [])
})

t.test('names it does not write are refused: other cases, unknown places, offsets, blanks, overlong text', async (t) => {
  for (const name of ['utc', 'europe/berlin', 'EUROPE/BERLIN', 'US/EASTERN', 'us/eastern', 'Asia/KOLKATA', 'Gb', 'Factory', 'Europe/Atlantis', 'Mars/Olympus_Mons', '+01:00', 'GMT+1', '', ' UTC', 'Europe/Berlin ', 'Europe//Berlin', 'A'.repeat(241)]) {
    t.notOk(isTimeZoneName(name), JSON.stringify(name))
  }
  t.notOk(isKnownTimeZone('Mars/Olympus_Mons'))
})

t.test('the offset at an instant follows daylight saving, half hours and the far past', async (t) => {
  t.equal(zoneOffsetMs('Europe/Berlin', Date.parse('2026-03-29T00:59:59Z')), HOUR, 'CET just before the change')
  t.equal(zoneOffsetMs('Europe/Berlin', Date.parse('2026-03-29T01:00:00Z')), 2 * HOUR, 'CEST from 01:00 UTC')
  t.equal(zoneOffsetMs('America/New_York', Date.parse('2026-11-01T06:00:00Z')), -5 * HOUR)
  t.equal(zoneOffsetMs('Asia/Kolkata', 0), 5.5 * HOUR)
  t.equal(zoneOffsetMs('UTC', 1e18), 0)
  t.equal(zoneOffsetMs('Europe/Berlin', 9e15), null, "outside JS Date's range")
  t.equal(zoneOffsetMs('Europe/Berlin', Date.parse('0050-06-01T00:00:00Z')), 53 * 60_000 + 28_000, 'local mean time, in a year Date.UTC would have read as 1950')
})

t.test("an instant is written as Python's isoformat writes an aware datetime", async (t) => {
  const micros = (iso: string, extra = 0) => Date.parse(iso) * 1000 + extra
  t.equal(isoformat(micros('2026-12-04T10:00:00Z'), 'UTC'), '2026-12-04T10:00:00+00:00', 'no fraction when there is none')
  t.equal(isoformat(micros('2026-12-04T10:00:00.250Z', 7), 'UTC'), '2026-12-04T10:00:00.250007+00:00', 'six digits when there is one')
  t.equal(isoformat(micros('2026-03-01T10:00:00.250Z'), 'America/St_Johns'), '2026-03-01T06:30:00.250000-03:30')
  t.equal(isoformat(micros('2026-12-04T10:00:00Z'), 'Asia/Kathmandu'), '2026-12-04T15:45:00+05:45')
  t.equal(isoformat(micros('1969-12-31T23:59:59.500Z'), 'UTC'), '1969-12-31T23:59:59.500000+00:00', 'before 1970 the fraction still counts forward')
  t.equal(isoformat(micros('1900-01-01T00:00:00Z'), 'Europe/Paris'), '1900-01-01T00:09:21+00:09:21', 'a local mean time writes its seconds')
})

t.test('a wall time names one instant, none in a gap, two in a repeat; read with fold=0 it is always one', async (t) => {
  const wall = (text: string) => Date.parse(`${text}Z`)
  t.same(wallInstants('Europe/Berlin', wall('2026-03-29T02:30:00')), [])
  t.same(wallInstants('Europe/Berlin', wall('2026-10-25T02:30:00')), [Date.parse('2026-10-25T00:30:00Z'), Date.parse('2026-10-25T01:30:00Z')])
  t.equal(wallToInstant('Europe/Berlin', wall('2026-03-29T02:30:00')), Date.parse('2026-03-29T01:30:00Z'), 'the offset from before the gap')
  t.equal(wallToInstant('Europe/Berlin', wall('2026-10-25T02:30:00')), Date.parse('2026-10-25T00:30:00Z'), 'the first occurrence')
  t.equal(wallToInstant('UTC', wall('2026-03-29T02:30:00')), Date.parse('2026-03-29T02:30:00Z'))
})

t.test('the offsets over a range: where it starts, then each change to the second', async (t) => {
  const from = Date.parse('2026-03-01T00:00:00Z')
  const to = Date.parse('2026-11-01T00:00:00Z')
  t.same(offsetChanges('Europe/Berlin', from, to), [[from, HOUR], [Date.parse('2026-03-29T01:00:00Z'), 2 * HOUR], [Date.parse('2026-10-25T01:00:00Z'), HOUR]])
  t.same(offsetChanges('Asia/Kolkata', from, to), [[from, 5.5 * HOUR]])
  t.same(offsetChanges('UTC', from, to), [[from, 0]])
})
