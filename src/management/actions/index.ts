/**
 * Actions (PostHog's Action): a named set of steps, any of which an event can match (its name, its page URL,
 * the clicked element, its properties); soft-deleted with PATCH, never removed. `compileAction` tests one
 * stored event against them.
 */
export { Actions } from './service.js'
export { actionCondition, chainCondition, compileAction, conditionHolds, stepRunnable, type EventTest, type MatchableEvent } from './match.js'
export { storesCanRun } from './regex.js'
export { stepEvents, STEP_MATCHING, type ActionRecord, type ActionStep, type StepMatching } from './record.js'
export type { ActionObject, ActionReferenceObject, ActionStepObject } from './serialize.js'
