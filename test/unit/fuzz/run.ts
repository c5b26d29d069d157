/**
 * The loop of the in-process fuzz tests of a request core: one seeded case after another, each either accepted
 * or refused with a 4xx AppError. Anything else thrown, a case over 2 s, or a property planted on
 * Object.prototype is a failure; the outcomes are counted and reported.
 */
import type { Test } from 'tap'
import { isAppError } from '../../../src/common/errors.js'
import { Rng, fuzzSeed } from './rng.js'
import { POLLUTION_MARKER } from './values.js'

export interface FuzzRun {
  seed: number
  cases: number
  /** FUZZ_CASE: run that one case alone. */
  only: number | null
}

export function fuzzRun(defaultCases: number): FuzzRun {
  return {
    seed: fuzzSeed(),
    cases: Number(process.env.FUZZ_UNIT_CASES ?? defaultCases),
    only: process.env.FUZZ_CASE === undefined ? null : Number(process.env.FUZZ_CASE),
  }
}

/**
 * Runs `attempt` on every case; it answers `accepted some` or `accepted none`, or throws. A fair share must be
 * `accepted some`, so the generator keeps reaching past the request checks.
 */
export function fuzzCases(t: Test, run: FuzzRun, what: string, attempt: (rng: Rng, i: number) => string): void {
  const outcomes = new Map<string, number>()
  const failures: string[] = []
  let slowest = 0
  for (let i = run.only ?? 0; i < (run.only === null ? run.cases : run.only + 1) && failures.length < 10; i++) {
    if (process.env.FUZZ_TRACE) process.stderr.write(`case ${i}\n`)
    const rng = new Rng(run.seed, i)
    const started = performance.now()
    let outcome: string
    try {
      outcome = attempt(rng, i)
    } catch (error) {
      if (isAppError(error) && error.status >= 400 && error.status < 500) outcome = `${error.status} ${error.code}`
      else {
        outcome = 'crash'
        failures.push(`case ${i}: ${error instanceof Error ? error.stack : String(error)}`.slice(0, 1500))
      }
    }
    const ms = performance.now() - started
    slowest = Math.max(slowest, ms)
    if (ms > 2000) failures.push(`case ${i}: took ${Math.round(ms)} ms`)
    if ((Object.prototype as Record<string, unknown>)[POLLUTION_MARKER] !== undefined) {
      failures.push(`case ${i}: Object.prototype.${POLLUTION_MARKER} was set`)
      delete (Object.prototype as Record<string, unknown>)[POLLUTION_MARKER]
    }
    outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1)
  }
  t.same(failures, [], `every ${what} is accepted or refused with a 4xx (reproduce one: FUZZ_SEED=${run.seed} FUZZ_CASE=<n>)`)
  t.ok((outcomes.get('accepted some') ?? 0) > run.cases / 20 || run.only !== null, `a fair share of the ${what}s got through to the events`)
  t.comment(`outcomes: ${JSON.stringify(Object.fromEntries([...outcomes].sort((a, b) => b[1] - a[1])))}; slowest case ${slowest.toFixed(1)} ms`)
}
