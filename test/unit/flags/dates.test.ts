import t from 'tap'
import { floatTimestamp, isRelativeDate, parseDateString, propertyDate, relativeDate, type Instant } from '../../../src/flags/dates.js'
import { compileOperator } from '../../../src/flags/operators.js'

const ms = (i: Instant | null): number | null => (i === null ? null : i.s * 1000 + Math.round(i.ns / 1e6))

t.test('relative dates', async (t) => {
  t.test('match the Rust service vectors (now = 2020-01-01T12:01:20.134Z)', async (t) => {
    const now = Date.parse('2020-01-01T12:01:20.134Z')
    const rows: [string, string][] = [
      ['1h', '2020-01-01T11:01:20.134Z'],
      ['2h', '2020-01-01T10:01:20.134Z'],
      ['24h', '2019-12-31T12:01:20.134Z'],
      ['30h', '2019-12-31T06:01:20.134Z'],
      ['48h', '2019-12-30T12:01:20.134Z'],
      ['1d', '2019-12-31T12:01:20.134Z'],
      ['7d', '2019-12-25T12:01:20.134Z'],
      ['14d', '2019-12-18T12:01:20.134Z'],
      ['30d', '2019-12-02T12:01:20.134Z'],
      ['1w', '2019-12-25T12:01:20.134Z'],
      ['2w', '2019-12-18T12:01:20.134Z'],
      ['4w', '2019-12-04T12:01:20.134Z'],
      ['8w', '2019-11-06T12:01:20.134Z'],
      ['1m', '2019-12-01T12:01:20.134Z'],
      ['2m', '2019-11-01T12:01:20.134Z'],
      ['4m', '2019-09-01T12:01:20.134Z'],
      ['8m', '2019-05-01T12:01:20.134Z'],
      ['12m', '2019-01-01T12:01:20.134Z'],
      ['1y', '2019-01-01T12:01:20.134Z'],
      ['2y', '2018-01-01T12:01:20.134Z'],
      ['4y', '2016-01-01T12:01:20.134Z'],
      ['8y', '2012-01-01T12:01:20.134Z'],
      ['-7d', '2019-12-25T12:01:20.134Z'],
    ]
    for (const [s, expected] of rows) t.equal(ms(relativeDate(s, now, 'UTC')), Date.parse(expected), s)
  })

  t.test('accept the Rust grammar only', async (t) => {
    const now = Date.parse('2020-01-01T12:01:20.134Z')
    for (const s of ['1', '1x', '1.2y', '1z', '1s', '123344000.134m', 'bazinga', '000bello', '000hello', '1000000h', '100000d', '100000000000000000y', '+1d', ' 1d', '1D'])
      t.equal(relativeDate(s, now, 'UTC'), null, `${s} is not relative`)
    for (const s of ['000h', '1000h', '9999d', '9999h', '9999w', '9999m', '9999y', '-3d', '3d']) t.not(relativeDate(s, now, 'UTC'), null, `${s} is relative`)
    t.equal(isRelativeDate('10000d'), false)
  })

  t.test('step months one at a time, clamping the day at each step', async (t) => {
    t.equal(ms(relativeDate('1m', Date.parse('2020-03-31T12:00:00Z'), 'UTC')), Date.parse('2020-02-29T12:00:00Z'), 'leap year')
    t.equal(ms(relativeDate('1m', Date.parse('2019-03-31T12:00:00Z'), 'UTC')), Date.parse('2019-02-28T12:00:00Z'))
    t.equal(ms(relativeDate('2m', Date.parse('2020-03-31T12:00:00Z'), 'UTC')), Date.parse('2020-01-29T12:00:00Z'), 'the clamp carries on')
    t.equal(ms(relativeDate('1y', Date.parse('2020-02-29T12:00:00Z'), 'UTC')), Date.parse('2019-02-28T12:00:00Z'))
    t.equal(ms(relativeDate('1m', Date.parse('2020-04-03T00:00:00Z'), 'UTC')), Date.parse('2020-03-03T00:00:00Z'))
    t.equal(ms(relativeDate('8m', Date.parse('2020-04-03T00:00:00Z'), 'UTC')), Date.parse('2019-08-03T00:00:00Z'))
  })

  t.test('anchor on the wall clock of the project zone', async (t) => {
    // 2024-06-10 02:00 in Los Angeles (PDT, UTC-7) minus 7 days is 2024-06-03 02:00 PDT = 09:00Z
    t.equal(ms(relativeDate('-7d', Date.parse('2024-06-10T09:00:00Z'), 'America/Los_Angeles')), Date.parse('2024-06-03T09:00:00Z'))
  })

  t.test('give the Python SDK results, except where the server differs (now = 2022-05-01T00:00:00Z)', async (t) => {
    const now = Date.parse('2022-05-01T00:00:00Z')
    const rows: [string, string, string, boolean][] = [
      ['is_date_before', '-1d', '2022-04-29 23:59:00', true],
      ['is_date_before', '-1d', '2022-04-30 00:00:01', false],
      ['is_date_before', '1w', '2022-04-23 00:00:00', true],
      ['is_date_before', '1w', '2022-04-24 00:00:00', false],
      ['is_date_before', '1m', '2022-03-01', true],
      ['is_date_before', '1m', '2022-04-05', false],
      ['is_date_before', '1y', '2021-04-28', true],
      ['is_date_before', '1y', '2021-05-01 00:00:01', false],
      ['is_date_after', '2d', '2022-04-29 00:00:01', true],
      ['is_date_after', '2d', '2022-04-29 00:00:00', false],
      ['is_date_after', '1m', '2022-04-01 00:00:01', true],
      ['is_date_after', '1m', '2022-04-01 00:00:00', false],
      ['is_date_after', '1y', '2021-05-01 00:00:01', true],
      ['is_date_after', '1y', '2021-05-01 00:00:00', false],
      // Python compares a date-only value at day precision (false); the server reads it as midnight (true)
      ['is_date_before', '-6h', '2022-04-30', true],
    ]
    for (const [op, value, person, expected] of rows) {
      const test = compileOperator(op as 'is_date_before', value, 'UTC')
      t.equal(test(person, now), expected, `${person} ${op} ${value}`)
    }
  })
})

t.test('absolute dates', async (t) => {
  const at = (s: string, tz = 'UTC') => ms(parseDateString(s, tz, Date.parse('2024-06-01T12:34:56Z')).instant)

  t.test('read RFC 3339 with its offset, and naive forms in the project zone', async (t) => {
    t.equal(at('2024-03-21T00:00:00Z'), Date.parse('2024-03-21T00:00:00Z'))
    t.equal(at('2024-03-21t01:00:00+01:00'), Date.parse('2024-03-21T00:00:00Z'))
    t.equal(at('2024-03-21 01:00:00.5z'), Date.parse('2024-03-21T01:00:00.500Z'))
    t.equal(at('2024-06-01'), Date.parse('2024-06-01T00:00:00Z'))
    t.equal(at('2024-6-1'), Date.parse('2024-06-01T00:00:00Z'), 'chrono accepts short month and day')
    t.equal(at('2025-12-19T00:00:00.000'), Date.parse('2025-12-19T00:00:00Z'))
    t.equal(at('2025-12-19T00:00:00.5'), Date.parse('2025-12-19T00:00:00.500Z'))
    t.equal(at('2024-06-01 10:30'), Date.parse('2024-06-01T10:30:00Z'))
    t.equal(at('2024-06-01', 'America/New_York'), Date.parse('2024-06-01T04:00:00Z'), 'naive dates are in the project zone')
    t.equal(at('2024-06-01T00:00:00Z', 'America/New_York'), Date.parse('2024-06-01T00:00:00Z'), 'explicit offsets win')
    t.equal(at('2024-02-30'), null, 'not a calendar day')
    t.equal(at('2024-06-01T25:00:00Z'), null)
    t.equal(at('garbage'), null)
  })

  t.test('pick the earliest instant on a fall-back overlap and none in a spring-forward gap', async (t) => {
    t.equal(at('2024-06-03 02:00', 'America/Los_Angeles'), Date.parse('2024-06-03T09:00:00Z'))
    t.equal(at('2024-11-03 01:30', 'America/Los_Angeles'), Date.parse('2024-11-03T08:30:00Z'))
    t.equal(at('2024-03-10 02:30', 'America/Los_Angeles'), null)
  })

  t.test('fall back to the dateparser formats PostHog reaches last', async (t) => {
    t.equal(at('Wed, 02 Jun 2021 06:31:39 GMT'), Date.parse('2021-06-02T06:31:39Z'))
    t.equal(at('Wed, 02 Jun 2021 06:31:39 PDT'), Date.parse('2021-06-02T13:31:39Z'))
    t.equal(at('2021-05-14 18:51 PDT'), Date.parse('2021-05-15T01:51:00Z'))
    t.equal(at('2014-04-26 13:13:44 +09:00'), Date.parse('2014-04-26T04:13:44Z'))
    t.equal(at('2019-11-29 08:08-08'), Date.parse('2019-11-29T16:08:00Z'))
    t.equal(at('2021-05-02 23:31:36.0741-07'), Date.parse('2021-05-03T06:31:36.074Z'))
    t.equal(at('2014-04-26 05:24:37 PM'), Date.parse('2014-04-26T17:24:37Z'))
    t.equal(at('1620021848429'), Date.parse('2021-05-03T06:04:08.429Z'), 'a 13-digit filter value is milliseconds')
    t.equal(at('2014/04/08 22:05'), Date.parse('2014-04-08T22:05:00Z'))
    t.equal(at('4/8/2014 22:05'), Date.parse('2014-04-08T22:05:00Z'))
    t.equal(at('May 8, 2009 5:57:51 PM'), Date.parse('2009-05-08T17:57:51Z'))
    t.equal(at('12 Feb 2006, 19:17'), Date.parse('2006-02-12T19:17:00Z'))
    t.equal(at('3/31/2014'), Date.parse('2014-03-31T12:34:56Z'), 'date-only forms take the time of day of now')
  })

  t.test('read person numbers and numeric strings as Unix seconds', async (t) => {
    t.equal(ms(propertyDate(1836277747, 'UTC', 0)), Date.parse('2028-03-10T05:09:07Z'))
    t.equal(ms(propertyDate('1836277747', 'UTC', 0)), Date.parse('2028-03-10T05:09:07Z'))
    t.same(floatTimestamp(1836277747.86753), { s: 1836277747, ns: 867530107 })
    t.same(propertyDate('1836277747.86753', 'UTC', 0), { s: 1836277747, ns: 867530107 })
    t.same(floatTimestamp(-1.5), { s: -2, ns: 0 }, 'a negative fraction is dropped, as Rust saturates')
    t.equal(propertyDate(true, 'UTC', 0), null)
    t.equal(propertyDate('inf', 'UTC', 0), null)
  })
})
