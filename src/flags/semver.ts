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
const IDENT = /^[0-9A-Za-z-]+$/

function identifiers(s: string, numericNoLeadingZero: boolean): Identifier[] | null {
  const out: Identifier[] = []
  for (const part of s.split('.')) {
    if (!IDENT.test(part)) return null
    if (NUMERIC.test(part)) {
      if (numericNoLeadingZero && part.length > 1 && part[0] === '0') return null
      out.push(numericNoLeadingZero ? Number(part) : part)
    } else out.push(part)
  }
  return out
}

function component(s: string): number | null {
  if (!NUMERIC.test(s) || (s.length > 1 && s[0] === '0')) return null
  const n = Number(s)
  return Number.isSafeInteger(n) ? n : null
}

/** Strict `MAJOR.MINOR.PATCH[-pre][+build]`, as `semver::Version::parse`. */
export function parseVersion(s: string): Version | null {
  const plus = s.indexOf('+')
  const build = plus < 0 ? [] : identifiers(s.slice(plus + 1), false)
  const head = plus < 0 ? s : s.slice(0, plus)
  const dash = head.indexOf('-')
  const pre = dash < 0 ? [] : identifiers(head.slice(dash + 1), true)
  const core = (dash < 0 ? head : head.slice(0, dash)).split('.')
  if (build === null || pre === null || core.length !== 3) return null
  const [major, minor, patch] = core.map(component)
  if (major === null || minor === null || patch === null) return null
  return { major, minor, patch, pre, build }
}

function normalize(s: string): string {
  return (s.startsWith('v') ? s.slice(1) : s).trim()
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

const COMPARATOR = /^(=|>=|<=|>|<|~|\^)?\s*([0-9]+|[xX*])(?:\.([0-9]+|[xX*]))?(?:\.([0-9]+|[xX*]))?(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$/

function parseComparator(text: string): Comparator | null {
  const m = COMPARATOR.exec(text.trim())
  if (m === null) return null
  const parts = [m[2], m[3], m[4]]
  const wild = parts.map((p) => p !== undefined && /^[xX*]$/.test(p))
  const firstWild = wild.indexOf(true)
  if (firstWild >= 0) {
    // after a wildcard only wildcards may follow, and a wildcard takes no operator or pre-release
    if (parts.slice(firstWild).some((p, i) => p !== undefined && !wild[firstWild + i])) return null
    if ((m[1] !== undefined && m[1] !== '=') || m[5] !== undefined) return null
    if (firstWild === 0) return { op: '*', major: -1, minor: null, patch: null, pre: [] }
  }
  const nums = parts.map((p, i) => (p === undefined || wild[i] ? null : component(p)))
  if (nums[0] === null || (parts[1] !== undefined && !wild[1] && nums[1] === null) || (parts[2] !== undefined && !wild[2] && nums[2] === null)) return null
  const pre = m[5] === undefined ? [] : identifiers(m[5], true)
  if (pre === null || (pre.length > 0 && nums[2] === null)) return null
  const op: Op = firstWild > 0 ? '*' : ((m[1] as Op | undefined) ?? '^')
  return { op, major: nums[0], minor: nums[1], patch: nums[2], pre }
}

/** `semver::VersionReq::parse`: comma-separated comparators; a bare version means caret. */
export function parseRequirement(text: string): Comparator[] | null {
  const t = text.trim()
  if (t === '*' || t === 'x' || t === 'X') return [{ op: '*', major: -1, minor: null, patch: null, pre: [] }]
  const out: Comparator[] = []
  for (const part of t.split(',')) {
    const c = parseComparator(part)
    if (c === null) return null
    out.push(c)
  }
  return out
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
      return c.major < 0 || matchesExact(c, v)
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
