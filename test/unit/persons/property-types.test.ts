import t from 'tap'
import { detectPropertyType } from '../../../src/persons/property-types.js'

const NOW = Date.parse('2026-01-15T12:00:00Z')
const type = (key: string, value: unknown) => detectPropertyType(key, value, NOW)

t.test('values alone: numbers are Numeric, booleans and their words Boolean, everything else textual is String', async (t) => {
  t.equal(type('price', 9.99), 'Numeric')
  t.equal(type('count', -3), 'Numeric')
  t.equal(type('active', true), 'Boolean')
  for (const word of ['true', 'false', 'TRUE', 'FALSE', ' true ']) t.equal(type('flag', word), 'Boolean', JSON.stringify(word))
  for (const text of ['True', 'yes', '1', 'pro', '']) t.equal(type('plan', text), 'String', JSON.stringify(text))
})

t.test('values that tell nothing give no type: null, objects, arrays', async (t) => {
  t.equal(type('x', null), null)
  t.equal(type('x', { a: 1 }), null)
  t.equal(type('x', [1, 2]), null)
})

t.test('date-like strings are DateTime under any key: ISO 8601, slashed and day-first dates, RFC 2822', async (t) => {
  for (const value of [
    '2024-05-01',
    '2024-05-01T10:00:00Z',
    '2024-05-01 10:00:00.123+02:00',
    '2024/05/01',
    '01-05-2024',
    '01/05/2024 10:00:00',
    '2024-05-01t10:00:00Z',
    'Tue, 1 Jul 2003 10:52:37 +0200',
    '1 Jul 2003 10:52 GMT',
    ' 2024-05-01 ',
  ]) {
    t.equal(type('whenever', value), 'DateTime', value)
  }
  for (const value of ['2024-05', '2024-05-01T10:00', '05/2024', 'May 1st 2024', '20240501']) t.equal(type('whenever', value), 'String', value)
})

t.test('a recent whole number of seconds is DateTime only under a time-like key', async (t) => {
  const recent = Math.floor(NOW / 1000) - 86_400
  for (const key of ['sent_at', 'createdAt', 'UpdatedAt', 'signup_date', 'time', 'last-at', 'Timestamp']) t.equal(type(key, recent), 'DateTime', key)
  t.equal(type('count', recent), 'Numeric', 'not a time-like key')
  t.equal(type('sent_at', 1_000_000), 'Numeric', 'too old to be a timestamp')
  t.equal(type('sent_at', recent + 0.5), 'Numeric', 'a fraction is no timestamp')
  t.equal(type('sent_at', NOW), 'DateTime', 'milliseconds are past the threshold too, as in PostHog')
})

t.test('keys whose first value misleads are always String: utm_*, $initial_utm_*, $feature/*, flag responses, survey responses', async (t) => {
  t.equal(type('utm_source', 123), 'String')
  t.equal(type('UTM_Campaign', true), 'String', 'in any case')
  t.equal(type('$initial_utm_medium', 5), 'String')
  t.equal(type('$feature/new-checkout', false), 'String')
  t.equal(type('$feature_flag_response', true), 'String')
  t.equal(type('$survey_response', 5), 'String')
  t.equal(type('$survey_response_2', '2024-05-01'), 'String')
  t.equal(type('$feature_flag', 'beta'), 'String', 'only the listed keys are forced')
  t.equal(type('$feature_flag_called_at', 5), 'Numeric')
})
