/**
 * Activation mode's exposures (PostHog's `_build_activation_exposure_select_query`), from what the embedded
 * store reads: each entity's variant as its exposure events give it (`multiple_variant_handling` applied to
 * them, experiment-rows.ts' `exposuresByEntity`), and its exposure time and breakdown texts from its first
 * activation event at or after its first exposure event (the store's join keeps only those). The maturity
 * gate applies to that activation time, PostHog's HAVING on the activation rows. Pure.
 */
import type { Exposure } from './experiment-aggregate.js'
import { exposuresByEntity } from './experiment-rows.js'
import type { ExposureRow } from './experiment-types.js'

/** `activations`: [entity, ms, breakdown texts] rows, several per entity. */
export function activatedExposures(flags: ReadonlyMap<string, Exposure>, activations: ReadonlyArray<[string, number, string[]]>, maturedBy: number | null): Map<string, Exposure> {
  // The earliest activation (the smaller texts on a tie), as the first exposure is taken otherwise.
  const rows: ExposureRow[] = activations.map(([entity, t, breakdown]) => [entity, '', t, breakdown])
  const out = new Map<string, Exposure>()
  for (const [entity, a] of exposuresByEntity(rows, 'first_seen', maturedBy)) {
    const flag = flags.get(entity)
    if (flag) out.set(entity, { variant: flag.variant, first: a.first, breakdown: a.breakdown })
  }
  return out
}
