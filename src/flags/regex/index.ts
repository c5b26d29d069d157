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
import { runProgram, MAX_WORK, type WorkMeter } from './engine.js'
import { emitLinear, NotEmittable } from './emit.js'
import { parseRegex, RegexSyntaxError } from './parse.js'
import { compileProgram, type Program } from './program.js'

export interface SafeRegex {
  /**
   * true / false, or null when the search was refused or ran out of budget. `meter` adds the search's steps:
   * the own engine's count, or for V8's linear engine its bound, pattern size × (input length + 1).
   */
  test(input: string, meter?: WorkMeter): boolean | null
  /** Which engine runs ASCII input: 'linear' (V8 `l`) or 'own'. */
  readonly asciiEngine: 'linear' | 'own'
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

function build(pattern: string, dotAll: boolean): SafeRegex | null {
  let program: Program
  let linear: { re: RegExp; size: number } | null = null
  try {
    const parsed = parseRegex(pattern, dotAll)
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
  if (lin === null) return { asciiEngine: 'own', test: (input, meter) => runProgram(program, input, meter) }
  return {
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

function cached(dotAll: boolean): (pattern: string) => SafeRegex | null {
  const cache = new Map<string, SafeRegex | null>()
  return (pattern) => {
    if (cache.has(pattern)) return cache.get(pattern)!
    const compiled = build(pattern, dotAll)
    if (cache.size >= CACHE_LIMIT) cache.clear()
    cache.set(pattern, compiled)
    return compiled
  }
}

/** A compiled pattern, or null when Rust/fancy_regex would reject it. Compiled once per distinct pattern. */
export const compileRegex: (pattern: string) => SafeRegex | null = cached(false)

/**
 * A pattern as ClickHouse's `match` reads it, and so PostHog's event, person and action filters and HogQL's
 * match(): `.` matches a line break too (re2 with dot_nl, on 18.16 as on current servers), where the flags'
 * Rust regex does not. The event stores' Node side runs these.
 */
export const compileSearchRegex: (pattern: string) => SafeRegex | null = cached(true)
