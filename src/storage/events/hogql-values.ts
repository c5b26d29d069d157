/**
 * What HogQL's functions compute on values (hogql-math.ts evaluates the expressions with them): ClickHouse's own
 * readings of numbers and texts, written once here for the evaluation on the SQLite store and the matcher, and
 * mirrored by clickhouse-hogql.ts's SQL.
 */
import { isUtf8 } from 'node:buffer'
import { compareText } from './experiment-aggregate.js'
import type { HogqlFunction, HogqlValue } from './hogql-math.js'
import { textNumber } from './numbers.js'

/**
 * A byte of no UTF-8 character in a text, as substring() leaves one where it cuts a character: U+DC80–U+DCFF, a
 * lone surrogate, which no UTF-8 text holds (Python's surrogateescape). ClickHouse keeps such bytes; so does the
 * evaluation here, byte for byte, with textBytes and bytesText.
 */
const LOOSE_BYTE = /[\uDC80-\uDCFF]/u
const LOOSE_BYTES = /[\uDC80-\uDCFF]/gu

/** Whether a text holds bytes of no character. */
export function hasLooseBytes(text: string): boolean {
  return LOOSE_BYTE.test(text)
}

/** A text's bytes as ClickHouse holds them: UTF-8, and each loose byte (LOOSE_BYTE) as itself. */
export function textBytes(text: string): Buffer {
  if (!hasLooseBytes(text)) return Buffer.from(text)
  const parts = text.split(/([\uDC80-\uDCFF])/u)
  return Buffer.concat(parts.map((part, i) => (i % 2 === 1 ? Buffer.of(part.charCodeAt(0) - 0xdc00) : Buffer.from(part))))
}

/** The bytes of the UTF-8 character `bytes` hold at `at` (Unicode's table 3-7), 0 where they hold none there. */
function characterAt(bytes: Buffer, at: number): number {
  const lead = bytes[at]
  if (lead < 0x80) return 1
  const [size, low, high] = lead >= 0xc2 && lead <= 0xdf ? [2, 0x80, 0xbf] : lead === 0xe0 ? [3, 0xa0, 0xbf] : lead === 0xed ? [3, 0x80, 0x9f] : lead >= 0xe1 && lead <= 0xef ? [3, 0x80, 0xbf] : lead === 0xf0 ? [4, 0x90, 0xbf] : lead >= 0xf1 && lead <= 0xf3 ? [4, 0x80, 0xbf] : lead === 0xf4 ? [4, 0x80, 0x8f] : [0, 0, 0]
  if (size === 0 || at + size > bytes.length || bytes[at + 1] < low || bytes[at + 1] > high) return 0
  for (let i = 2; i < size; i++) if (bytes[at + i] < 0x80 || bytes[at + i] > 0xbf) return 0
  return size
}

/** The text of bytes (textBytes's inverse): their UTF-8 characters, and each other byte loose. */
export function bytesText(bytes: Buffer): string {
  if (isUtf8(bytes)) return bytes.toString('utf8')
  let text = ''
  for (let at = 0; at < bytes.length; ) {
    const size = characterAt(bytes, at)
    text += size === 0 ? String.fromCharCode(0xdc00 + bytes[at]) : bytes.toString('utf8', at, at + size)
    at += size || 1
  }
  return text
}

/** A text put together from others (concat, a replacement): loose bytes that now make a character read as one. */
export function joinedText(text: string): string {
  return hasLooseBytes(text) ? bytesText(textBytes(text)) : text
}

/** Texts in ClickHouse's order, of their bytes. */
export function compareHogqlText(a: string, b: string): number {
  return hasLooseBytes(a) || hasLooseBytes(b) ? Buffer.compare(textBytes(a), textBytes(b)) : compareText(a, b)
}

/** A text as a ClickHouse literal, its loose bytes as `\\xHH`. */
export function hogqlTextSql(text: string): string {
  return `'${text.replace(/\\|'/g, (c) => `\\${c}`).replace(LOOSE_BYTES, (c) => `\\x${(c.charCodeAt(0) - 0xdc00).toString(16).toUpperCase()}`)}'`
}

/** The largest offset or length substring() takes here: its bounds' arithmetic stays exact in doubles. */
export const SUBSTRING_LIMIT = 1e15

/**
 * ClickHouse's `substring(s, offset, length)` (GatherUtils' slices, current servers), on bytes: from byte `offset`
 * (1-based; counted from the end when negative; none at 0), `length` bytes at most, or to |length| bytes before
 * the end when negative; an offset before the start counts its bytes there toward the length.
 */
export function hogqlSubstring(text: string, offset: number, length: number): string {
  if (offset === 0) return ''
  const bytes = textBytes(text)
  const n = bytes.length
  const start = offset > 0 ? offset - 1 : n + offset
  const end = Math.min(length < 0 ? n + length : start + length, n)
  return Math.max(start, 0) >= end ? '' : bytesText(bytes.subarray(Math.max(start, 0), end))
}

/** HogQL's toFloat of a value: a number as it is, a text's finite number (numbers.ts), else null. */
export function hogqlToFloat(value: HogqlValue): number | null {
  if (value === null) return null
  if (typeof value === 'number') return value
  const n = textNumber(value)
  return n !== null && Number.isFinite(n) ? n : null
}

/**
 * HogQL's toString of a value, as ClickHouse writes a Float64: the shortest text that reads back as the number, as
 * JavaScript's, but `1e21` for 1e+21, `-0`, `inf`, `-inf` and `nan`.
 */
export function hogqlText(value: number | string): string {
  if (typeof value === 'string') return value
  if (Number.isNaN(value)) return 'nan'
  if (!Number.isFinite(value)) return value > 0 ? 'inf' : '-inf'
  if (Object.is(value, -0)) return '-0'
  return String(value).replace('e+', 'e')
}

/** The Int64 range's bounds, both exact doubles: [−2⁶³, 2⁶³). */
export const INT64_MIN = -(2 ** 63)
export const INT64_END = 2 ** 63
const INT64_MAX = 2n ** 63n - 1n

/**
 * HogQL's toInt (ClickHouse's accurateCastOrNull(x, 'Int64')) of a number: truncated toward zero, null where it
 * is no Int64 (infinite, NaN, out of range); 0, never −0, as an integer has no sign of zero.
 */
export function numberInt(n: number): number | null {
  return Number.isFinite(n) && n >= INT64_MIN && n < INT64_END ? Math.trunc(n) + 0 : null
}

/** toInt of a text: an integer's digits (a sign before them at most) within Int64, else null (`'1.5'`, `' 1'`, `'1e3'`). */
export function textInt(text: string): number | null {
  if (!/^[+-]?\d+$/.test(text)) return null
  const n = BigInt(text)
  return n > INT64_MAX || n < -INT64_MAX - 1n ? null : Number(n) + 0
}

/** 10 to the power of 0–19 (the text's, correctly rounded), and UInt64's largest as a double (2⁶⁴) past it. */
function roundScale(places: number): number {
  return places > 19 ? 2 ** 64 : Number(`1e${places}`)
}

/**
 * The integer nearest a double, ties to even, keeping the sign of zero (C's nearbyint, SSE4.1's rounding).
 * `a - f` is exact: f is a's floor, within a factor of two of a or 0.
 */
function nearbyint(y: number): number {
  if (!Number.isFinite(y)) return y
  const a = Math.abs(y)
  const f = Math.floor(a)
  const frac = a - f
  const r = frac < 0.5 ? f : frac > 0.5 ? f + 1 : f + (f % 2)
  return r === 0 ? y * 0 : y < 0 ? -r : r
}

/**
 * HogQL's round(x, places) as current ClickHouse rounds a Float64 (FunctionsRound.h): x times 10^places (divided by
 * 10^-places when negative), rounded to the nearest integer with ties to even, and scaled back; the power saturates
 * at UInt64's largest past 10^19, as ClickHouse's intExp10 does. 18.16 rounds ties away from zero instead; the SQL
 * takes its ties to even (clickhouse-hogql.ts), so that every server answers this.
 */
export function hogqlRound(x: number, places: number): number {
  if (places === 0) return nearbyint(x)
  const scale = roundScale(Math.abs(places))
  return places > 0 ? nearbyint(x * scale) / scale : nearbyint(x / scale) * scale
}

/** numberCall's functions of one number that are JavaScript's Math functions. */
const MATH = new Map<HogqlFunction, (a: number) => number>([
  ['abs', Math.abs],
  ['floor', Math.floor],
  ['ceil', Math.ceil],
  ['trunc', Math.trunc],
  ['sqrt', Math.sqrt],
  ['exp', Math.exp],
  ['log', Math.log],
  ['log2', Math.log2],
  ['log10', Math.log10],
])

/**
 * A function of numbers (ClickHouse's over Float64). Exactly ClickHouse's: abs, floor, ceil, trunc and sqrt (IEEE
 * operations), `modulo` (`a % b`) as a − trunc(a / b) · b (its Float64 modulo: NaN for b = 0, where integers would fail
 * the query), intDiv as trunc(a / b) (±∞ or NaN for b = 0, likewise), their -OrZero 0 for b = 0, and sign as 1, −1
 * or 0 (NaN's too). exp, log, log2, log10 and pow are V8's, which may differ from a server's libm in the last digit;
 * pow keeps C's cases that JavaScript's ** does not (1 to any power, anything to the power 0, −1 to ±∞: 1).
 */
export function numberCall(fn: HogqlFunction, a: number, b: number): number {
  const unary = MATH.get(fn)
  if (unary !== undefined) return unary(a)
  switch (fn) {
    case 'sign':
      return a > 0 ? 1 : a < 0 ? -1 : 0
    case 'pow':
      return a === 1 || b === 0 || (a === -1 && Math.abs(b) === Infinity) ? 1 : a ** b
    case 'modulo':
    case 'moduloOrZero':
      return fn === 'moduloOrZero' && b === 0 ? 0 : a - Math.trunc(a / b) * b
    case 'intDiv':
    case 'intDivOrZero':
      return fn === 'intDivOrZero' && b === 0 ? 0 : Math.trunc(a / b)
    default:
      throw new Error(`${fn}() is no function of numbers`)
  }
}

/** The SQL literal of round's scale: an integer, which ClickHouse converts to the same double exactly. */
export function roundScaleSql(places: number): string {
  const p = Math.abs(places)
  return p > 19 ? '18446744073709551615' : `1${'0'.repeat(p)}`
}

/**
 * greatest/least, as ClickHouse's max/min aggregate of the values (the SQL's arrayReduce): nulls left out (as current
 * ClickHouse's greatest and least, since 24.12), null when all are; the first value kept unless a later one is
 * strictly greater (less), so a NaN is kept only if first, and of 0 and −0 the first. Texts compare as bytes.
 */
export function extreme(fn: 'greatest' | 'least', values: readonly HogqlValue[]): HogqlValue {
  let best: HogqlValue = null
  for (const v of values) {
    if (v === null) continue
    const c = best === null ? 0 : typeof v === 'string' ? compareHogqlText(v, best as string) : v < (best as number) ? -1 : v > (best as number) ? 1 : 0
    if (best === null || (fn === 'greatest' ? c > 0 : c < 0)) best = v
  }
  return best
}

/** The functions textCall computes. */
export const TEXT_CALLS: ReadonlySet<string> = new Set(['lower', 'upper', 'length', 'empty', 'notEmpty', 'startsWith', 'endsWith', 'trim', 'trimLeft', 'trimRight', 'position', 'replaceAll', 'replaceOne'])

/**
 * A function of texts on texts that are all there, as ClickHouse computes it: on bytes (`lower` and `upper`
 * change ASCII letters only, `length` and `position` count bytes, loose ones too), the trims removing spaces only,
 * and an empty pattern replacing nothing.
 */
export function textCall(fn: HogqlFunction, [a, b, c]: string[]): HogqlValue {
  switch (fn) {
    case 'trim':
      return a.replace(/^ +| +$/g, '')
    case 'trimLeft':
      return a.replace(/^ +/, '')
    case 'trimRight':
      return a.replace(/ +$/, '')
    case 'position':
      return textBytes(a).indexOf(textBytes(b)) + 1
    case 'replaceAll':
      return b === '' ? a : joinedText(a.split(b).join(c))
    case 'replaceOne':
      return b === '' ? a : joinedText(a.replace(b, () => c))
    case 'lower':
      return a.replace(/[A-Z]+/g, (s) => s.toLowerCase())
    case 'upper':
      return a.replace(/[a-z]+/g, (s) => s.toUpperCase())
    case 'length':
      return textBytes(a).length
    case 'empty':
    case 'notEmpty':
      return (a === '') === (fn === 'empty') ? 1 : 0
    default: {
      if (!hasLooseBytes(a) && !hasLooseBytes(b)) return (fn === 'startsWith' ? a.startsWith(b) : a.endsWith(b)) ? 1 : 0
      const [x, y] = [textBytes(a), textBytes(b)]
      return y.length <= x.length && (fn === 'startsWith' ? x.subarray(0, y.length) : x.subarray(x.length - y.length)).equals(y) ? 1 : 0
    }
  }
}

/**
 * A value as `uniq` tells values apart: a text as it is, a number as toString writes it with −0 read as 0 (so NaN
 * is one value); null is none.
 */
export function uniqKey(value: HogqlValue): string | null {
  return value === null ? null : typeof value === 'number' ? hogqlText(value + 0) : value
}

/** The values that are not null, the first of each as uniq tells them apart (groupUniqArray's, arrayDistinct's). */
export function distinctValues(values: readonly HogqlValue[]): HogqlValue[] {
  const seen = new Set<string | null>()
  return values.filter((v) => v !== null && !seen.has(uniqKey(v)) && Boolean(seen.add(uniqKey(v))))
}

/**
 * ClickHouse's order of values, both ways (ORDER BY's, arraySort's): numbers by value, texts by their bytes; after
 * them NaN, then NULL (NULLS LAST), or before them NULL, then NaN (NULLS FIRST).
 */
export function compareValues(a: HogqlValue, b: HogqlValue, desc: boolean, nullsFirst = false): number {
  const special = (v: HogqlValue) => (v === null ? 2 : typeof v === 'number' && Number.isNaN(v) ? 1 : 0) * (nullsFirst ? -1 : 1)
  if (special(a) !== 0 || special(b) !== 0) return special(a) - special(b)
  // Not a − b: two infinities of one sign are equal, and ∞ − ∞ is NaN.
  const c = typeof a === 'number' ? (a < (b as number) ? -1 : a > (b as number) ? 1 : 0) : compareHogqlText(a as string, b as string)
  return desc ? -c : c
}

/**
 * ClickHouse's exact quantiles beside quantile's interpolation (QuantileExact.h): `exact` the sorted values' item at
 * ⌊level × n⌋ (the last at level 1), `exactLow` and `exactHigh` that but for the low and high median at 0.5,
 * `exactInclusive` and `exactExclusive` interpolated at level × (n − 1) + 1 (R-7) and level × (n + 1) (R-6).
 */
export type QuantileKind = 'exact' | 'exactLow' | 'exactHigh' | 'exactInclusive' | 'exactExclusive'

/**
 * ClickHouse's `quantile(level)` of the values (ReservoirSampler's quantileInterpolated, exact below its 8,192
 * samples): sorted, the index level × (n − 1) interpolated linearly between its neighbours, written as it computes
 * it; or of the exact `kind`, which skips NaNs (NaN where nothing else is left); 0 for none (PostHog's coalesce of
 * the NULL an entity without values gets).
 */
export function hogqlQuantile(values: number[], level: number, kind?: QuantileKind): number {
  if (values.length === 0) return 0
  if (kind !== undefined) return exactQuantile(values.filter((v) => !Number.isNaN(v)).sort((a, b) => a - b), level, kind)
  const n = values.length
  values.sort((a, b) => a - b)
  const index = Math.min(n - 1, level * (n - 1))
  const left = Math.floor(index)
  if (left + 1 === n) return values[left]
  return values[left] * (left + 1 - index) + values[left + 1] * (index - left)
}

/** QuantileExact.h's getImpl and getFloat of sorted values without NaN, in its order of operations. */
function exactQuantile(sorted: readonly number[], level: number, kind: QuantileKind): number {
  const n = sorted.length
  if (n === 0) return NaN
  if (kind === 'exactInclusive' || kind === 'exactExclusive') {
    const h = kind === 'exactInclusive' ? level * (n - 1) + 1 : level * (n + 1)
    const k = Math.floor(h)
    if (k >= n) return sorted[n - 1]
    if (k < 1) return sorted[0]
    return sorted[k - 1] + (h - k) * (sorted[k] - sorted[k - 1])
  }
  if (kind === 'exactLow' && level === 0.5) return sorted[Math.ceil(n / 2) - 1]
  return sorted[level < 1 ? Math.floor(level * n) : n - 1]
}

/** A value of a query's answer: one value, or the array an aggregation gives (groupArray). */
export type AnswerValue = HogqlValue | HogqlValue[]

/**
 * A text as a store's answer gives it: ClickHouse's JSON holds its bytes, which its client reads as UTF-8, the loose
 * bytes U+FFFD as the WHATWG decoder replaces them (one for each maximal part of a character), as Buffer's does.
 */
const decoded = (v: HogqlValue): HogqlValue => (typeof v === 'string' && hasLooseBytes(v) ? textBytes(v).toString('utf8') : v)

/** A value as a store's answer gives it: its texts decoded, and in an array NaN and infinities null (as ClickHouse's JSON writes them). */
export const storeAnswer = (v: AnswerValue): AnswerValue => (Array.isArray(v) ? v.map((item) => answered(decoded(item))) : decoded(v))

/** A value as a store's answer gives it: NaN and infinities are NULL there (ClickHouse's JSON writes them so). */
export const answered = (v: HogqlValue): HogqlValue => (typeof v === 'number' && !Number.isFinite(v) ? null : v)

/**
 * A row's key for GROUP BY, DISTINCT and a join's keys. ClickHouse tells apart what JSON would not: −0 from 0 (it hashes a
 * Float64's bits) and NaN and ±∞ from NULL; values are never objects, so markers can't meet one.
 */
export function keyOf(values: readonly AnswerValue[]): string {
  return JSON.stringify(values.map((v) => (typeof v === 'number' && (Object.is(v, -0) || !Number.isFinite(v)) ? { [Object.is(v, -0) ? '-0' : String(v)]: 1 } : v)))
}

/** Kleene's and/or over numbers (null: unknown), 1 or 0. */
export function logical(op: 'and' | 'or', values: ReadonlyArray<number | null>): number | null {
  const decisive = op === 'and' ? (v: number) => v === 0 : (v: number) => v !== 0
  if (values.some((v) => v !== null && decisive(v))) return op === 'and' ? 0 : 1
  if (values.some((v) => v === null)) return null
  return op === 'and' ? 1 : 0
}

/**
 * A comparison with a NULL side, as PostHog's printer writes comparisons of nullable values (`ifNull(equals(a, b),
 * isNull(a) and isNull(b))`, `ifNull(notEquals(a, b), isNotNull(a) or isNotNull(b))`, `ifNull(less(a, b), 0)` …): NULL
 * equals NULL only, differs from anything else, and is neither less nor greater than anything.
 */
export function nullCompare(op: '=' | '!=' | '<' | '<=' | '>' | '>=', a: HogqlValue, b: HogqlValue): number {
  const both = a === null && b === null
  return op === '=' ? (both ? 1 : 0) : op === '!=' ? (both ? 0 : 1) : 0
}

/** 1 where `c` (a comparison's sign, NaN for unordered) satisfies the operator, else 0. */
export function compare(op: '=' | '!=' | '<' | '<=' | '>' | '>=', c: number): number {
  const holds = op === '=' ? c === 0 : op === '!=' ? c !== 0 : op === '<' ? c < 0 : op === '<=' ? c <= 0 : op === '>' ? c > 0 : c >= 0
  return holds ? 1 : 0
}
