/**
 * Character escapes and bracketed classes of the Rust syntax: `\n`, `\x{..}`, `\d\s\w`, `\p{..}`, `[...]` with
 * ranges, nested classes, POSIX classes and the `&&` / `--` / `~~` set operations. Under `(?i)` a class is
 * case-folded before it is negated, as regex-syntax does (`(?i)\P{Lu}` excludes `a` as well as `A`).
 */
import { RegexSyntaxError, type Flags } from './ast.js'
import { caseFold, EMPTY, intersect, negate, normalize, single, subtract, symmetricDifference, type CharSet } from './charset.js'
import type { Scanner } from './scanner.js'
import { perlClass, posixClass, propertySet, re2Class, re2Property, resolveProperty } from './unicode.js'

interface EscapedSet {
  set: CharSet
  negated: boolean
}

const SIMPLE: Record<string, number> = { a: 7, f: 12, t: 9, n: 10, r: 13, v: 11, e: 27 }
const HEX_DIGITS: CharSet = [48, 57, 65, 70, 97, 102]
/** ASCII punctuation may be escaped; letters, digits, `<` and `>` may not (those mean something else). */
const ESCAPABLE = /^[\x20-\x2f\x3a-\x3b\x3d\x3f-\x40\x5b-\x60\x7b-\x7e]$/

/** The escape after `\` (its letter `c` already consumed), before folding and negation; null if unknown. */
function escapeBase(sc: Scanner, c: string, flags: Flags): EscapedSet | null {
  const one = (cp: number): EscapedSet => ({ set: single(cp), negated: false })
  if (flags.re2 && /[ehHuU]/.test(c)) throw new RegexSyntaxError(`re2 has no \\${c}`)
  if (c in SIMPLE) return one(SIMPLE[c])
  if (c === 'x') return one(sc.eat('{') ? sc.hex(1, 8, true) : sc.hex(2, 2, false))
  if (c === 'u') return one(sc.eat('{') ? sc.hex(1, 8, true) : sc.hex(4, 4, false))
  if (c === 'U') return one(sc.eat('{') ? sc.hex(1, 8, true) : sc.hex(8, 8, false))
  const lower = c.toLowerCase()
  if (lower === 'd' || lower === 's' || lower === 'w') return { set: flags.re2 ? re2Class(lower) : perlClass(lower, flags.u), negated: c !== lower }
  if (c === 'h' || c === 'H') return { set: HEX_DIGITS, negated: c === 'H' }
  if (c === 'p' || c === 'P') {
    let name: string
    if (sc.eat('{')) name = sc.until('}', 'property name')
    else {
      name = sc.peek()
      if (name === '') throw new RegexSyntaxError('missing property name')
      sc.pos++
    }
    let negated = c === 'P'
    if (name.startsWith('^')) {
      negated = !negated
      name = name.slice(1)
    }
    const resolved = flags.re2 ? re2Property(name) : resolveProperty(name)
    if (resolved === null) throw new RegexSyntaxError('unknown Unicode property')
    return { set: typeof resolved === 'string' ? propertySet(resolved) : resolved, negated }
  }
  return ESCAPABLE.test(c) ? one(c.codePointAt(0)!) : null
}

function finish(e: EscapedSet, flags: Flags): CharSet {
  const set = flags.i ? caseFold(e.set, flags.u) : e.set
  return e.negated ? negate(set) : set
}

/** A class or character escape outside brackets; null when `c` starts no such escape. */
export function charEscape(sc: Scanner, c: string, flags: Flags): CharSet | null {
  const e = escapeBase(sc, c, flags)
  return e === null ? null : finish(e, flags)
}

/** A class item: one character (a possible range endpoint, left unfolded) or an escaped class. */
function classAtom(sc: Scanner, flags: Flags): CharSet {
  const cp = sc.cps[sc.pos++]
  if (cp !== 92) return single(cp)
  const c = sc.peek()
  sc.pos++
  const e = c === '' ? null : escapeBase(sc, c, flags)
  if (e === null) throw new RegexSyntaxError('unrecognized escape in class')
  if (e.set.length === 2 && e.set[0] === e.set[1] && !e.negated) return e.set
  return finish(e, flags)
}

function skipClassSpace(sc: Scanner, flags: Flags): void {
  if (flags.x) while (sc.peek() !== '' && /\s/.test(sc.peek())) sc.pos++
}

/** A bracketed class after its `[`: the union of its items, then `&&`, `--`, `~~` left to right, then `^`. */
export function classBody(sc: Scanner, flags: Flags): CharSet {
  sc.nest()
  const negated = sc.eat('^')
  let result: CharSet | null = null
  let op = ''
  let acc: number[] = []
  const combine = (): void => {
    const set = normalize(acc)
    result = result === null ? set : op === '&&' ? intersect(result, set) : op === '--' ? subtract(result, set) : symmetricDifference(result, set)
    acc = []
  }
  for (let first = true; ; first = false) {
    skipClassSpace(sc, flags)
    const c = sc.peek()
    if (c === '') throw new RegexSyntaxError('unclosed class')
    if (c === ']' && !first) {
      sc.pos++
      break
    }
    if (sc.eat('&&') || sc.eat('--') || sc.eat('~~')) {
      if (flags.re2) throw new RegexSyntaxError('re2 has no set operations of classes')
      combine()
      op = c + c
      continue
    }
    if (c === '[') {
      // As regex-syntax reads it: `[:name:]` with a name it does not know is a nested class (`[[:loower:]]`
      // holds `:elorw`), not an error. Every known name is lower-case ASCII of at most 6 letters.
      const posix = /^\[:(\^?)([a-z]+):\]/.exec(String.fromCodePoint(...sc.cps.slice(sc.pos, sc.pos + 12)))
      const set = posix === null ? null : posixClass(posix[2])
      if (posix !== null && set !== null) {
        sc.pos += posix[0].length
        acc.push(...(posix[1] === '^' ? negate(set) : set))
      } else {
        if (flags.re2) throw new RegexSyntaxError('re2 reads no class within a class')
        sc.pos++
        acc.push(...classBody(sc, flags))
      }
      continue
    }
    const start = classAtom(sc, flags)
    const isChar = start.length === 2 && start[0] === start[1]
    if (isChar && sc.peek() === '-' && sc.peek(1) !== ']' && sc.peek(1) !== '-') {
      sc.pos++
      skipClassSpace(sc, flags)
      const end = classAtom(sc, flags)
      if (end.length !== 2 || end[0] !== end[1] || end[0] < start[0]) throw new RegexSyntaxError('invalid class range')
      acc.push(start[0], end[0])
    } else acc.push(...start)
  }
  combine()
  const set = flags.i ? caseFold(result ?? EMPTY, flags.u) : (result ?? EMPTY)
  sc.depth--
  return negated ? negate(set) : set
}
