/** The parsed form of a pattern, shared by the parser, the compiler to `program.ts` and the JS emitter. */
import type { CharSet } from './charset.js'

export type AssertKind = 'start' | 'end' | 'lineStart' | 'lineEnd' | 'crlfStart' | 'crlfEnd' | 'word' | 'notWord' | 'wordStart' | 'wordEnd' | 'wordStartHalf' | 'wordEndHalf'

export type Node =
  | { type: 'empty' }
  /** One character from the set (literals, classes and `.` alike; case folding already applied). */
  | { type: 'set'; set: CharSet }
  | { type: 'concat'; items: Node[] }
  | { type: 'alt'; items: Node[] }
  | { type: 'repeat'; node: Node; min: number; max: number; greedy: boolean; possessive: boolean }
  | { type: 'group'; node: Node; capture: number | null }
  | { type: 'assert'; kind: AssertKind; unicode: boolean }
  | { type: 'look'; node: Node; behind: boolean; negate: boolean }
  | { type: 'backref'; group: number; caseInsensitive: boolean }
  | { type: 'atomic'; node: Node }

export interface Parsed {
  node: Node
  captures: number
  /** Uses a feature only `fancy_regex` (a backtracking engine) supports. */
  fancy: boolean
  backrefs: boolean
}

/**
 * Inline flags in effect: `i`, `m`, `s`, `x` (verbose), `u` (Unicode, on by default), `R` (CRLF lines), `U` (lazy
 * repetitions greedy and greedy ones lazy); and `re2`, no flag of the pattern's: the syntax read as re2's (ClickHouse's
 * regexes, parseRegex's `clickhouse`): `\d`, `\s`, `\w` and `\b` of ASCII (`\s` without \v), folding case still by
 * Unicode, `\<` and `\>` literals, `{,m}` no repetition, and what re2 lacks refused (the flags `x`, `u`, `R`, `\h`, `\e`,
 * `\u`, classes' set operations and nesting, `(?<name>`, which 18.16's re2 refuses: `(?P<name>` is read).
 */
export interface Flags {
  i: boolean
  m: boolean
  s: boolean
  x: boolean
  u: boolean
  R: boolean
  U: boolean
  re2: boolean
}

export class RegexSyntaxError extends Error {}

export function concat(items: Node[]): Node {
  if (items.length === 0) return { type: 'empty' }
  return items.length === 1 ? items[0] : { type: 'concat', items }
}

/** Width in characters when every match of `node` has the same width, else null (look-behind needs it). */
export function fixedWidth(node: Node): number | null {
  switch (node.type) {
    case 'empty':
    case 'assert':
    case 'look':
      return 0
    case 'set':
      return 1
    case 'concat': {
      let w = 0
      for (const n of node.items) {
        const x = fixedWidth(n)
        if (x === null) return null
        w += x
      }
      return w
    }
    case 'alt': {
      const widths = node.items.map(fixedWidth)
      return widths.every((w) => w !== null && w === widths[0]) ? widths[0] : null
    }
    case 'repeat': {
      const w = fixedWidth(node.node)
      return w !== null && node.min === node.max ? w * node.min : w === 0 ? 0 : null
    }
    case 'group':
    case 'atomic':
      return fixedWidth(node.node)
    case 'backref':
      return null
  }
}
