/**
 * Property operators with the semantics of PostHog's Rust `match_property` (full-properties mode). Each
 * filter is compiled once into a test of the looked-up value: `undefined` means the key is missing, JSON
 * `null` is a present value whose text is "null". Errors in PostHog (unparseable numbers, invalid patterns,
 * bad semver) are plain non-matches here, because the service turns every such error into `false`.
 */
import { compareInstants, parseDateString, propertyDate, type Instant } from './dates.js'
import { compileRegex } from './regex/index.js'
import { compareVersions, matchesRequirement, rangeRequirement, toVersion, type Version } from './semver.js'
import { asciiLower, toF64, valueText } from './values.js'

/** Tests a looked-up value (undefined = missing key) at the request's `now`. */
export type ValueTest = (value: unknown, now: number) => boolean

export const PROPERTY_OPERATORS = [
  'exact', 'is_not', 'is_set', 'is_not_set', 'icontains', 'not_icontains', 'icontains_multi', 'not_icontains_multi',
  'regex', 'not_regex', 'gt', 'gte', 'lt', 'lte', 'between', 'not_between', 'starts_with', 'not_starts_with',
  'ends_with', 'not_ends_with', 'semver_eq', 'semver_neq', 'semver_gt', 'semver_gte', 'semver_lt', 'semver_lte',
  'semver_tilde', 'semver_caret', 'semver_wildcard', 'is_date_exact', 'is_date_after', 'is_date_before',
] as const
/** Valid on cohort and flag filters only; as a property filter they never match. */
export const OTHER_OPERATORS = ['in', 'not_in', 'flag_evaluates_to'] as const
export type Operator = (typeof PROPERTY_OPERATORS)[number] | (typeof OTHER_OPERATORS)[number]

const KNOWN = new Set<string>([...PROPERTY_OPERATORS, ...OTHER_OPERATORS])
export const isOperator = (op: string): op is Operator => KNOWN.has(op)

/** The operators whose test reads `now` (dateTest): the same value can pass at one instant and fail at another. */
const READS_NOW = new Set<string>(['is_date_exact', 'is_date_after', 'is_date_before'])
export const readsNow = (op: string): boolean => READS_NOW.has(op)

const never: ValueTest = () => false
const missingTrue = (test: (v: unknown) => boolean): ValueTest => (v) => (v === undefined ? true : test(v))
const missingFalse = (test: (v: unknown) => boolean): ValueTest => (v) => (v === undefined ? false : test(v))

function isBoolish(v: unknown): boolean {
  if (typeof v === 'boolean') return true
  if (typeof v === 'string') {
    const l = v.toLowerCase()
    return l === 'true' || l === 'false'
  }
  return Array.isArray(v) && v.every(isBoolish)
}

function isTruthy(v: unknown): boolean {
  if (typeof v === 'boolean') return v
  if (typeof v === 'string') return v.toLowerCase() === 'true'
  return Array.isArray(v) && v.every(isTruthy)
}

/** `exact`: booleans (or "true"/"false" strings, or arrays of them) compare truthiness; arrays are memberships. */
function exactTest(value: unknown): (v: unknown) => boolean {
  if (isBoolish(value)) {
    const want = isTruthy(value)
    return (v) => isTruthy(v) === want
  }
  if (Array.isArray(value)) {
    const members = new Set(value.map((x) => valueText(x).toLowerCase()))
    return (v) => members.has(valueText(v).toLowerCase())
  }
  const target = valueText(value).toLowerCase()
  return (v) => valueText(v).toLowerCase() === target
}

type TextOp = 'contains' | 'starts' | 'ends'

function textTest(value: unknown, op: TextOp): (v: unknown) => boolean {
  const needle = asciiLower(valueText(value))
  if (op === 'contains') return (v) => asciiLower(valueText(v)).includes(needle)
  if (op === 'starts') return (v) => asciiLower(valueText(v)).startsWith(needle)
  return (v) => asciiLower(valueText(v)).endsWith(needle)
}

function numericTest(operator: 'gt' | 'gte' | 'lt' | 'lte', value: unknown): ValueTest {
  const rhs = toF64(value)
  if (rhs === null) return never
  return missingFalse((v) => {
    const lhs = toF64(v)
    if (lhs === null) return false
    return operator === 'gt' ? lhs > rhs : operator === 'gte' ? lhs >= rhs : operator === 'lt' ? lhs < rhs : lhs <= rhs
  })
}

/** `between` is inclusive on both ends; `not_between` is its complement, true for a missing key. */
function betweenTest(negated: boolean, value: unknown): ValueTest {
  if (!Array.isArray(value) || value.length !== 2) return missingTrueIf(negated)
  const low = toF64(value[0])
  const high = toF64(value[1])
  if (low === null || high === null || Number.isNaN(low) || Number.isNaN(high) || low > high) return missingTrueIf(negated)
  return (v) => {
    if (v === undefined) return negated
    const x = toF64(v)
    if (x === null || Number.isNaN(x)) return false
    return (x >= low && x <= high) !== negated
  }
}

/** A malformed filter value is an error in PostHog — false — except that a missing key is checked first. */
function missingTrueIf(negated: boolean): ValueTest {
  return (v) => v === undefined && negated
}

function semverTest(operator: string, value: unknown): ValueTest {
  const text = valueText(value)
  if (operator === 'semver_tilde' || operator === 'semver_caret' || operator === 'semver_wildcard') {
    const req = rangeRequirement(operator, text)
    if (req === null) return never
    return missingFalse((v) => {
      const ver = toVersion(valueText(v))
      return ver !== null && matchesRequirement(req, ver)
    })
  }
  const rhs = toVersion(text)
  if (rhs === null) return never
  const cmp = (lhs: Version): boolean => {
    const c = compareVersions(lhs, rhs)
    switch (operator) {
      case 'semver_gt':
        return c > 0
      case 'semver_gte':
        return c >= 0
      case 'semver_lt':
        return c < 0
      case 'semver_lte':
        return c <= 0
      case 'semver_eq':
        return c === 0
      default:
        return c !== 0
    }
  }
  return missingFalse((v) => {
    const ver = toVersion(valueText(v))
    return ver !== null && cmp(ver)
  })
}

/** The filter side of a date operator must be a string; absolute dates are read once, relative ones per `now`. */
function dateTest(operator: 'is_date_exact' | 'is_date_after' | 'is_date_before', value: unknown, tz: string): ValueTest {
  if (typeof value !== 'string') return never
  const fixed = parseDateString(value, tz, 0)
  const filterDate = fixed.usesNow ? (now: number) => parseDateString(value, tz, now).instant : () => fixed.instant
  const cmp = (a: Instant, b: Instant): boolean => {
    const c = compareInstants(a, b)
    return operator === 'is_date_before' ? c < 0 : operator === 'is_date_after' ? c > 0 : c === 0
  }
  return (v, now) => {
    if (v === undefined) return false
    const left = propertyDate(v, tz, now)
    if (left === null) return false
    const right = filterDate(now)
    return right !== null && cmp(left, right)
  }
}

function regexTest(negated: boolean, value: unknown): ValueTest {
  const re = compileRegex(valueText(value))
  if (re === null) return (v) => v === undefined && negated
  return (v) => {
    if (v === undefined) return negated
    const found = re.test(valueText(v))
    return found === null ? false : found !== negated
  }
}

/**
 * The test for one operator and filter value. A filter value of null or absent (Rust's `None`) matches
 * nothing except `is_set` / `is_not_set`, which ignore the value.
 */
export function compileOperator(operator: Operator, value: unknown, tz: string): ValueTest {
  if (operator === 'is_set') return (v) => v !== undefined
  if (operator === 'is_not_set') return (v) => v === undefined
  if (value === null || value === undefined) return never
  switch (operator) {
    case 'exact':
      return missingFalse(exactTest(value))
    case 'is_not': {
      const eq = exactTest(value)
      return missingTrue((v) => !eq(v))
    }
    case 'icontains':
      return missingFalse(textTest(value, 'contains'))
    case 'not_icontains': {
      const t = textTest(value, 'contains')
      return missingTrue((v) => !t(v))
    }
    case 'starts_with':
      return missingFalse(textTest(value, 'starts'))
    case 'not_starts_with': {
      const t = textTest(value, 'starts')
      return missingTrue((v) => !t(v))
    }
    case 'ends_with':
      return missingFalse(textTest(value, 'ends'))
    case 'not_ends_with': {
      const t = textTest(value, 'ends')
      return missingTrue((v) => !t(v))
    }
    case 'icontains_multi':
    case 'not_icontains_multi': {
      const tests = (Array.isArray(value) ? value : [value]).map((x) => textTest(x, 'contains'))
      const any = (v: unknown): boolean => tests.some((t) => t(v))
      return operator === 'icontains_multi' ? missingFalse(any) : missingTrue((v) => !any(v))
    }
    case 'regex':
    case 'not_regex':
      return regexTest(operator === 'not_regex', value)
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte':
      return numericTest(operator, value)
    case 'between':
    case 'not_between':
      return betweenTest(operator === 'not_between', value)
    case 'is_date_exact':
    case 'is_date_after':
    case 'is_date_before':
      return dateTest(operator, value, tz)
    case 'in':
    case 'not_in':
    case 'flag_evaluates_to':
      return never
    default:
      return semverTest(operator, value)
  }
}
