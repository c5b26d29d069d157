/**
 * Safe regular expressions for the `regex` / `not_regex` operators. A hostile pattern must never stall a
 * thread, so no user pattern ever runs on V8's backtracking engine:
 *
 * - patterns are parsed with Rust/fancy_regex syntax (`parse.ts`); syntax either rejects → invalid;
 * - on ASCII input, plain patterns run on V8's linear-time engine (`l` flag), emitted by `emit.ts`;
 * - everything else (non-ASCII input, look-around, backreferences, repetitions V8's engine refuses) runs on
 *   `engine.ts`, linear without backreferences and budgeted like fancy_regex with them;
 * - pattern size × input length is capped; above the cap, as on a budget overrun, there is no answer,
 *   which PostHog (an error from the regex engine) reports as false for both operators.
 */
import { setFlagsFromString } from 'node:v8'
import { findInProgram, runProgram, toCodePoints, MAX_WORK, type WorkMeter } from './engine.js'
import { emitLinear, NotEmittable } from './emit.js'
import { parseRegex, RegexSyntaxError } from './parse.js'
import type { Parsed } from './ast.js'
import { compileProgram, nullable, type Program } from './program.js'

export interface SafeRegex {
  /**
   * true / false, or null when the search was refused or ran out of budget. `meter` adds the search's steps:
   * the own engine's count, or for V8's linear engine its bound, pattern size × (input length + 1).
   */
  test(input: string, meter?: WorkMeter): boolean | null
  /** Which engine runs ASCII input: 'linear' (V8 `l`) or 'own'. */
  readonly asciiEngine: 'linear' | 'own'
  /** The pattern's capturing groups. */
  readonly groups: number
  /** Whether it can match without taking a character (`x*`, `^`, `a|`). */
  readonly canMatchEmpty: boolean
  /** Whether it needs fancy_regex's backtracking (look-around, backreferences), which re2 lacks. */
  readonly fancy: boolean
  /**
   * The first match starting at or after UTF-16 offset `from` (a code point's start): its start and end, then each group's (-1 where a
   * group took no part), as UTF-16 offsets; null for none; undefined when refused (a fancy pattern) or out of
   * budget. Always the own engine, which reports groups.
   */
  find(input: string, from?: number): Int32Array | null | undefined
}

/** `input`'s UTF-16 offset of each code point offset (one past the end included), or null where they are the same. */
function utf16Offsets(input: string, cps: Int32Array): Int32Array | null {
  if (cps.length === input.length) return null
  const at = new Int32Array(cps.length + 1)
  for (let k = 0; k < cps.length; k++) at[k + 1] = at[k] + (cps[k] > 0xffff ? 2 : 1)
  return at
}

/** The code point offset of UTF-16 offset `from` (a code point's start): a binary search of `at`. */
function codePointIndex(at: Int32Array, from: number): number {
  let [lo, hi] = [0, at.length - 1]
  while (lo < hi) {
    const mid = (lo + hi) >> 1
    if (at[mid] < from) lo = mid + 1
    else hi = mid
  }
  return lo
}

function finder(parsed: Parsed): SafeRegex['find'] {
  let program: Program | null = null
  // The last text's code points: replaceRegexpAll finds in one text from each match's end on.
  let last: { input: string; cps: Int32Array; at: Int32Array | null } | null = null
  return (input, from = 0) => {
    if (parsed.fancy) return undefined
    try {
      program ??= compileProgram(parsed, true)
    } catch (e) {
      // Its groups' saves may take it past the size the test's program kept under.
      if (e instanceof RegexSyntaxError) return undefined
      throw e
    }
    if (last?.input !== input) {
      const points = toCodePoints(input)
      last = { input, cps: points, at: utf16Offsets(input, points) }
    }
    const { cps, at } = last
    const found = findInProgram(program, cps, at === null ? from : codePointIndex(at, from))
    if (found === null || found === undefined || at === null) return found
    return found.map((k) => (k < 0 ? k : at[k]))
  }
}

let linearEnabled = false

/**
 * Turns on V8's experimental linear-time regexp engine so `new RegExp(p, 'l')` is accepted. Idempotent; the
 * flag only adds the `l` flag and changes nothing for regexps without it.
 */
export function enableLinearRegex(): void {
  if (linearEnabled) return
  setFlagsFromString('--enable-experimental-regexp-engine')
  linearEnabled = true
}

const ASCII_ONLY = /^[\x00-\x7f]*$/

function build(pattern: string, clickhouse: boolean): SafeRegex | null {
  let program: Program
  let parsed: Parsed
  let linear: { re: RegExp; size: number } | null = null
  try {
    parsed = parseRegex(pattern, clickhouse)
    program = compileProgram(parsed)
    if (!parsed.fancy) {
      try {
        const { source, size } = emitLinear(parsed.node)
        enableLinearRegex()
        linear = { re: new RegExp(source, 'l'), size }
      } catch (e) {
        // V8 refuses some linear patterns (e.g. repetitions over 16); the own engine runs those
        if (!(e instanceof NotEmittable) && !(e instanceof SyntaxError)) throw e
      }
    }
  } catch (e) {
    if (e instanceof RegexSyntaxError || e instanceof RangeError) return null
    throw e
  }
  const lin = linear
  const shape = { groups: parsed.captures, canMatchEmpty: nullable(parsed.node), fancy: parsed.fancy, find: finder(parsed) }
  if (lin === null) return { ...shape, asciiEngine: 'own', test: (input, meter) => runProgram(program, input, meter) }
  return {
    ...shape,
    asciiEngine: 'linear',
    test: (input, meter) => {
      if (!ASCII_ONLY.test(input)) return runProgram(program, input, meter)
      const work = lin.size * (input.length + 1)
      if (work > MAX_WORK) return null
      if (meter !== undefined) meter.steps += work
      return lin.re.test(input)
    },
  }
}

const CACHE_LIMIT = 4096

function cached(clickhouse: boolean): (pattern: string) => SafeRegex | null {
  const cache = new Map<string, SafeRegex | null>()
  return (pattern) => {
    if (cache.has(pattern)) return cache.get(pattern)!
    const compiled = build(pattern, clickhouse)
    if (cache.size >= CACHE_LIMIT) cache.clear()
    cache.set(pattern, compiled)
    return compiled
  }
}

/** A compiled pattern, or null when Rust/fancy_regex would reject it. Compiled once per distinct pattern. */
export const compileRegex: (pattern: string) => SafeRegex | null = cached(false)

/**
 * A pattern as ClickHouse's re2 reads it, and so PostHog's event, person and action filters and HogQL's regex
 * functions: `.` matches a line break too (dot_nl, on 18.16 as on current servers), and `\d`, `\s`, `\w`, `\b` are
 * ASCII's, where the flags' Rust regex reads them of Unicode. The event stores' Node side runs these.
 */
export const compileSearchRegex: (pattern: string) => SafeRegex | null = cached(true)
