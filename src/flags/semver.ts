/**
 * `semver_*` operators as PostHog's Rust service evaluates them: values are canonicalised (leading `v`
 * stripped, trimmed, missing minor/patch padded with 0, leading zeros of numeric components removed) and
 * then parsed and compared by the `semver` crate's rules — pre-releases order below their release, and a
 * pre-release only satisfies a range whose comparator names the same major.minor.patch with a pre-release.
 */

type Identifier = number | string

export interface Version {
  major: number
  minor: number
  patch: number
  pre: Identifier[]
  build: Identifier[]
}

const NUMERIC = /^[0-9]+$/

/** A parse step: what was read and the text after it, or null where the crate returns an error. */
type Step<T> = { value: T; rest: string } | null

/**
 * The crate's `numeric_identifier`: digits without a leading zero. The crate reads them as u64; past 2^53
 * JavaScript numbers are inexact, so such a component fails here (no real version has one).
 */
function numeric(s: string): Step<number> {
  const digits = /^[0-9]+/.exec(s)?.[0]
  if (digits === undefined || (digits.length > 1 && digits[0] === '0')) return null
  const n = Number(digits)
  return Number.isSafeInteger(n) ? { value: n, rest: s.slice(digits.length) } : null
}

/**
 * The crate's `identifier`: dot-separated runs of `[0-9A-Za-z-]` up to the first other character, at least
 * one, none empty; numeric pre-release identifiers may not have a leading zero and compare as numbers.
 */
function identifiers(s: string, pre: boolean): Step<Identifier[]> {
  const run = /^[0-9A-Za-z-]*(?:\.[0-9A-Za-z-]*)*/.exec(s)![0]
  const parts = run.split('.')
  if (parts.some((part) => part === '')) return null
  const value: Identifier[] = []
  for (const part of parts) {
    if (!pre || !NUMERIC.test(part)) value.push(part)
    else if (part.length > 1 && part[0] === '0') return null
    else value.push(Number(part))
  }
  return { value, rest: s.slice(run.length) }
}

/** An optional `-pre` or `+build` part: null for a malformed one, an empty list when absent. */
function suffix(s: string, mark: '-' | '+'): Step<Identifier[]> {
  return s[0] === mark ? identifiers(s.slice(1), mark === '-') : { value: [], rest: s }
}

/** Strict `MAJOR.MINOR.PATCH[-pre][+build]`, as `semver::Version::parse`. */
export function parseVersion(s: string): Version | null {
  const major = numeric(s)
  const minor = major?.rest[0] === '.' ? numeric(major.rest.slice(1)) : null
  const patch = minor?.rest[0] === '.' ? numeric(minor.rest.slice(1)) : null
  const pre = patch && suffix(patch.rest, '-')
  const build = pre && suffix(pre.rest, '+')
  if (!major || !minor || !patch || !pre || !build || build.rest !== '') return null
  return { major: major.value, minor: minor.value, patch: patch.value, pre: pre.value, build: build.value }
}

/** Rust's `str::trim`: Unicode White_Space at both ends (U+0085 included, U+FEFF not, unlike JS's `trim`). */
const RUST_WHITESPACE = '\\t\\n\\v\\f\\r \\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000'
const RUST_TRIM = new RegExp(`^[${RUST_WHITESPACE}]+|[${RUST_WHITESPACE}]+$`, 'g')

function normalize(s: string): string {
  return (s.startsWith('v') ? s.slice(1) : s).replace(RUST_TRIM, '')
}

function stripLeadingZeros(part: string): string {
  if (part === '' || !NUMERIC.test(part)) return part
  const t = part.replace(/^0+/, '')
  return t === '' ? '0' : t
}

/** PostHog's `canonicalize_version_string`: fixes the numeric core only, keeps any `-pre`/`+build` suffix. */
function canonicalize(s: string): string {
  const cut = s.search(/[-+]/)
  const core = cut < 0 ? s : s.slice(0, cut)
  const suffix = cut < 0 ? '' : s.slice(cut)
  const parts = core.split('.').map(stripLeadingZeros)
  while (parts.length < 3) parts.push('0')
  return parts.join('.') + suffix
}

const versions = new Map<string, Version | null>()

/** A property or filter value as a version: its text, normalised and canonicalised (memoised; versions repeat). */
export function toVersion(text: string): Version | null {
  let v = versions.get(text)
  if (v === undefined) {
    v = parseVersion(canonicalize(normalize(text)))
    if (versions.size >= 10_000) versions.clear()
    versions.set(text, v)
  }
  return v
}

function compareIdentifiers(a: Identifier[], b: Identifier[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const x = a[i]
    const y = b[i]
    if (x === y) continue
    if (typeof x === 'number' && typeof y === 'number') return x - y
    if (typeof x === 'number') return -1
    if (typeof y === 'number') return 1
    return x < y ? -1 : 1
  }
  return a.length - b.length
}

/** The empty pre-release sorts after every non-empty one: 1.0.0-alpha < 1.0.0. */
function comparePre(a: Identifier[], b: Identifier[]): number {
  if (a.length === 0 || b.length === 0) return b.length - a.length
  return compareIdentifiers(a, b)
}

function compareBuildIds(a: Identifier[], b: Identifier[]): number {
  if (a.length === 0 || b.length === 0) return a.length - b.length
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const x = String(a[i])
    const y = String(b[i])
    if (x === y) continue
    const xn = NUMERIC.test(x)
    const yn = NUMERIC.test(y)
    if (xn && yn) return Number(x) - Number(y) || x.length - y.length
    if (xn !== yn) return xn ? -1 : 1
    return x < y ? -1 : 1
  }
  return a.length - b.length
}

/** Total order of `semver::Version`, build metadata included (it also takes part in equality). */
export function compareVersions(a: Version, b: Version): number {
  return a.major - b.major || a.minor - b.minor || a.patch - b.patch || comparePre(a.pre, b.pre) || compareBuildIds(a.build, b.build)
}

// ---- requirements -----------------------------------------------------------------------------------

type Op = '=' | '>' | '>=' | '<' | '<=' | '~' | '^' | '*'

interface Comparator {
  op: Op
  major: number
  minor: number | null
  patch: number | null
  pre: Identifier[]
}

const STAR: Comparator = { op: '*', major: -1, minor: null, patch: null, pre: [] }
const OPERATORS = ['>=', '<=', '=', '>', '<', '~', '^'] as const
const WILDCARD = /^[*xX]/
const MAX_COMPARATORS = 32
const skipSpaces = (s: string): string => s.replace(/^ +/, '')

/**
 * The crate's `comparator`: an operator (caret by default), a major, then a minor and patch that may be
 * wildcards (`*`, `x`, `X`; only a default operator turns into the wildcard one, so `>1.*` is `>1`), and
 * a `-pre` and `+build` only after a patch. Only spaces are skipped, not other whitespace.
 */
function parseComparator(input: string): Step<Comparator> {
  const written = OPERATORS.find((o) => input.startsWith(o))
  let op: Op = written ?? '^'
  const major = numeric(skipSpaces(input.slice(written?.length ?? 0)))
  if (major === null) return null
  let rest = major.rest
  const part = (afterWildcard: boolean): Step<number | null> => {
    if (rest[0] !== '.') return { value: null, rest }
    const s = rest.slice(1)
    if (WILDCARD.test(s)) {
      if (written === undefined) op = '*'
      return { value: null, rest: s.slice(1) }
    }
    return afterWildcard ? null : numeric(s)
  }
  const hadMinor = rest[0] === '.'
  const minor = part(false)
  if (minor === null) return null
  rest = minor.rest
  const patch = part(hadMinor && minor.value === null)
  if (patch === null) return null
  const comparator = { op, major: major.value, minor: minor.value, patch: patch.value, pre: [] as Identifier[] }
  if (patch.value === null) return { value: comparator, rest: skipSpaces(patch.rest) }
  const pre = suffix(patch.rest, '-')
  const build = pre && suffix(pre.rest, '+')
  if (!pre || !build) return null
  return { value: { ...comparator, pre: pre.value }, rest: skipSpaces(build.rest) }
}

/** `semver::VersionReq::from_str`: a lone wildcard, or up to 32 comma-separated comparators. */
export function parseRequirement(text: string): Comparator[] | null {
  let rest = skipSpaces(text)
  if (WILDCARD.test(rest)) return skipSpaces(rest.slice(1)) === '' ? [STAR] : null
  const out: Comparator[] = []
  for (;;) {
    const comparator = parseComparator(rest)
    if (comparator === null) return null
    out.push(comparator.value)
    rest = comparator.rest
    if (rest === '') return out
    if (rest[0] !== ',' || out.length === MAX_COMPARATORS) return null
    rest = skipSpaces(rest.slice(1))
  }
}

function matchesExact(c: Comparator, v: Version): boolean {
  return v.major === c.major && (c.minor === null || v.minor === c.minor) && (c.patch === null || v.patch === c.patch) && comparePre(v.pre, c.pre) === 0
}

function matchesGreater(c: Comparator, v: Version): boolean {
  if (v.major !== c.major) return v.major > c.major
  if (c.minor === null) return false
  if (v.minor !== c.minor) return v.minor > c.minor
  if (c.patch === null) return false
  if (v.patch !== c.patch) return v.patch > c.patch
  return comparePre(v.pre, c.pre) > 0
}

function matchesLess(c: Comparator, v: Version): boolean {
  if (v.major !== c.major) return v.major < c.major
  if (c.minor === null) return false
  if (v.minor !== c.minor) return v.minor < c.minor
  if (c.patch === null) return false
  if (v.patch !== c.patch) return v.patch < c.patch
  return comparePre(v.pre, c.pre) < 0
}

function matchesTilde(c: Comparator, v: Version): boolean {
  if (v.major !== c.major) return false
  if (c.minor !== null && v.minor !== c.minor) return false
  if (c.patch !== null && v.patch !== c.patch) return v.patch > c.patch
  return comparePre(v.pre, c.pre) >= 0
}

function matchesCaret(c: Comparator, v: Version): boolean {
  if (v.major !== c.major) return false
  if (c.minor === null) return true
  if (c.patch === null) return c.major > 0 ? v.minor >= c.minor : v.minor === c.minor
  if (c.major > 0) {
    if (v.minor !== c.minor) return v.minor > c.minor
    if (v.patch !== c.patch) return v.patch > c.patch
  } else if (c.minor > 0) {
    if (v.minor !== c.minor) return false
    if (v.patch !== c.patch) return v.patch > c.patch
  } else if (v.minor !== c.minor || v.patch !== c.patch) return false
  return comparePre(v.pre, c.pre) >= 0
}

function matchesComparator(c: Comparator, v: Version): boolean {
  switch (c.op) {
    case '=':
      return matchesExact(c, v)
    case '>':
      return matchesGreater(c, v)
    case '>=':
      return matchesExact(c, v) || matchesGreater(c, v)
    case '<':
      return matchesLess(c, v)
    case '<=':
      return matchesExact(c, v) || matchesLess(c, v)
    case '~':
      return matchesTilde(c, v)
    case '^':
      return matchesCaret(c, v)
    case '*':
      return c === STAR || matchesExact(c, v)
  }
}

export function matchesRequirement(req: Comparator[], v: Version): boolean {
  if (!req.every((c) => matchesComparator(c, v))) return false
  if (v.pre.length === 0) return true
  return req.some((c) => c.major === v.major && c.minor === v.minor && c.patch === v.patch && c.pre.length > 0)
}

/** The requirement behind `semver_tilde`, `semver_caret` and `semver_wildcard` for a filter value's text. */
export function rangeRequirement(operator: 'semver_tilde' | 'semver_caret' | 'semver_wildcard', text: string): Comparator[] | null {
  const normalized = normalize(text)
  if (operator === 'semver_tilde') return parseRequirement('~' + canonicalize(normalized))
  if (operator === 'semver_caret') return parseRequirement('^' + canonicalize(normalized))
  return parseRequirement(normalized.split('.').map(stripLeadingZeros).join('.').replaceAll('*', 'x'))
}
