/**
 * A bounded backtracking matcher over `program.ts` instructions, working on code points with Rust's Unicode
 * semantics. Without backreferences it memoises failed (instruction, position) pairs, so every search is
 * linear in pattern × input. Patterns with fancy_regex features also get fancy_regex's budget of 10,000
 * backtracks (start positions included): past it PostHog reports an error, i.e. a non-match for both
 * `regex` and `not_regex`, and so does this engine.
 */
import { contains, variants, type CharSet } from './charset.js'
import type { AssertKind } from './ast.js'
import { Op, type Program } from './program.js'
import { perlClass } from './unicode.js'

/** fancy_regex's `backtrack_limit` as PostHog configures it. */
export const FANCY_BACKTRACK_LIMIT = 10_000
/** Above this many (instruction × position) states a search is refused rather than risk a slow request. */
export const MAX_WORK = 10_000_000
/**
 * Steps a search with fancy_regex features may take in all. The backtrack limit counts only the main
 * program's choice points, so a look-around re-run at each of 10,000 start positions over a long input
 * (`(?=(a+))+b` on 600 KB of `a`) would otherwise take up to 4 × MAX_WORK steps, over a second.
 */
export const FANCY_STEP_LIMIT = 2_000_000
const MAX_MEMO_BITS = 64_000_000

/** Thrown inside a search when a budget runs out; the search then answers "no result". */
class Exhausted extends Error {}

export function toCodePoints(s: string): Int32Array {
  const out = new Int32Array(s.length)
  let n = 0
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1)
      if (d >= 0xdc00 && d <= 0xdfff) {
        out[n++] = (c - 0xd800) * 0x400 + (d - 0xdc00) + 0x10000
        i++
        continue
      }
    }
    out[n++] = c
  }
  return out.subarray(0, n)
}

/**
 * Counts a search's work in engine steps, so tests can hold hostile patterns to a bound without reading a
 * clock (a timed assertion fails on a loaded machine, not on slow code).
 */
export interface WorkMeter {
  steps: number
}

/** True / false for a completed search; null when a budget ran out (PostHog: error → false for both operators). */
export function runProgram(prog: Program, input: string, meter?: WorkMeter): boolean | null {
  const cps = toCodePoints(input)
  if (prog.op.length * (cps.length + 1) > MAX_WORK) return null
  const search = new Search(prog, cps)
  try {
    return search.find()
  } catch (e) {
    if (e instanceof Exhausted) return null
    throw e
  } finally {
    if (meter !== undefined) meter.steps += search.steps
  }
}

/**
 * The first match starting at or after code point `from`: its start and end, then each group's (-1 where a
 * group took no part), as code point offsets; null for none, undefined when a budget ran out. `prog` must
 * save its groups (compileProgram's `saves`).
 */
export function findInProgram(prog: Program, cps: Int32Array, from: number): Int32Array | null | undefined {
  if (prog.op.length * (cps.length + 1) > MAX_WORK) return undefined
  try {
    return new Search(prog, cps).first(from)
  } catch (e) {
    if (e instanceof Exhausted) return undefined
    throw e
  }
}

const WORD_UNICODE = (): CharSet => perlClass('w', true)
const WORD_ASCII: CharSet = [48, 57, 65, 90, 95, 95, 97, 122]

class Search {
  readonly #p: Program
  readonly #s: Int32Array
  readonly #n: number
  readonly #memo: Uint8Array | null
  readonly #caps: Int32Array
  #steps = 0
  readonly #maxSteps: number
  get steps(): number {
    return this.#steps
  }
  #pops = 0
  #touched: number[] | null = null
  readonly #subCache = new Map<number, Int32Array>()
  #word: CharSet | null = null

  constructor(prog: Program, cps: Int32Array) {
    this.#p = prog
    this.#s = cps
    this.#n = cps.length
    const states = prog.op.length * (cps.length + 1)
    this.#memo = !prog.backrefs && states <= MAX_MEMO_BITS ? new Uint8Array((states >> 3) + 1) : null
    this.#caps = new Int32Array(prog.slots).fill(-1)
    this.#maxSteps = prog.fancy ? Math.min(4 * states + 100_000, FANCY_STEP_LIMIT) : 4 * states + 100_000
  }

  find(): boolean {
    return this.first(0) !== null
  }

  /** The leftmost match from `from` on, the pattern's preferred one there (re2's and Rust's leftmost-first). */
  first(from: number): Int32Array | null {
    for (let start = from; start <= this.#n; start++) {
      this.#caps.fill(-1)
      const end = this.#exec(this.#p.start, start, true)
      if (end >= 0) {
        this.#caps[0] = start
        this.#caps[1] = end
        return this.#caps
      }
    }
    return null
  }

  #isWord(i: number, unicode: boolean): boolean {
    if (i < 0 || i >= this.#n) return false
    const set = unicode ? (this.#word ??= WORD_UNICODE()) : WORD_ASCII
    return contains(set, this.#s[i])
  }

  #assert(kind: AssertKind, unicode: boolean, pos: number): boolean {
    const s = this.#s
    const n = this.#n
    switch (kind) {
      case 'start':
        return pos === 0
      case 'end':
        return pos === n
      case 'lineStart':
        return pos === 0 || s[pos - 1] === 10
      case 'lineEnd':
        return pos === n || s[pos] === 10
      case 'crlfStart':
        return pos === 0 || s[pos - 1] === 10 || (s[pos - 1] === 13 && s[pos] !== 10)
      case 'crlfEnd':
        return pos === n || s[pos] === 13 || (s[pos] === 10 && s[pos - 1] !== 13)
      case 'word':
        return this.#isWord(pos - 1, unicode) !== this.#isWord(pos, unicode)
      case 'notWord':
        return this.#isWord(pos - 1, unicode) === this.#isWord(pos, unicode)
      case 'wordStart':
        return !this.#isWord(pos - 1, unicode) && this.#isWord(pos, unicode)
      case 'wordEnd':
        return this.#isWord(pos - 1, unicode) && !this.#isWord(pos, unicode)
      case 'wordStartHalf':
        return !this.#isWord(pos - 1, unicode)
      case 'wordEndHalf':
        return !this.#isWord(pos, unicode)
    }
  }

  #backref(group: number, caseInsensitive: boolean, pos: number): number {
    const from = this.#caps[group * 2]
    const to = this.#caps[group * 2 + 1]
    if (from < 0 || to < 0) return -1
    const len = to - from
    if (pos + len > this.#n) return -1
    for (let k = 0; k < len; k++) {
      const a = this.#s[from + k]
      const b = this.#s[pos + k]
      if (a !== b && !(caseInsensitive && variants(a, true).includes(b))) return -1
    }
    return pos + len
  }

  /** Runs a look-around or atomic body at `pos`; returns its first end position, or -1. */
  #sub(pc: number, body: number, pos: number): number {
    const cacheable = !this.#p.backrefs
    let cache: Int32Array | undefined
    if (cacheable) {
      cache = this.#subCache.get(pc)
      if (cache === undefined) this.#subCache.set(pc, (cache = new Int32Array(this.#n + 1)))
      if (cache[pos] !== 0) return cache[pos] - 2
    }
    const outer = this.#touched
    this.#touched = []
    const end = this.#exec(body, pos, false)
    if (this.#memo !== null) for (const bit of this.#touched) this.#memo[bit >> 3] &= ~(1 << (bit & 7))
    this.#touched = outer
    if (cache !== undefined) cache[pos] = end + 2
    return end
  }

  /**
   * Depth-first search from (pc, pos) in priority order; returns the end position of the first match or -1.
   * The main program (`main`) counts its backtracks, one per start position included, against
   * fancy_regex's limit: fancy_regex also searches by backtracking into an implicit leading `.*?`.
   */
  #exec(startPc: number, startPos: number, main: boolean): number {
    const { op, a, b, c, sets, asserts } = this.#p
    const memo = this.#memo
    const width = op.length
    const caps = this.#caps
    // choice points: [pc, pos] pairs; capture restores are encoded with pc = -1 - slot
    const stack: number[] = [startPc, startPos]
    while (stack.length > 0) {
      let pos = stack.pop()!
      let pc = stack.pop()!
      if (pc < 0) {
        caps[-1 - pc] = pos
        continue
      }
      if (main && this.#p.fancy && ++this.#pops > FANCY_BACKTRACK_LIMIT) throw new Exhausted()
      for (;;) {
        if (this.#steps === this.#maxSteps) throw new Exhausted()
        this.#steps++
        if (memo !== null) {
          const bit = pos * width + pc
          if (memo[bit >> 3] & (1 << (bit & 7))) break
          memo[bit >> 3] |= 1 << (bit & 7)
          if (this.#touched !== null) this.#touched.push(bit)
        }
        switch (op[pc]) {
          case Op.Char:
            if (pos < this.#n && contains(sets[a[pc]], this.#s[pos])) {
              pos++
              pc++
              continue
            }
            break
          case Op.Split:
            stack.push(b[pc], pos)
            pc = a[pc]
            continue
          case Op.Jmp:
            pc = a[pc]
            continue
          case Op.Match:
          case Op.SubMatch:
            return pos
          case Op.Assert:
            if (this.#assert(asserts[a[pc]].kind, asserts[a[pc]].unicode, pos)) {
              pc++
              continue
            }
            break
          case Op.Save:
          case Op.LoopEnter:
            stack.push(-1 - a[pc], caps[a[pc]])
            caps[a[pc]] = pos
            pc++
            continue
          case Op.LoopCheck:
            if (caps[a[pc]] === pos) break
            pc++
            continue
          case Op.Backref: {
            const end = this.#backref(a[pc], b[pc] === 1, pos)
            if (end < 0) break
            pos = end
            pc++
            continue
          }
          case Op.Look: {
            const from = c[pc] < 0 ? pos : pos - c[pc]
            const before = this.#p.backrefs ? caps.slice() : null
            const found = from >= 0 && this.#sub(pc, a[pc], from) >= 0
            const negated = b[pc] === 1
            if (found === negated || negated) {
              // a failed look-around, or a negative one, leaves no captures behind
              if (before !== null) caps.set(before)
              if (found === negated) break
            } else this.#keepCaptures(before, stack)
            pc++
            continue
          }
          case Op.Atomic: {
            const before = this.#p.backrefs ? caps.slice() : null
            const end = this.#sub(pc, a[pc], pos)
            if (end < 0) break
            this.#keepCaptures(before, stack)
            pos = end
            pc++
            continue
          }
        }
        break
      }
    }
    return -1
  }

  /** Captures set inside a look-around or atomic body survive it, but must be undone when backtracking past it. */
  #keepCaptures(before: Int32Array | null, stack: number[]): void {
    if (before === null) return
    for (let k = 0; k < before.length; k++) if (before[k] !== this.#caps[k]) stack.push(-1 - k, before[k])
  }
}
