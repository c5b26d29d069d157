import t from 'tap'
import { parseTimestamp, resolveSentAt, resolveTimestamp } from '../../../src/ingestion/timestamps.js'

const at = (iso: string) => Date.parse(iso)

t.test('resolveTimestamp follows PostHog parseEventTimestamp vectors', async (t) => {
  // posthog-semantics §2.6 test vectors (Rust capture timestamp.rs, Node parity tests)
  const cases: Array<[string, string, unknown, unknown, unknown, boolean, string, string[]]> = [
    ['no timestamp means now', '2023-01-01T12:00:00Z', undefined, null, undefined, false, '2023-01-01T12:00:00Z', []],
    ['skew: sent_at ahead', '2023-01-01T12:00:00Z', '2023-01-01T11:59:55Z', '2023-01-01T12:00:05Z', undefined, false, '2023-01-01T11:59:50Z', []],
    ['skew: small', '2023-01-01T12:00:00Z', '2023-01-01T11:59:58Z', '2023-01-01T12:00:02Z', undefined, false, '2023-01-01T11:59:56Z', []],
    ['offset', '2023-01-01T12:00:00Z', undefined, null, 5000, false, '2023-01-01T11:59:55Z', []],
    ['$ignore_sent_at', '2023-01-01T12:00:00Z', '2023-01-01T11:00:00Z', '2023-01-01T12:00:05Z', undefined, true, '2023-01-01T11:00:00Z', []],
    ['future is capped', '2023-01-01T12:00:00Z', '2023-01-02T12:00:00Z', null, undefined, false, '2023-01-01T12:00:00Z', ['event_timestamp_in_future']],
    ['offsets in timestamps', '2021-10-29T01:44:00Z', '2021-10-30T03:02:00+04:00', '2021-10-30T03:12:00+04:00', undefined, false, '2021-10-29T01:34:00Z', []],
    ['offset wins over sent_at', '2021-10-29T01:44:00Z', undefined, '2021-10-30T03:12:00+04:00', 6000, false, '2021-10-29T01:43:54Z', []],
    ['skew result in the future is capped', '2021-10-29T01:00:00Z', '2021-10-29T02:30:00Z', '2021-10-28T01:00:00Z', undefined, false, '2021-10-29T01:00:00Z', ['event_timestamp_in_future']],
    ['negative offset into the future is capped', '2021-10-29T01:00:00Z', undefined, null, -82_860_000, false, '2021-10-29T01:00:00Z', ['event_timestamp_in_future']],
    ['unparseable timestamp means now', '2020-08-12T01:02:00Z', 'notISO', null, undefined, false, '2020-08-12T01:02:00Z', ['ignored_invalid_timestamp']],
  ]
  for (const [name, now, timestamp, sentAt, offset, ignore, expected, warnings] of cases) {
    const result = resolveTimestamp({
      now: at(now),
      timestamp,
      sentAt: typeof sentAt === 'string' ? at(sentAt) : null,
      offset,
      ignoreSentAt: ignore,
    })
    t.equal(new Date(result.ms).toISOString(), new Date(at(expected)).toISOString(), name)
    t.same(result.warnings.map((w) => w.type), warnings, `${name}: warnings`)
  }
})

t.test('parseTimestamp accepts the formats PostHog accepts', async (t) => {
  const cases: Array<[string | number, string | null]> = [
    ['2023-01-01', '2023-01-01T00:00:00.000Z'],
    ['2023-01-01 12:00:00', '2023-01-01T12:00:00.000Z'],
    ['2023-01-01T12:00:00', '2023-01-01T12:00:00.000Z'],
    ['2023-01-01T12:00:00.123456Z', '2023-01-01T12:00:00.123Z'],
    ['2023-01-01T12:00:00+0200', '2023-01-01T10:00:00.000Z'],
    ['01/02/2023', '2023-01-02T00:00:00.000Z'],
    ['Sun, 01 Jan 2023 12:00:00 GMT', '2023-01-01T12:00:00.000Z'],
    ['1672574400000', '2023-01-01T12:00:00.000Z'],
    ['1672574400', '2023-01-01T12:00:00.000Z'],
    [1672574400000, '2023-01-01T12:00:00.000Z'],
    ['notISO', null],
    ['2023-13-01', null],
    ['', null],
    // days and times the calendar does not have are refused, not rolled over (Rust capture's parsers)
    ['2023-02-30T00:00:00Z', null],
    ['2023-04-31', null],
    ['2023-01-01T25:00:00Z', null],
    ['2023-01-01T12:60:00Z', null],
    ['02/30/2023', null],
    ['2024-02-29', '2024-02-29T00:00:00.000Z'],
    ['2023-02-29', null],
    ['2000-02-29', '2000-02-29T00:00:00.000Z'],
    ['1900-02-29', null],
  ]
  for (const [input, expected] of cases) {
    const ms = parseTimestamp(input)
    t.equal(ms === null ? null : new Date(ms).toISOString(), expected, JSON.stringify(input))
  }
})

t.test('resolveSentAt reads the body, else the _ query parameter after 2020', async (t) => {
  t.equal(resolveSentAt('2023-01-01T00:00:00Z', null), at('2023-01-01T00:00:00Z'))
  t.equal(resolveSentAt(undefined, '1672574400000'), 1672574400000)
  t.equal(resolveSentAt(undefined, '1000'), null, 'too early to be a send time')
  t.equal(resolveSentAt(undefined, null), null)
})
