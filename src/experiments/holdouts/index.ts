/** Experiment holdouts: PostHog's ExperimentHoldoutViewSet, and what a holdout writes into its experiments' flags. */
export { ExperimentHoldouts, type HoldoutDeps } from './service.js'
export { holdoutFiltersForFlag, holdoutVariant, type HoldoutObject, type HoldoutRecord } from './record.js'
export { readHoldoutFilters, readHoldoutRef } from './input.js'
