/**
 * Scheduled changes (PostHog's ScheduledChange): a change to a flag, written ahead and applied when it falls due
 * by the main thread's applier, through the FeatureFlags service.
 */
export { ScheduledChangeApplier, CHECK_MS, type Outcome } from './applier.js'
export { ScheduledChanges } from './service.js'
export { MODEL_NAMES, OPERATIONS, RECURRENCE_INTERVALS } from './record.js'
export { type ScheduledChangeObject } from './serialize.js'
