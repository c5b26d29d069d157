/**
 * The tokens of `math_hogql` and HogQL filter texts (hogql-parse.ts reads them): numbers, texts, names (quoted
 * ones with HogQL's escapes, as PostHog's parser unquotes them) and punctuation; and the property paths they spell
 * (pathAt).
 */
import type { PropertyPath } from './hogql-math.js'

/** What a HogQL text can't be read as, named: a 400 where the text is read. */
export class HogqlMathError extends Error {
  override name = 'HogqlMathError'
}

/** `start` and `end`: where the token lies in the text (a query's column is named by its item's text). */
export type Token = ({ kind: 'number'; value: number } | { kind: 'text'; value: string } | { kind: 'name'; value: string; quoted: boolean } | { kind: 'punct'; value: string }) & {
  start: number
  end: number
}

/** The punctuation `{filters}` becomes where the query gives filters (hogql-placeholders.ts): no text tokenizes to it. */
export const FILTERS_MARK = '{filters}'

export const isPunct = (t: Token | undefined, value: string): boolean => t?.kind === 'punct' && t.value === value
/** Whether the clause word at `i` is a function's name (`array(…)`, `left(…)`, `right(…)`, `format(…)`), not ARRAY JOIN, LEFT JOIN or FORMAT. */
export const isCall = (tokens: readonly Token[], i: number): boolean => CALLED_WORDS.has(String(tokens[i].value).toLowerCase()) && isPunct(tokens[i + 1], '(')
const CALLED_WORDS: ReadonlySet<string> = new Set(['array', 'left', 'right', 'format'])

/** Where the parenthesis at `open` closes, -1 where it does not. */
export function closingAt(tokens: Token[], open: number): number {
  let depth = 0
  for (let i = open; i < tokens.length; i++) {
    if (isPunct(tokens[i], '(')) depth++
    else if (isPunct(tokens[i], ')') && --depth === 0) return i
  }
  return -1
}

/**
 * The lambda at `i` (`x -> …` or `(x, y) -> …`): its variables' names, where its body starts, and where it ends (the
 * comma or closing bracket after it at its own depth); null where none stands there.
 */
export function lambdaAt(tokens: Token[], i: number): { names: string[]; body: number; end: number } | null {
  const paren = isPunct(tokens[i], '(')
  const arrow = paren ? closingAt(tokens, i) + 1 : i + 1
  const names = paren ? tokens.slice(i + 1, arrow - 1) : [tokens[i]]
  if (arrow <= 0 || !isPunct(tokens[arrow], '->') || names.length % 2 === 0) return null
  if (!names.every((t, k) => (k % 2 === 0 ? t.kind === 'name' && !t.quoted : isPunct(t, ',')))) return null
  let end = arrow + 1
  for (let depth = 0; end < tokens.length; end++) {
    const t = tokens[end]
    if (isPunct(t, '(') || isPunct(t, '[')) depth++
    else if ((isPunct(t, ')') || isPunct(t, ']')) && depth-- === 0) break
    else if (depth === 0 && isPunct(t, ',')) break
  }
  return { names: names.filter((_, k) => k % 2 === 0).map((t) => t.value as string), body: arrow + 1, end }
}

/** Whether the parenthesis at `open` closes at the end of `tokens`, not before. */
export const closesAtEnd = (tokens: Token[], open: number): boolean => closingAt(tokens, open) === tokens.length - 1

/** Keys in one property path (`properties.a.b` is 2): ClickHouse 18.16's SQL for each grows with the one before. */
const MAX_PATH = 4

/** Where in a text: before the token at `i`, or at the end. */
export const whereAt = (tokens: Token[], i: number): string => (tokens[i] === undefined ? 'at the end' : `before ${JSON.stringify(tokens[i].value)}`)

/**
 * The property path from `at` (after `properties`, of whichever): the key, then keys within its value (`.a.b`,
 * `['a']['b']`: JSONExtractRaw's), and the index after it.
 */
export function pathAt(tokens: Token[], at: number): { path: PropertyPath; end: number } {
  const keys: string[] = []
  let i = at
  if (!isPunct(tokens[i], '.') && !isPunct(tokens[i], '[')) throw new HogqlMathError('"properties" must name a property: properties.<key>.')
  while (isPunct(tokens[i], '.') || isPunct(tokens[i], '[')) {
    if (keys.length === MAX_PATH) throw new HogqlMathError(`Property paths reach at most ${MAX_PATH} keys deep here.`)
    const dot = isPunct(tokens[i], '.')
    const t = tokens[++i]
    if (t?.kind !== (dot ? 'name' : 'text')) throw new HogqlMathError(dot ? `Expected a property name after "." ${whereAt(tokens, i)}.` : "Expected a 'string' key in properties[...].")
    if (!dot && !isPunct(tokens[++i], ']')) throw new HogqlMathError(`Expected "]" ${whereAt(tokens, i)}.`)
    keys.push(t.value as string)
    i++
  }
  return { path: keys as unknown as PropertyPath, end: i }
}

/** Whether `t` is `word` unquoted (any case). */
export function isWord(t: Token | undefined, word: string): boolean {
  return t?.kind === 'name' && !t.quoted && t.value.toLowerCase() === word
}

/** The tokens split at top-level commas; an empty part is refused, naming `what` it is part of. */
export function splitCommas(tokens: Token[], what: string): Token[][] {
  const parts: Token[][] = [[]]
  let depth = 0
  for (const t of tokens) {
    if (t.kind === 'punct' && (t.value === '(' || t.value === '[')) depth++
    else if (t.kind === 'punct' && (t.value === ')' || t.value === ']')) depth--
    if (depth === 0 && t.kind === 'punct' && t.value === ',') parts.push([])
    else parts[parts.length - 1].push(t)
  }
  if (parts.some((p) => p.length === 0)) throw new HogqlMathError(`An expression of ${what} is empty.`)
  return parts
}

/** `{` and `}` stand only around a query's placeholders (hogql-placeholders.ts). */
const PUNCTUATION = ['=~*', '!~*', '=~', '!~', '==', '!=', '<>', '<=', '>=', '?.', '??', '?', ':', '||', '->', '(', ')', ',', '.', '[', ']', '{', '}', '+', '-', '*', '/', '%', '=', '<', '>']
/** Sticky: each matches at `lastIndex` only. */
const NUMBER = /(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?/y
const NAME = /[A-Za-z_$][A-Za-z0-9_$]*/y

function match(re: RegExp, text: string, at: number): string | null {
  re.lastIndex = at
  return re.exec(text)?.[0] ?? null
}

export function tokenize(text: string): Token[] {
  const tokens: Token[] = []
  let i = 0
  while (i < text.length) {
    const c = text[i]
    if (/\s/.test(c)) {
      i++
      continue
    }
    const number = match(NUMBER, text, i)
    if (number !== null) {
      tokens.push({ kind: 'number', value: Number(number), start: i, end: i + number.length })
      i += number.length
      continue
    }
    const name = match(NAME, text, i)
    if (name !== null) {
      tokens.push({ kind: 'name', value: name, quoted: false, start: i, end: i + name.length })
      i += name.length
      continue
    }
    if (c === "'" || c === '`' || c === '"') {
      const [value, end] = quoted(text, i)
      tokens.push(c === "'" ? { kind: 'text', value, start: i, end } : { kind: 'name', value, quoted: true, start: i, end })
      i = end
      continue
    }
    const punct = PUNCTUATION.find((p) => text.startsWith(p, i))
    if (!punct) throw new HogqlMathError(`Unexpected character ${JSON.stringify(c)} at position ${i}.`)
    // HogQL's `?.` (a property read that is NULL where its object is) is `.` here: every path read here is so.
    tokens.push({ kind: 'punct', value: punct === '?.' ? '.' : punct, start: i, end: i + punct.length })
    i += punct.length
  }
  return tokens
}

/** HogQL's escapes (its parser's replace_common_escape_characters): `\0` is dropped, as NUL is there. */
const ESCAPES: Record<string, string> = { n: '\n', t: '\t', r: '\r', '0': '', b: '\b', f: '\f', a: '\x07', v: '\v', '\\': '\\' }

/**
 * A quoted string or identifier from `start` (its quote): HogQL's escapes and a backslashed quote are read, any
 * other backslash is kept with what follows (so `'\d'` is a regex's `\d`, as PostHog reads it), and a doubled
 * quote is one.
 */
function quoted(text: string, start: number): [string, number] {
  const q = text[start]
  let out = ''
  for (let i = start + 1; i < text.length; i++) {
    const c = text[i]
    if (c === '\\' && i + 1 < text.length) {
      const next = text[++i]
      out += next === q ? q : (ESCAPES[next] ?? `\\${next}`)
    } else if (c === q) {
      if (text[i + 1] !== q) return [out, i + 1]
      out += q
      i++
    } else out += c
  }
  throw new HogqlMathError(`Unterminated ${q === "'" ? 'string' : 'identifier'} at position ${start}.`)
}
