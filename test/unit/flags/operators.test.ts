import t, { type Test } from 'tap'
import { compileOperator, type Operator } from '../../../src/flags/operators.js'

const MISSING = Symbol('missing')
type Row = [operator: Operator, filterValue: unknown, override: unknown, expected: boolean]

const NOW = Date.parse('2024-06-01T12:00:00Z')

/** Runs rows of `[operator, filter value, person value (MISSING = key absent), expected]`. */
function table(t: Test, rows: Row[]): void {
  for (const [op, value, override, expected] of rows) {
    const got = compileOperator(op, value, 'UTC')(override === MISSING ? undefined : override, NOW)
    t.equal(got, expected, `${op} ${JSON.stringify(value)} on ${override === MISSING ? '(missing)' : JSON.stringify(override)}`)
  }
}

t.test('exact and is_not', async (t) => {
  t.test('compares text forms case-insensitively, arrays by membership', async (t) =>
    table(t, [
      ['exact', 'value', 'value', true],
      ['exact', 'value', 'value2', false],
      ['exact', 'value', '', false],
      ['exact', 'value', null, false],
      ['exact', 'VaLuE', 'value', true],
      ['exact', ['value1', 'value2', 'value3'], 'value2', true],
      ['exact', ['value1', 'value2', 'value3'], 'value4', false],
      ['exact', ['US', 'CA', 'Uk'], 'uk', true],
      ['exact', ['US', 'CA', 'Uk'], 'de', false],
      ['exact', 1, '1', true],
      ['exact', '1.5', 1.5, true],
      ['exact', 'null', null, true],
      ['exact', 'value', MISSING, false],
    ]))

  t.test('compares truthiness when the filter value is boolean-like', async (t) =>
    table(t, [
      ['exact', true, true, true],
      ['exact', true, 'TRUE', true],
      ['exact', 'true', true, true],
      ['exact', 'False', false, true],
      ['exact', ['true'], 'true', true],
      ['exact', false, 'anything', true],
      ['exact', true, 1, false],
      ['exact', [], 'us', false],
    ]))

  t.test('is_not is the negation, true for a missing key', async (t) =>
    table(t, [
      ['is_not', 'value', 'value2', true],
      ['is_not', 'value', '', true],
      ['is_not', 'value', null, true],
      ['is_not', 'value', 'VALUE', false],
      ['is_not', 'null', null, false],
      ['is_not', 'null', 'non', true],
      ['is_not', ['value1', 'value2', 'value3'], 'value4', true],
      ['is_not', ['value1', 'value2', 'value3'], 'value2', false],
      ['is_not', 'value', MISSING, true],
    ]))

  t.test('a null filter value matches nothing, even for is_not', async (t) =>
    table(t, [
      ['exact', null, null, false],
      ['is_not', null, 'x', false],
      ['icontains', null, 'x', false],
      ['not_icontains', null, MISSING, false],
    ]))
})

t.test('is_set and is_not_set', async (t) =>
  table(t, [
    ['is_set', 'value', 'value', true],
    ['is_set', 'value', '', true],
    ['is_set', null, null, true],
    ['is_set', 'value', MISSING, false],
    ['is_not_set', null, MISSING, true],
    ['is_not_set', null, 'value', false],
    ['is_not_set', null, null, false],
  ]))

t.test('text operators', async (t) => {
  t.test('icontains is an ASCII-case-insensitive substring of the text form', async (t) =>
    table(t, [
      ['icontains', 'valUe', 'value', true],
      ['icontains', 'valUe', '343tfvalue5', true],
      ['icontains', 'valUe', 'vaLue4', true],
      ['icontains', 'valUe', 'Alakazam', false],
      ['icontains', 'valUe', 123, false],
      ['icontains', '3', 323, true],
      ['icontains', '3', 'three', false],
      ['icontains', 'nu', null, true],
      ['icontains', 'É', 'é', false],
      ['icontains', 'x', MISSING, false],
      ['not_icontains', 'valUe', 'Alakazam', true],
      ['not_icontains', 'valUe', 'VALUE', false],
      ['not_icontains', 'x', MISSING, true],
    ]))

  t.test('starts_with and ends_with, with negations true for a missing key', async (t) =>
    table(t, [
      ['starts_with', 'Val', 'value', true],
      ['starts_with', 'Val', 'VALUE', true],
      ['starts_with', 'Val', 'prevalue', false],
      ['starts_with', '3', 323, true],
      ['starts_with', '3', 123, false],
      ['not_starts_with', 'Val', 'value', false],
      ['not_starts_with', 'Val', 'Alakazam', true],
      ['starts_with', 'Val', MISSING, false],
      ['not_starts_with', 'Val', MISSING, true],
      ['ends_with', 'Lue', 'VALUE', true],
      ['ends_with', 'Lue', 'valueish', false],
      ['ends_with', '3', 323, true],
      ['not_ends_with', 'Lue', 'Alakazam', true],
      ['not_ends_with', 'Lue', MISSING, true],
    ]))

  t.test('icontains_multi matches any of the values', async (t) =>
    table(t, [
      ['icontains_multi', ['foo', 'BAR'], 'xbarx', true],
      ['icontains_multi', ['foo', 'bar'], 'baz', false],
      ['icontains_multi', 'foo', 'FOOD', true],
      ['not_icontains_multi', ['foo', 'bar'], 'baz', true],
      ['not_icontains_multi', ['foo'], MISSING, true],
    ]))
})

t.test('regex and not_regex', async (t) =>
  table(t, [
    ['regex', '\\.com$', 'value.com', true],
    ['regex', '\\.com$', 'value2.com', true],
    ['regex', '\\.com$', '.com343tfvalue5', false],
    ['regex', '\\.com$', 'Alakazam', false],
    ['regex', '\\.com$', 123, false],
    ['regex', '3', 323, true],
    ['regex', '3', 'three', false],
    ['regex', '?*', 'value', false],
    ['not_regex', '?*', 'value', false],
    ['regex', 4, '4', true],
    ['regex', 4, 4, true],
    ['regex', 4, 'value', false],
    ['regex', 'Nu', null, false],
    ['regex', '\\.com$', MISSING, false],
    ['not_regex', '\\.com$', MISSING, true],
    ['not_regex', '?*', MISSING, true],
    ['not_regex', '^admin@', 'user@example.com', true],
    ['not_regex', '^user@.*\\.com$', 'user@example.com', false],
    ['regex', '(a+)+$', 'aaaaaaaaaaaaaaaaaaaaaaab', false],
  ]))

t.test('numeric comparisons parse both sides as numbers', async (t) =>
  table(t, [
    ['gt', 1, 2, true],
    ['gt', 1, 0, false],
    ['gt', 1, -1, false],
    ['gt', 1, '23', true],
    ['lt', 1, 0, true],
    ['lt', 1, 1, false],
    ['lt', 1, '1', false],
    ['lt', 1, '3', false],
    ['gte', 1, 1, true],
    ['gte', 1, '3', true],
    ['gte', 1, 0, false],
    ['lte', '43', '41', true],
    ['lte', '43', '43', true],
    ['lte', '43', 42, true],
    ['lte', '43', '44', false],
    ['lte', '43', 44, false],
    ['lt', '30', '29', true],
    ['lt', '30', 100, false],
    ['lt', '30', '100', false],
    ['gt', '1', 'abc', false],
    ['gt', 'abc', 2, false],
    ['gt', '1', ' 2', false],
    ['gt', '1', '1e3', true],
    ['gt', '1', 'inf', true],
    ['gt', '1', null, false],
    ['gt', '1', true, false],
    ['lt', '1', MISSING, false],
  ]))

t.test('between is inclusive, not_between its complement', async (t) =>
  table(t, [
    ['between', [70000, 80000], 70000, true],
    ['between', [70000, 80000], 80000, true],
    ['between', [70000, 80000], '75000', true],
    ['between', [70000, 80000], 69999, false],
    ['not_between', [70000, 80000], 80001, true],
    ['not_between', [70000, 80000], 75000, false],
    ['between', ['70000', '80000'], 75000, true],
    ['between', [70000, 80000], MISSING, false],
    ['not_between', [70000, 80000], MISSING, true],
    ['between', [80000, 70000], 75000, false],
    ['not_between', [80000, 70000], 75000, false],
    ['between', [70000], 75000, false],
    ['not_between', [70000, 'NaN'], 75000, false],
    ['between', [0, 10], 'NaN', false],
    ['not_between', [0, 10], 'NaN', false],
  ]))

t.test('in, not_in and flag_evaluates_to never match as property operators', async (t) =>
  table(t, [
    ['in', 1, 1, false],
    ['not_in', 1, 2, false],
    ['flag_evaluates_to', true, true, false],
  ]))

t.test('date operators', async (t) => {
  t.test('compare absolute dates as instants', async (t) =>
    table(t, [
      ['is_date_before', '2022-05-01', '2022-04-30', true],
      ['is_date_before', '2022-05-01', '2022-05-30', false],
      ['is_date_before', '2022-04-05 12:34:12 +01:00', '2022-04-05 12:34:11 +01:00', true],
      ['is_date_before', '2022-04-05 12:34:12 +01:00', '2022-04-05 11:34:13 +00:00', false],
      ['is_date_after', '2023-06-04', '2025-01-24T23:20:24.865148+00:00', true],
      ['is_date_after', '2023-06-04', '2023-01-24T23:20:24.865148+00:00', false],
      ['is_date_exact', '2024-03-21T00:00:00Z', '2024-03-21T00:00:00Z', true],
      ['is_date_exact', '2024-03-21T00:00:00Z', '2024-03-22T00:00:00Z', false],
      ['is_date_exact', '2024-03-21T00:00:00Z', 1710979200, true],
      ['is_date_exact', '2024-03-21T00:00:00Z', '1710979200', true],
      ['is_date_exact', '2024-03-21T00:00:00Z', 1710979200.0, true],
      ['is_date_exact', '2024-03-21T00:00:00Z', 'invalid-date', false],
      ['is_date_after', '2027-03-21T00:00:00Z', 1836277747, true],
      ['is_date_after', '2027-03-21T00:00:00Z', '1836277747', true],
      ['is_date_after', '2027-03-21T00:00:00Z', 1747793088, false],
      ['is_date_after', '2027-03-21T00:00:00Z', '1747793088', false],
      ['is_date_before', '2021-01-01', MISSING, false],
      ['is_date_before', '2021-01-01', null, false],
      ['is_date_before', 20210101, '2020-01-01', false],
    ]))

  t.test('compare to relative dates anchored at now', async (t) =>
    table(t, [
      ['is_date_before', '-3d', '2024-05-28T12:00:00Z', true],
      ['is_date_before', '-3d', '2024-05-30T12:00:00Z', false],
      ['is_date_before', '-3d', Date.parse('2024-05-28T12:00:00Z') / 1000, true],
      ['is_date_after', '3d', '2024-05-30T12:00:00Z', true],
      ['is_date_before', '-3d', 'invalid-date', false],
    ]))
})

t.test('semver operators', async (t) => {
  t.test('compare versions with semver ordering', async (t) =>
    table(t, [
      ['semver_gt', '1.0.0', '1.0.1', true],
      ['semver_gt', '1.0.0', '2.0.0', true],
      ['semver_gt', '1.0.0', '1.0.0', false],
      ['semver_gt', '1.0.0', '0.9.9', false],
      ['semver_gte', '0.0.0', '0.0.0', true],
      ['semver_gte', '1.0.0', '0.9.9', false],
      ['semver_lt', '2.0.0', '1.9.9', true],
      ['semver_lt', '2.0.0', '2.0.1', false],
      ['semver_lte', '2.0.0', '2.0.0', true],
      ['semver_eq', '1.2.3', '1.2.3', true],
      ['semver_eq', '1.2.3', '1.2.4', false],
      ['semver_neq', '1.2.3', '1.2.4', true],
      ['semver_neq', '1.2.3', '1.2.3', false],
      ['semver_gt', '1.0.0', 'v1.0.1', true],
      ['semver_gt', 'v1.0.0', '1.0.1', true],
      ['semver_gt', '1.0.0', '1.0.0-alpha.1', false],
      ['semver_gt', '1.0.0', '1.0.1-beta.2', true],
      ['semver_lt', '1.0.0-alpha.1', '1.0.0-alpha.0', true],
      ['semver_gt', '1.0.0', ' 1.2.3', true],
      ['semver_gt', '1.0.0', '1.2.3 ', true],
      ['semver_gt', '1.0.0', 'not-a-version', false],
      ['semver_gt', '1.0.0', '1.2.abc', false],
      ['semver_gt', '1.0.0', '1.2.3.4', false],
      ['semver_gt', '1.0.0', '1..2.3', false],
      ['semver_gt', '1.0.0', '.1.2.3', false],
      ['semver_gt', '1.0.0', '1.-2.3', false],
      ['semver_gt', 'invalid-semver', '1.0.0', false],
      ['semver_gt', '1.0.0', '01.02.03', true],
      ['semver_gt', '1.0.0', '3.07', true],
      ['semver_gt', '1.0.0', '3.7', true],
      ['semver_gte', '3.08', '3.10', true],
      ['semver_gte', '3.08', '3.07', false],
      ['semver_gt', '3.9', '3.10', true],
      ['semver_gt', '1.0.0', MISSING, false],
    ]))

  t.test('ranges: tilde, caret and wildcard', async (t) =>
    table(t, [
      ['semver_tilde', '1.2.3', '1.2.9', true],
      ['semver_tilde', '1.2.3', '1.3.0', false],
      ['semver_tilde', '1.2.3', '1.2.2', false],
      ['semver_tilde', '1.2', '1.2.0', true],
      ['semver_caret', '1.2.3', '1.9.0', true],
      ['semver_caret', '1.2.3', '2.0.0', false],
      ['semver_caret', '0.2.3', '0.2.9', true],
      ['semver_caret', '0.2.3', '0.3.0', false],
      ['semver_caret', '0.0.3', '0.0.4', false],
      ['semver_caret', '1.2.3', '1.5.0-beta', false],
      ['semver_caret', '1.2.3-beta.1', '1.2.3-beta.2', true],
      ['semver_wildcard', '1.2.*', '1.2.7', true],
      ['semver_wildcard', '1.2.*', '1.3.0', false],
      ['semver_wildcard', '1.*', '1.9.9', true],
      ['semver_wildcard', '1.*.*', '2.0.0', false],
      ['semver_wildcard', '*', '7.0.0', true],
      ['semver_wildcard', '3.08.*', '3.8.1', true],
      ['semver_wildcard', '1.*.3', '1.2.3', false],
      ['semver_tilde', 'not-a-version', '1.0.0', false],
      ['semver_caret', '1.2.3', MISSING, false],
    ]))

  // The requirement is read as semver's VersionReq::from_str reads it (1.0.27); each row differed before.
  t.test('requirements parse as the semver crate parses them', async (t) =>
    table(t, [
      // a lone wildcard is the only one: `*.*` turns into `x.x`, which the crate refuses
      ['semver_wildcard', '*.*', '1.2.3', false],
      ['semver_wildcard', 'x.x.x', '1.2.3', false],
      // a written operator stays: a wildcard after it only leaves the part out
      ['semver_wildcard', '>1.*', '2.0.0', true],
      ['semver_wildcard', '>1.*', '1.9.0', false],
      ['semver_wildcard', '<2.x', '1.5.0', true],
      ['semver_tilde', '1.2.x', '1.2.5', true],
      ['semver_tilde', '1.2.*', '1.3.0', false],
      ['semver_caret', '1.2.*', '1.9.5', true],
      // build metadata only after a patch; only spaces between comparators; at most 32 of them
      ['semver_wildcard', '1.2+b', '1.2.0', false],
      ['semver_wildcard', '>=1.0.0, <2', '1.5.0', true],
      ['semver_wildcard', '>=1.0.0,\t<2', '1.5.0', false],
      ['semver_wildcard', Array(32).fill('>=1.0.0').join(','), '1.0.0', true],
      ['semver_wildcard', Array(33).fill('>=1.0.0').join(','), '1.0.0', false],
      // Rust's trim: U+0085 is whitespace, U+FEFF is not
      ['semver_tilde', '1.2.3\u0085', '1.2.3', true],
      ['semver_tilde', '\ufeff1.2.3', '1.2.3', false],
      ['semver_eq', '1.2.3', '1.2.3\u0085', true],
    ]))
})
