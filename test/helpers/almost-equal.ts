import type { Test } from 'tap'

/**
 * Python's assertAlmostEqual(found, wanted, places): |found − wanted| rounded to `places` decimals is 0, the
 * tolerance PostHog's statistics tests state their expected numbers with.
 */
export function almostEqual(t: Test, found: number, wanted: number, places: number, message: string) {
  t.ok(Math.round(Math.abs(found - wanted) * 10 ** places) === 0, message, { found, wanted, places })
}
