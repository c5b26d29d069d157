/**
 * The legacy funnel (FunnelQuery, the legacy experiment results') counted as PostHog's funnel UDF walks each
 * person's events: the ordered walk of experiment-funnel.ts with the query's first step in the place of the
 * exposure. So one event advances a chain by one step at most (steps `$pageview`, `$pageview` need two
 * pageviews, as in PostHog), events at one instant are taken in step order, and each store only reads the
 * events; the two count alike by construction. A person enters with a first-step event whose breakdown value is
 * one of the query's, and is counted under the value of the earliest such event (the smaller text at one instant).
 */
import { compareText, type StepEvent } from './experiment-aggregate.js'
import { chainFurthestStep } from './experiment-funnel.js'
import { EXPOSURE_BIT, MAX_EXPERIMENT_STEPS, type FunnelQuery, type FunnelRow } from './types.js'

/** The most steps a legacy funnel reads: the first travels as EXPOSURE_BIT, the others as the walk's steps. */
export const MAX_LEGACY_FUNNEL_STEPS = MAX_EXPERIMENT_STEPS + 1

/** Step k's bit in an event's mask: the first step's only where the event's breakdown value is one of the query's. */
export const legacyStepBit = (k: number): number => (k === 0 ? EXPOSURE_BIT : 2 ** (k - 1))

export class LegacyFunnelCounter {
  readonly #counts = new Map<string, number[]>()
  constructor(readonly query: FunnelQuery) {
    if (query.steps.length > MAX_LEGACY_FUNNEL_STEPS) throw new RangeError(`a funnel reads at most ${MAX_LEGACY_FUNNEL_STEPS} steps`)
  }

  /** One person's events, oldest first (then by uuid), each with its breakdown value (read on first-step events). */
  add(events: readonly StepEvent[], values: ReadonlyArray<string | null>): void {
    let first: string | null = null
    let at = 0
    for (let i = 0; i < events.length; i++) {
      const [t, mask] = events[i]
      if (first !== null && t > at) break
      const v = values[i]
      if ((mask & EXPOSURE_BIT) !== 0 && v !== null && (first === null || compareText(v, first) < 0)) {
        first = v
        at = t
      }
    }
    if (first === null) return
    const steps = this.query.steps.length
    // The walk's step index (−1: the first step alone) as the steps reached.
    const reached = chainFurthestStep(events, steps - 1, this.query.windowMs, false) + 2
    let counts = this.#counts.get(first)
    if (counts === undefined) this.#counts.set(first, (counts = new Array<number>(steps).fill(0)))
    for (let k = 0; k < reached; k++) counts[k]++
  }

  /** Each breakdown value someone entered with, in text order. */
  result(): FunnelRow[] {
    return [...this.#counts].sort(([a], [b]) => compareText(a, b)).map(([value, counts]) => ({ value, counts }))
  }
}
