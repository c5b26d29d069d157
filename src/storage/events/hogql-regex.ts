/**
 * HogQL's regex functions of texts: match (a search), extract, replaceRegexpOne and replaceRegexpAll, as current
 * ClickHouse (PostHog's servers) computes them in Node, and the SQL that has 18.16 compute the same. Their patterns
 * and replacements are literals (hogql-functions.ts), checked against the stores' engine when a query is read
 * (QueryClock.regex); filters check match()'s through their reader (hogqlPatterns).
 */
import { searchPattern } from './clickhouse-schema.js'
import type { HogqlFunction } from './hogql-functions.js'
import { HogqlMathError } from './hogql-tokens.js'
import { hogqlTextSql, joinedText, textCall } from './hogql-values.js'
import type { RegexEngine } from './sqlite-actions.js'
import { REGEX_LIMITS } from './types.js'

export const REGEX_FUNCTIONS: ReadonlySet<HogqlFunction> = new Set(['match', 'extract', 'replaceRegexpOne', 'replaceRegexpAll'])

/**
 * A pattern of no re2 metacharacter: current ClickHouse replaces it as plain text and takes the replacement as
 * written, `\0` and all (ReplaceRegexpImpl's canFallbackToStringReplacement); `]` and `}` alone are plain there.
 */
const PLAIN = /^[^\\|()[^$.+{?*]+$/

/** The replacement's `\<digit>` substitutions and escapes, as ClickHouse reads them: a text, or a group's number. */
function replacementParts(replacement: string): Array<string | number> {
  const parts: Array<string | number> = []
  let text = ''
  for (let i = 0; i < replacement.length; i++) {
    const c = replacement[i]
    // A lone backslash at the end is itself.
    if (c !== '\\' || i + 1 === replacement.length) text += c
    else if (/\d/.test(replacement[++i])) {
      parts.push(text, Number(replacement[i]))
      text = ''
    } else text += replacement[i]
  }
  parts.push(text)
  return parts
}

/** The call's pattern (and replacement) checked as the stores would run them, before any query. */
export function checkRegexCall(fn: HogqlFunction, pattern: string, replacement: string | undefined, regex: RegexEngine): void {
  const compiled = regex(pattern)
  if (compiled === null || compiled.fancy) throw new HogqlMathError(`${fn}()'s pattern ${JSON.stringify(pattern)} is one skylark's stores can't run (${REGEX_LIMITS}).`)
  // ClickHouse 18.16 replaces only the first of empty matches and current servers each one between characters.
  if (fn === 'replaceRegexpAll' && pattern !== '' && compiled.canMatchEmpty) throw new HogqlMathError(`replaceRegexpAll()'s pattern ${JSON.stringify(pattern)} can match an empty text, which ClickHouse servers replace differently by version; write one that takes a character (as in '\\\\s+' for '\\\\s*').`)
  if (replacement === undefined) return
  const over = replacementParts(replacement).find((p) => typeof p === 'number' && p > compiled.groups)
  if (over !== undefined) throw new HogqlMathError(`${fn}()'s replacement names \\${over}, but the pattern has ${compiled.groups} capturing group${compiled.groups === 1 ? '' : 's'}.`)
}

/** `texts`: the call's arguments, none null. Null when the search ran out of budget (a long text and a large pattern). */
export function regexCall(fn: HogqlFunction, [text, pattern, replacement]: string[], regex: RegexEngine): string | number | null {
  const compiled = regex(pattern)
  // A search out of budget finds nothing, as the regex filters' (sqlite-actions.ts).
  if (fn === 'match') return compiled?.test(text) === true ? 1 : 0
  if (compiled === null) return null
  if (fn === 'extract') {
    // The first group where the pattern has one, else the whole match; '' where it took no part.
    const m = compiled.find(text)
    if (m === undefined) return null
    const g = compiled.groups > 0 ? 2 : 0
    return m === null || m[g] < 0 ? '' : text.slice(m[g], m[g + 1])
  }
  if (pattern === '') return text
  if (PLAIN.test(pattern)) return textCall(fn === 'replaceRegexpOne' ? 'replaceOne' : 'replaceAll', [text, pattern, replacement])
  const parts = replacementParts(replacement)
  let out = ''
  let copied = 0
  for (let m = compiled.find(text); m !== null; m = compiled.find(text, copied)) {
    if (m === undefined) return null
    out += text.slice(copied, m[0])
    for (const p of parts) out += typeof p === 'string' ? p : m[2 * p] < 0 ? '' : text.slice(m[2 * p], m[2 * p + 1])
    copied = m[1]
    // replaceRegexpAll's patterns take a character (checkRegexCall), so only replaceRegexpOne's match is empty.
    if (fn === 'replaceRegexpOne' || m[1] === m[0]) break
  }
  return joinedText(out + text.slice(copied))
}

/**
 * The SQL of a regex call over `text`, the SQL of its first argument, that 18.16 and current servers read alike. `v`:
 * a name unique in the query.
 */
export function regexCallSql(fn: HogqlFunction, text: string, [pattern, replacement]: readonly [string, string?], v: string): string {
  if (fn === 'match' || fn === 'extract') return `${fn}(${text}, ${hogqlTextSql(searchPattern(pattern))})`
  if (pattern === '') return text
  if (PLAIN.test(pattern)) return `${fn === 'replaceRegexpOne' ? 'replaceOne' : 'replaceAll'}(${text}, ${hogqlTextSql(pattern)}, ${hogqlTextSql(replacement!)})`
  // 18.16's replaceRegexp* read a dot without line breaks; current servers, and this, with them.
  const replaced = (of: string) => `${fn}(${of}, ${hogqlTextSql(`(?s)${pattern}`)}, ${hogqlTextSql(replacement!)})`
  if (fn === 'replaceRegexpAll') return replaced(text)
  // 18.16 replaces nothing in an empty text, where current servers replace a match of nothing ('^'): the
  // replacement, whose groups are empty then. The text is read once, in a lambda (`v`, a name unique in the query).
  const empty = replacementParts(replacement!).filter((p) => typeof p === 'string').join('')
  return `arrayMap(${v} -> if(empty(${v}), if(match('', ${hogqlTextSql(searchPattern(pattern))}), ${hogqlTextSql(empty)}, ''), ${replaced(v)}), [${text}])[1]`
}
