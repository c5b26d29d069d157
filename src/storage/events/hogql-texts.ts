/**
 * More of ClickHouse's functions of texts, as PostHog's HogQL maps them (HOGQL_CLICKHOUSE_FUNCTIONS): computed here
 * on bytes as current ClickHouse computes them (hogql-values.ts's textBytes keeps a text's loose bytes), and written
 * in 18.16's SQL, which has lengthUTF8, positionUTF8, positionCaseInsensitive, reverse and appendTrailingCharIfAbsent
 * but no leftPad, rightPad, repeat, concatWithSeparator, countSubstrings or format. left and right are substrings
 * (hogql-functions.ts's sugarCall).
 *
 * - lengthUTF8 and positionUTF8 count a code point at each byte that is no continuation byte (UTF8Helpers.h's
 *   countCodePoints), loose bytes too. substringUTF8 is not read: 18.16's steps over a character by other lengths than
 *   current servers' (a 4-byte character is four there), on valid texts too, and takes no offset from the end.
 * - leftPad and rightPad (padString.cpp) pad on bytes to a length literal from 0 to 1,000,000 with a pad literal
 *   (' ' where empty), and cut a longer text to its first `length` bytes. repeat's count is an integer literal up to
 *   1,000 here (a negative one repeats nothing).
 * - concatWithSeparator(sep, …) joins its values (a number as toString writes it) with the literal separator; NULL
 *   where one is. appendTrailingCharIfAbsent's character is ASCII; an empty text stays empty. countSubstrings
 *   counts the literal needle's occurrences that do not overlap (none for an empty needle), its CaseInsensitive
 *   form after folding ASCII letters; format fills a literal pattern (formatPieces).
 */
import type { HogqlNode, HogqlValue } from './hogql-math.js'
import { lambdaSql, NULL_NUMBER, NULL_TEXT } from './clickhouse-hogql-calls.js'
import { HogqlMathError } from './hogql-tokens.js'
import { bytesText, hogqlText, hogqlTextSql, joinedText, textBytes } from './hogql-values.js'

/** The functions, as hogql-functions.ts's FUNCTIONS lists them. */
export const TEXT_SPECS = [
  ['lengthUTF8', 1, 1],
  ['positionUTF8', 2, 2],
  ['positionCaseInsensitive', 2, 2],
  ['reverse', 1, 1],
  ['repeat', 2, 2],
  ['leftPad', 2, 3],
  ['rightPad', 2, 3],
  ['concatWithSeparator', 1, 64],
  ['appendTrailingCharIfAbsent', 2, 2],
  ['countSubstrings', 2, 2],
  ['countSubstringsCaseInsensitive', 2, 2],
  ['format', 2, 64],
] as const
export type TextFunction = (typeof TEXT_SPECS)[number][0]
const TEXT_FUNCTIONS: ReadonlySet<string> = new Set(TEXT_SPECS.map(([fn]) => fn))
export const isTextFunction = (fn: string): fn is TextFunction => TEXT_FUNCTIONS.has(fn)
/** Those whose value is a number. */
const TO_NUMBER: ReadonlySet<string> = new Set(['lengthUTF8', 'positionUTF8', 'positionCaseInsensitive', 'countSubstrings', 'countSubstringsCaseInsensitive'])
export const textFunctionType = (fn: TextFunction): 'text' | 'number' => (TO_NUMBER.has(fn) ? 'number' : 'text')

const MAX_PAD = 1_000_000
const MAX_REPEAT = 1000

type Literal = (node: HogqlNode, range: readonly [number, number], why: string) => HogqlNode

/**
 * The arguments' rules (the first a text, the others as each function takes them), number literals replaced by their
 * checked nodes; `integer` is hogql-functions.ts's integerLiteral.
 */
export function checkTextArguments(fn: TextFunction, args: HogqlNode[], integer: Literal): void {
  const texts = fn === 'concatWithSeparator' ? [] : fn === 'repeat' || fn === 'leftPad' || fn === 'rightPad' ? [0] : args.map((_, i) => i)
  if (texts.some((i) => args[i].type === 'number') || (args[2]?.type === 'number' && fn.endsWith('Pad'))) throw new HogqlMathError(`${fn}() takes texts, not numbers${texts.length < args.length ? ', where it takes a text' : ''}.`)
  const textLiteral = (i: number, what: string) => {
    if (args[i] !== undefined && args[i].op !== 'text') throw new HogqlMathError(`${fn}() takes its ${what} as a text literal ('…').`)
  }
  switch (fn) {
    case 'repeat':
      args[1] = integer(args[1], [-Number.MAX_SAFE_INTEGER, MAX_REPEAT], `repeat() takes its count as an integer literal up to ${MAX_REPEAT} here, as in repeat('-', 10).`)
      return
    case 'leftPad':
    case 'rightPad':
      args[1] = integer(args[1], [0, MAX_PAD], `${fn}() takes its length as an integer literal from 0 to ${MAX_PAD} (ClickHouse's most), as in ${fn}(x, 5, '0').`)
      return textLiteral(2, 'pad')
    case 'concatWithSeparator':
      return textLiteral(0, 'separator')
    case 'appendTrailingCharIfAbsent':
      textLiteral(1, 'character')
      // One byte, as ClickHouse takes; ASCII, as 18.16 compares a byte from 0x80 as another and appends it.
      if (!/^[\x00-\x7f]$/.test((args[1] as { value: string }).value)) throw new HogqlMathError('appendTrailingCharIfAbsent() takes one ASCII character here, as in appendTrailingCharIfAbsent(x, \'/\').')
      return
    case 'countSubstrings':
    case 'countSubstringsCaseInsensitive':
      return textLiteral(1, 'needle')
    case 'format':
      textLiteral(0, 'pattern')
      formatPieces((args[0] as { value: string }).value, args.length - 1)
  }
}

/**
 * format's pattern (formatString.h) as its texts and, between them, the indexes of the values that stand there: `{}`
 * the next value, `{n}` the nth from 0 (one way or the other throughout), `{{` and `}}` a brace. A brace that does
 * not pair, a value past the last and a text within braces are refused, as ClickHouse refuses them.
 */
function formatPieces(pattern: string, values: number): Array<string | number> {
  const pieces: Array<string | number> = []
  let [text, at, next] = ['', 0, 0]
  let numbered: boolean | null = null
  const refuse = (why: string) => new HogqlMathError(`format()'s pattern ${JSON.stringify(pattern)}: ${why}, as in format('{} of {}', a, b).`)
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]
    if ((c === '{' || c === '}') && pattern[i + 1] === c) {
      text += c
      i++
    } else if (c === '}') throw refuse('a } closes no {')
    else if (c !== '{') text += c
    else {
      // Within the braces, where a doubled brace is skipped over as outside them (ClickHouse's scan).
      let end = i + 1
      while (end < pattern.length && !(pattern[end] === '}' && pattern[end + 1] !== '}')) end += pattern[end] === '{' || pattern[end] === '}' ? 2 : 1
      if (end >= pattern.length) throw refuse('a { is not closed')
      const inside = pattern.slice(i + 1, end)
      if (inside.includes('{')) throw refuse('a { stands within braces')
      if (numbered === (inside === '')) throw refuse('{} and {n} are not mixed')
      numbered = inside !== ''
      if (numbered && !/^[0-9]+$/.test(inside)) throw refuse(`{${inside}} is no number`)
      const index = numbered ? Number(inside) : next++
      if (index >= values) throw refuse(`it reads a value past its ${values}`)
      pieces.push(text, index)
      text = ''
      i = end
    }
  }
  pieces.push(text)
  return pieces
}

/** Whether a byte begins a code point, as ClickHouse counts them: it is no continuation byte (10xxxxxx). */
const starts = (byte: number): boolean => byte < 0x80 || byte >= 0xc0
const codePoints = (bytes: Buffer): number => bytes.reduce((n, b) => n + (starts(b) ? 1 : 0), 0)
const asciiLower = (bytes: Buffer): Buffer => Buffer.from(bytes.map((b) => (b >= 0x41 && b <= 0x5a ? b + 32 : b)))

function pad(fn: 'leftPad' | 'rightPad', text: Buffer, length: number, padText: string): Buffer {
  if (length <= text.length) return text.subarray(0, length)
  const unit = textBytes(padText === '' ? ' ' : padText)
  const padding = Buffer.alloc(length - text.length, unit)
  return fn === 'leftPad' ? Buffer.concat([padding, text]) : Buffer.concat([text, padding])
}

/** The value of a call whose arguments' values are `values` (its literals' too). */
export function textFunctionValue(fn: TextFunction, values: readonly HogqlValue[]): HogqlValue {
  if (values.includes(null)) return null
  if (fn === 'concatWithSeparator') return joinedText(values.slice(1).map((v) => hogqlText(v as string | number)).join(values[0] as string))
  const [text, second, third] = values as [string, string | number, string | number | undefined]
  const bytes = textBytes(text)
  switch (fn) {
    case 'lengthUTF8':
      return codePoints(bytes)
    case 'positionUTF8': {
      const at = bytes.indexOf(textBytes(second as string))
      return at < 0 ? 0 : codePoints(bytes.subarray(0, at)) + 1
    }
    case 'positionCaseInsensitive':
      return asciiLower(bytes).indexOf(asciiLower(textBytes(second as string))) + 1
    case 'reverse':
      return bytesText(Buffer.from(bytes).reverse())
    case 'repeat':
      return (second as number) <= 0 ? '' : joinedText(text.repeat(second as number))
    case 'leftPad':
    case 'rightPad':
      return bytesText(pad(fn, bytes, second as number, (third as string | undefined) ?? ' '))
    case 'appendTrailingCharIfAbsent':
      return text === '' || text.endsWith(second as string) ? text : joinedText(text + (second as string))
    case 'countSubstrings':
    case 'countSubstringsCaseInsensitive': {
      const [haystack, needle] = fn === 'countSubstrings' ? [bytes, textBytes(second as string)] : [asciiLower(bytes), asciiLower(textBytes(second as string))]
      let count = 0
      for (let at = needle.length === 0 ? -1 : haystack.indexOf(needle); at >= 0; at = haystack.indexOf(needle, at + needle.length)) count++
      return count
    }
    case 'format':
      return joinedText(formatPieces(text, values.length - 1).map((p) => (typeof p === 'number' ? (values[p + 1] as string) : p)).join(''))
  }
}

/** How clickhouse-hogql.ts's Compiler writes an argument. */
export interface TextSql {
  compile(node: HogqlNode): string
  text(node: HogqlNode): string
  fresh(): string
}

/** A call's SQL on 18.16: NULL where an argument is the NULL literal (ClickHouse types some such calls Nothing). */
export function textFunctionSql(fn: TextFunction, args: readonly HogqlNode[], sql: TextSql): string {
  if (args.some((a) => a.type === 'null')) return textFunctionType(fn) === 'text' ? NULL_TEXT : NULL_NUMBER
  const literal = (i: number) => (args[i] as { value: string | number }).value
  if (fn === 'concatWithSeparator') {
    const values = args.slice(1).map((a) => sql.text(a))
    return values.length === 0 ? "''" : `concat(${values.join(`, ${hogqlTextSql(literal(0) as string)}, `)})`
  }
  if (fn === 'format') {
    // concat of the texts and values; a value the pattern does not read stands as none of it, to be NULL where it is.
    const values = args.slice(1).map((a) => sql.compile(a))
    const pieces = formatPieces(literal(0) as string, values.length)
    const unread = values.filter((_, i) => !pieces.includes(i)).map((v) => `substring(${v}, 1, 0)`)
    return `concat(${[...pieces.map((p) => (typeof p === 'number' ? values[p] : hogqlTextSql(p))), ...unread, "''"].join(', ')})`
  }
  const text = sql.compile(args[0])
  switch (fn) {
    case 'lengthUTF8':
      return `toFloat64(lengthUTF8(${text}))`
    case 'positionUTF8':
    case 'positionCaseInsensitive':
      return `toFloat64(${fn}(${text}, ${sql.compile(args[1])}))`
    case 'reverse':
      return `reverse(${text})`
    case 'appendTrailingCharIfAbsent':
      return `appendTrailingCharIfAbsent(${text}, ${hogqlTextSql(literal(1) as string)})`
    case 'repeat':
      return repeatSql(text, literal(1) as number, sql)
    case 'countSubstrings':
    case 'countSubstringsCaseInsensitive': {
      // lower() folds ASCII letters only, as the case-insensitive count does, and keeps the length.
      const folded = fn === 'countSubstrings' ? (s: string) => s : (s: string) => `lower(${s})`
      const needle = literal(1) as string
      const width = textBytes(needle).length
      if (width === 0) return `toFloat64(length(${text}) * 0)`
      const t = sql.fresh()
      return lambdaSql([t], [text], `toFloat64(intDiv(length(${t}) - length(replaceAll(${folded(t)}, ${folded(hogqlTextSql(needle))}, '')), ${width}))`)
    }
    case 'leftPad':
    case 'rightPad': {
      // The padding (the pad repeated past the length, a constant) cut to what the text lacks.
      const length = literal(1) as number
      const unit = (args[2] === undefined || literal(2) === '' ? ' ' : literal(2)) as string
      const i = sql.fresh()
      const padding = `arrayStringConcat(arrayMap(${i} -> ${hogqlTextSql(unit)}, range(${Math.ceil(length / textBytes(unit).length) + 1})))`
      const t = sql.fresh()
      const added = `substring(${padding}, 1, ${length} - length(${t}))`
      return lambdaSql([t], [text], `if(length(${t}) >= ${length}, substring(${t}, 1, ${length}), concat(${fn === 'leftPad' ? `${added}, ${t}` : `${t}, ${added}`}))`)
    }
  }
}

/** repeat of a text `count` times: copies made by a lambda (18.16 has no repeat), which arrayStringConcat takes not Nullable. */
function repeatSql(text: string, count: number, sql: TextSql): string {
  if (count <= 0) return `substring(${text}, 1, 0)`
  const [t, i] = [sql.fresh(), sql.fresh()]
  return lambdaSql([t], [text], `if(isNull(${t}), ${NULL_TEXT}, arrayStringConcat(arrayMap(${i} -> assumeNotNull(${t}), range(${count}))))`)
}
