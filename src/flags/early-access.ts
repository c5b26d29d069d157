/**
 * Early-access features as posthog-js's `getEarlyAccessFeatures` reads them. skylark has no early-access model:
 * PostHog links a feature to a flag, and skylark knows such flags by `filters.feature_enrollment: true` (whose
 * `$feature_enrollment/<key>` person property compile.ts honours), so each active one is a feature in "beta",
 * the only stage a flag can carry people into.
 */
import { uuidv5 } from '../common/ids.js'
import type { FlagDefinition } from './types.js'

/** The fields of PostHog's MinimalEarlyAccessFeatureSerializer, which posthog-js's FeaturePreview mirrors. */
export interface EarlyAccessFeature {
  id: string
  name: string
  description: string
  stage: 'beta'
  documentationUrl: null
  flagKey: string
}

/** A namespace of skylark's own: the ids are stable across restarts and copies of the data, never PostHog's. */
const FEATURE_ID_NAMESPACE = '94edbe51-9824-42bf-bcc5-a9be9e8a50a5'

export function earlyAccessFeatures(teamId: number, flags: readonly (FlagDefinition & { name?: string })[]): EarlyAccessFeature[] {
  return flags
    .filter((f) => f.active && !f.deleted && f.filters.feature_enrollment === true)
    .sort((a, b) => a.id - b.id)
    .map((f) => ({
      id: uuidv5(`${teamId}:${f.id}`, FEATURE_ID_NAMESPACE),
      // PostHog's feature always has a name; a flag's may be empty, and posthog-js shows the name to people.
      name: f.name || f.key,
      // skylark's flags have no description of their own (PostHog's flag "name" is what its UI calls one).
      description: '',
      stage: 'beta',
      documentationUrl: null,
      flagKey: f.key,
    }))
}
