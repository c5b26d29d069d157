/**
 * Early access features (PostHog's EarlyAccessFeature): a feature in a release stage, linked to the flag whose
 * enrollment it drives, listed to posthog-js by project key.
 */
export { EarlyAccessFeatures, LINKED_FLAG_DENIED } from './service.js'
export { EarlyAccessRepository } from './repository.js'
export { ACTIVE_STAGES, STAGES, isActiveStage, type EarlyAccessFeatureRecord, type Stage } from './record.js'
export { toPublicFeature, type EarlyAccessFeatureObject, type PublicEarlyAccessFeature } from './serialize.js'
export { isDjangoUrl } from './input.js'
export { slugify, withEnrollment } from './enrollment.js'
