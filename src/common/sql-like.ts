/**
 * SQL's LIKE as ClickHouse and HogQL run it (PostHog's action steps: `url` contains is `LIKE '%url%'`, `href`
 * and `text` contains are ILIKE), for the action matcher and the SQLite store, whose LIKE ignores ASCII case:
 * `%` any run, `_` one character, `\` makes the next one literal. Matched by the two-pointer wildcard walk,
 * which stays O(pattern × text) where a regex could backtrack without bound.
 */

type Token = { kind: 'any' } | { kind: 'one' } | { kind: 'char'; char: string }

function tokens(pattern: string): Token[] {
  const out: Token[] = []
  const chars = Array.from(pattern)
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i]!
    if (c === '\\' && i + 1 < chars.length) out.push({ kind: 'char', char: chars[++i]! })
    else if (c === '%') out.push({ kind: 'any' })
    else if (c === '_') out.push({ kind: 'one' })
    else out.push({ kind: 'char', char: c })
  }
  return out
}

/** Patterns read into tokens, by case mode and text: a scan matches every row against the same few patterns. */
const read = new Map<string, Token[]>()
const READ_LIMIT = 1000

function tokensOf(pattern: string, caseInsensitive: boolean): Token[] {
  const key = (caseInsensitive ? 'i' : 's') + pattern
  let p = read.get(key)
  if (!p) {
    p = tokens(caseInsensitive ? pattern.toLowerCase() : pattern)
    if (read.size >= READ_LIMIT) read.clear()
    read.set(key, p)
  }
  return p
}

/** Whether `text` matches the LIKE `pattern` (ILIKE with `caseInsensitive`). */
export function like(text: string, pattern: string, caseInsensitive = false): boolean {
  const t = Array.from(caseInsensitive ? text.toLowerCase() : text)
  const p = tokensOf(pattern, caseInsensitive)
  let ti = 0
  let pi = 0
  let star = -1
  let resume = 0
  while (ti < t.length) {
    const token = p[pi]
    if (token && (token.kind === 'one' || (token.kind === 'char' && token.char === t[ti]))) {
      ti++
      pi++
    } else if (token && token.kind === 'any') {
      star = pi++
      resume = ti
    } else if (star >= 0) {
      pi = star + 1
      ti = ++resume
    } else {
      return false
    }
  }
  while (p[pi]?.kind === 'any') pi++
  return pi === p.length
}
