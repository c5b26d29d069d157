/**
 * A parser for the pattern syntax PostHog's flag service accepts: Rust's `regex` crate syntax plus the
 * `fancy_regex` extensions (look-around, backreferences, atomic groups, possessive quantifiers). Anything
 * either crate rejects throws `RegexSyntaxError`; the caller then treats the pattern as invalid, which makes
 * both `regex` and `not_regex` false, as in PostHog.
 */
import { concat, RegexSyntaxError, type AssertKind, type Flags, type Node, type Parsed } from './ast.js'
import { EMPTY, negate, normalize, single, subtract, variants, type CharSet } from './charset.js'
import { charEscape, classBody } from './classes.js'
import { Scanner } from './scanner.js'

export { fixedWidth, RegexSyntaxError, type AssertKind, type Node, type Parsed } from './ast.js'

const REPEAT_LIMIT = 100_000
const ALL: CharSet = negate(EMPTY)
const ASSERT_ESCAPES: Record<string, AssertKind> = { A: 'start', z: 'end', B: 'notWord', '<': 'wordStart', '>': 'wordEnd' }
/** A Map: the name comes from the pattern, and a plain object would also answer `\b{constructor}`. */
const WORD_BOUNDARIES: ReadonlyMap<string, AssertKind> = new Map([
  ['start', 'wordStart'],
  ['end', 'wordEnd'],
  ['start-half', 'wordStartHalf'],
  ['end-half', 'wordEndHalf'],
])

const EMPTY_NODE: Node = { type: 'empty' }

/**
 * Whether a quantifier may follow `node`, as fancy_regex decides it (from 0.17, after Oniguruma): not on an
 * assertion, a look-around or nothing. Its non-capturing groups are their contents, so `(?:^)*` is refused
 * where `(^)*` is not.
 */
function repeatable(node: Node): boolean {
  if (node.type === 'group' && node.capture === null) return repeatable(node.node)
  return node.type !== 'assert' && node.type !== 'look' && node.type !== 'empty'
}

/**
 * `clickhouse`: read as ClickHouse's re2 reads it: `.` matching line breaks from the start (as after `(?s)`: dot_nl),
 * and re2's ASCII classes (Flags.re2).
 */
export function parseRegex(pattern: string, clickhouse = false): Parsed {
  return new Parser(pattern).parse(clickhouse)
}

/** A character as itself, or as each of its case variants under `(?i)`. */
const literal = (cp: number, flags: Flags): Node => ({ type: 'set', set: flags.i ? normalize(variants(cp, flags.u).flatMap((v) => [v, v])) : single(cp) })

class Parser {
  readonly #sc: Scanner
  #captures = 0
  readonly #names = new Map<string, number>()
  #fancy = false
  #backrefs = false

  constructor(pattern: string) {
    this.#sc = new Scanner(pattern)
  }

  parse(clickhouse: boolean): Parsed {
    const node = this.#alternation({ i: false, m: false, s: clickhouse, x: false, u: true, R: false, U: false, re2: clickhouse })
    if (!this.#sc.done) throw new RegexSyntaxError('unopened group')
    return { node, captures: this.#captures, fancy: this.#fancy, backrefs: this.#backrefs }
  }

  /** Alternatives up to `)` or the end; `flags` may be changed by a bare `(?flags)` inside. */
  #alternation(flags: Flags): Node {
    const sc = this.#sc
    sc.nest()
    const branches: Node[] = []
    let items: Node[] = []
    for (;;) {
      sc.skipVerbose(flags)
      const c = sc.peek()
      if (c === '' || c === ')') break
      if (c === '|') {
        sc.pos++
        branches.push(concat(items))
        items = []
        continue
      }
      // fancy_regex reads a `{` where no quantifier can stand as a literal, so only these three have nothing to repeat
      if (c === '*' || c === '+' || c === '?') throw new RegexSyntaxError('repetition operator missing expression')
      // re2's `\Q…\E`: the quoted characters are literals, and a quantifier after them repeats the last one.
      const quoted = flags.re2 && sc.eat('\\Q') ? this.#quoted(flags) : null
      if (quoted !== null) items.push(...quoted.slice(0, -1))
      if (quoted?.length === 0) continue
      const atom = quoted === null ? this.#atom(flags) : quoted[quoted.length - 1]
      // a bare flag group is fancy_regex's Empty: a quantifier after it is refused as a target not repeatable
      const quantified = this.#quantified(atom ?? EMPTY_NODE, flags)
      if (atom !== null) items.push(quantified)
    }
    branches.push(concat(items))
    sc.depth--
    return branches.length === 1 ? branches[0] : { type: 'alt', items: branches }
  }

  /**
   * `atom` and the quantifier after it, if any. As fancy_regex parses a piece: one quantifier at most (a second
   * `*`, `+` or `?` is an error, a `{` starts the next atom), and only what can repeat may carry one.
   */
  #quantified(atom: Node, flags: Flags): Node {
    const sc = this.#sc
    sc.skipVerbose(flags)
    const c = sc.peek()
    let range: [number, number] | null
    if (c === '*') range = [0, Infinity]
    else if (c === '+') range = [1, Infinity]
    else if (c === '?') range = [0, 1]
    else if (c === '{') range = this.#counted(flags)
    else return atom
    if (range === null) return atom
    if (!repeatable(atom)) throw new RegexSyntaxError('target of repetition is not repeatable')
    if (c !== '{') sc.pos++
    const [min, max] = range
    let greedy = !flags.U
    let possessive = false
    // fancy_regex: a lazy `?`, then a possessive `+` (the two may come together), with no space between
    sc.skipVerbose(flags)
    if (sc.eat('?')) greedy = flags.U
    if (sc.eat('+')) possessive = this.#fancy = true
    sc.skipVerbose(flags)
    const next = sc.peek()
    if (next === '*' || next === '+' || next === '?') throw new RegexSyntaxError('repetition operator missing expression')
    return { type: 'repeat', node: atom, min, max, greedy, possessive }
  }

  /**
   * `{n}`, `{n,}`, `{n,m}`, and fancy_regex's `{,m}` and `{,}` (from 0); leaves the cursor after the closing
   * brace. Anything else is not a quantifier: null, the cursor left on the `{`, which is then a literal
   * (fancy_regex follows PCRE and Oniguruma there, where regex-syntax alone would refuse the pattern).
   */
  #counted(flags: Flags): [number, number] | null {
    const sc = this.#sc
    const start = sc.pos
    sc.pos++
    const num = (): number | null => {
      sc.skipVerbose(flags)
      let s = ''
      while (/[0-9]/.test(sc.peek())) s += sc.cps[sc.pos++] - 48
      sc.skipVerbose(flags)
      return s === '' ? null : Number(s)
    }
    const min = num() ?? (sc.peek() === ',' && !flags.re2 ? 0 : null)
    const max = min === null ? null : sc.eat(',') ? (num() ?? Infinity) : min
    if (min === null || max === null || !sc.eat('}')) {
      sc.pos = start
      return null
    }
    if (max < min) throw new RegexSyntaxError('invalid repetition range')
    if (min > REPEAT_LIMIT || (max !== Infinity && max > REPEAT_LIMIT)) throw new RegexSyntaxError('repetition too large')
    return [min, max]
  }

  /** One atom, or null for a bare flag group that only changed `flags`. */
  #atom(flags: Flags): Node | null {
    const sc = this.#sc
    const cp = sc.cps[sc.pos++]
    switch (String.fromCodePoint(cp)) {
      case '(':
        return this.#group(flags)
      case '[':
        return { type: 'set', set: classBody(sc, flags) }
      case '.':
        return { type: 'set', set: flags.s ? ALL : flags.R ? subtract(ALL, [10, 10, 13, 13]) : subtract(ALL, [10, 10]) }
      case '^':
        return { type: 'assert', kind: flags.m ? (flags.R ? 'crlfStart' : 'lineStart') : 'start', unicode: flags.u }
      case '$':
        return { type: 'assert', kind: flags.m ? (flags.R ? 'crlfEnd' : 'lineEnd') : 'end', unicode: flags.u }
      case '\\':
        return this.#escape(flags)
      default:
        return literal(cp, flags)
    }
  }

  /** The characters after `\Q`, up to `\E` (consumed) or the end, as literals. */
  #quoted(flags: Flags): Node[] {
    const sc = this.#sc
    const literals: Node[] = []
    while (sc.peek() !== '' && !sc.eat('\\E')) literals.push(literal(sc.cps[sc.pos++], flags))
    return literals
  }

  #group(outer: Flags): Node | null {
    const sc = this.#sc
    let capture: number | null = null
    let flags = outer
    if (sc.eat('?')) {
      if (sc.eat('=') || sc.eat('!')) return this.#look(outer, false, sc.cps[sc.pos - 1] === 33)
      if (sc.eat('<=') || sc.eat('<!')) return this.#look(outer, true, sc.cps[sc.pos - 1] === 33)
      if (sc.eat('>')) {
        this.#fancy = true
        return { type: 'atomic', node: this.#body({ ...outer }) }
      }
      if (sc.eat('P=')) return this.#namedBackref(sc.until(')', 'group name'), outer)
      if (sc.eat('P<') || (!outer.re2 && sc.eat('<'))) capture = this.#newCapture(sc.name())
      else {
        const [next, scoped] = this.#flags(outer)
        if (!scoped) {
          Object.assign(outer, next)
          return null
        }
        flags = next
      }
    } else capture = this.#newCapture(null)
    return { type: 'group', node: this.#body({ ...flags }), capture }
  }

  /** A group's contents and its closing parenthesis. */
  #body(flags: Flags): Node {
    const node = this.#alternation(flags)
    if (!this.#sc.eat(')')) throw new RegexSyntaxError('unclosed group')
    return node
  }

  #look(outer: Flags, behind: boolean, negated: boolean): Node {
    this.#fancy = true
    return { type: 'look', node: this.#body({ ...outer }), behind, negate: negated }
  }

  #newCapture(name: string | null): number {
    const index = ++this.#captures
    if (name !== null) {
      if (this.#names.has(name)) throw new RegexSyntaxError('duplicate capture group name')
      this.#names.set(name, index)
    }
    return index
  }

  /** `(?imsxuRU-imsxuRU)` or `(?...:`; returns the new flags and whether they scope a group. */
  #flags(outer: Flags): [Flags, boolean] {
    const sc = this.#sc
    const next = { ...outer }
    let negated = false
    let any = false
    for (;;) {
      const c = sc.peek()
      sc.pos++
      if (c === ')' || c === ':') {
        // `(?:...)` is a plain non-capturing group; `(?)` and a dangling `-` are errors
        if ((c === ')' && !any) || (negated && sc.cps[sc.pos - 2] === 45)) throw new RegexSyntaxError('empty flag group')
        return [next, c === ':']
      }
      if (c === '-') {
        if (negated) throw new RegexSyntaxError('repeated negation')
        negated = true
      } else if (c === 'i' || c === 'm' || c === 's' || c === 'U' || (!outer.re2 && (c === 'x' || c === 'u' || c === 'R'))) {
        next[c] = !negated
        any = true
      } else throw new RegexSyntaxError('unrecognized flag')
    }
  }

  #escape(flags: Flags): Node {
    const sc = this.#sc
    const c = sc.peek()
    if (c === '') throw new RegexSyntaxError('incomplete escape')
    sc.pos++
    const unicode = flags.u && !flags.re2
    if (flags.re2 && (c === '<' || c === '>')) return { type: 'set', set: single(c.codePointAt(0)!) }
    if (c in ASSERT_ESCAPES) return { type: 'assert', kind: ASSERT_ESCAPES[c], unicode }
    if (c === 'b') {
      if (flags.re2 || !sc.eat('{')) return { type: 'assert', kind: 'word', unicode }
      const kind = WORD_BOUNDARIES.get(sc.until('}', 'word boundary'))
      if (kind === undefined) throw new RegexSyntaxError('unknown word boundary')
      return { type: 'assert', kind, unicode }
    }
    if (/[1-9]/.test(c)) {
      let n = c
      while (/[0-9]/.test(sc.peek())) n += sc.cps[sc.pos++] - 48
      return this.#backref(Number(n), flags)
    }
    if (c === 'k' && sc.eat('<')) return this.#namedBackref(sc.name(), flags)
    const set = charEscape(sc, c, flags)
    if (set === null) throw new RegexSyntaxError('unrecognized escape')
    return { type: 'set', set }
  }

  /** `\k<name>` and Python's `(?P=name)`: a backreference to a group named before it. */
  #namedBackref(name: string, flags: Flags): Node {
    const index = this.#names.get(name)
    if (index === undefined) throw new RegexSyntaxError('unknown group name')
    return this.#backref(index, flags)
  }

  #backref(group: number, flags: Flags): Node {
    if (group > this.#captures) throw new RegexSyntaxError('invalid backref')
    this.#fancy = this.#backrefs = true
    return { type: 'backref', group, caseInsensitive: flags.i }
  }
}
