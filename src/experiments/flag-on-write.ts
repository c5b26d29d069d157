/**
 * What an experiment's create and update do to its flag, in PostHog's order: which flag config a request
 * asks for, linking an existing flag or creating one, and applying config, restore and launch on update.
 * Each runs inside the caller's transaction; the flag changes go through LinkedFlags.
 */
import { ValidationError } from '../common/errors.js'
import type { FeatureFlagRecord, Project } from '../management/index.js'
import type { ExperimentWrite } from '../schemas/experiment.js'
import { checkVariants, flagConfigChange, withoutFlagConfig } from './flag-config.js'
import { flagConfigFromInput, type FlagConfigParameters } from './flag-input.js'
import type { HoldoutRecord } from './holdouts/index.js'
import type { LinkedFlags } from './linked-flag.js'
import type { ExperimentRecord } from './record.js'
import { checkEligibleFlag, checkNoGlobalProperties, checkUpdatableKeys, checkVariantsUnchanged } from './validation.js'

export interface RequestedFlagConfig {
  /** The config in `parameters` keys, or null when the request carries none. */
  parameters: FlagConfigParameters | null | undefined
  /** Sent as the `feature_flag` object: any such config counts as a change (PostHog compares nothing). */
  fromObject: boolean
}

/**
 * The flag config a request asks for. PostHog's serializer takes the `feature_flag` object when there is
 * one, and then ignores the deprecated `parameters` keys for variants, rollout and aggregation (payloads
 * and experience continuity left in `parameters` still apply on create, unless the object sets them).
 */
export function requestedFlagConfig(body: ExperimentWrite): RequestedFlagConfig {
  const fromObject = flagConfigFromInput(body.feature_flag)
  if (!fromObject) return { parameters: body.parameters as FlagConfigParameters | null | undefined, fromObject: false }
  return { parameters: { ...(withoutFlagConfig(body.parameters) ?? {}), ...fromObject }, fromObject: true }
}

/**
 * PostHog links a flag that exists with the key (refusing flag config in the same request: the flag is
 * linked as it is) when it is eligible, and otherwise creates one from the config sent: the
 * `feature_flag` object, else the deprecated `parameters` keys. Only a created flag gets the holdout: PostHog
 * links an existing flag as it is.
 */
export function linkOrCreateFlag(flags: LinkedFlags, project: Project, body: ExperimentWrite, launched: boolean, userId: number, holdout: HoldoutRecord | null): number {
  const key = body.feature_flag_key!
  const existing = flags.liveByKey(project.id, key)
  const config = requestedFlagConfig(body)
  const change = flagConfigChange(config.parameters, null)
  if (existing && (config.fromObject || change)) {
    throw new ValidationError(
      'invalid',
      `A feature flag with key '${key}' already exists; the experiment links to it as-is, so its config cannot be set here. ` +
        'Omit feature_flag to reuse the existing flag, or edit the flag directly.',
      'feature_flag',
    )
  }
  if (change?.variants) checkVariants(change.variants)
  checkNoGlobalProperties(body.filters)
  if (existing) {
    checkEligibleFlag(existing)
    return existing.id
  }
  return flags.create(project, key, body.name!, config.parameters, launched, userId, holdout)
}

/**
 * PostHog's update rules that involve the flag, in its order. Flag config (the `feature_flag` object,
 * else the deprecated `parameters` keys when they differ from the flag's) is applied to the flag on a
 * draft, and on a launched experiment only with `update_feature_flag_params` (and the same variant
 * keys); config left out stays as the flag has it. Restoring needs a live flag; launching (a start date
 * on a draft) needs an eligible one and activates it. Ending an experiment leaves the flag as it is.
 */
export function applyUpdateToFlag(flags: LinkedFlags, project: Project, current: ExperimentRecord, body: ExperimentWrite, config: RequestedFlagConfig, flag: FeatureFlagRecord, userId: number): void {
  const draft = current.start_date === null
  const change = flagConfigChange(config.parameters, flag, config.fromObject)
  if ((config.fromObject || change) && !draft && body.update_feature_flag_params !== true) {
    throw new ValidationError(
      'invalid',
      'This experiment is running. To change its flag config, send update_feature_flag_params=true (or edit the feature flag directly).',
      'feature_flag',
    )
  }
  if (change?.variants) checkVariants(change.variants)
  if (current.deleted && body.deleted === false && flag.deleted) {
    throw new ValidationError(
      'invalid',
      'Cannot restore experiment: the linked feature flag has been deleted. Restore the feature flag first, then restore the experiment.',
    )
  }
  const launching = draft && body.start_date !== undefined && body.start_date !== null
  if (launching) checkLaunchable(flag)
  checkUpdatableKeys(body, flag.key)
  if (!draft && change?.variants) checkVariantsUnchanged(change.variants, flag)
  checkNoGlobalProperties(body.filters)
  if (change) flags.applyConfig(project, flag, change, userId)
  if (launching) flags.setActive(project, flags.get(project.id, flag.id)!, true, userId)
}

/** A deleted flag serves nobody, so nothing launches on it; nor on one that lost its control variant. */
function checkLaunchable(flag: FeatureFlagRecord): void {
  if (flag.deleted) throw new ValidationError('invalid', 'Experiment cannot be launched because its feature flag has been deleted.')
  checkEligibleFlag(flag)
}
