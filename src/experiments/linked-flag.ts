/**
 * What experiments do to their flag, always through the FeatureFlags service (its rules, versions and
 * activity entries apply): create one for a new key, link an eligible one, apply a flag config change,
 * switch it on or off, and roll one variant out to everyone it serves (ship).
 */
import type { JsonObject } from '../common/json.js'
import type { FeatureFlagRecord, FeatureFlags, Project } from '../management/index.js'
import { holdoutFiltersForFlag, type HoldoutRecord } from './holdouts/index.js'
import { applyFlagConfig, flagConfigChange, storedVariants, type FlagConfigChange } from './flag-config.js'
import type { FlagConfigParameters } from './flag-input.js'
import { DEFAULT_VARIANTS } from './validation.js'

export class LinkedFlags {
  readonly #flags: FeatureFlags

  constructor(flags: FeatureFlags) {
    this.#flags = flags
  }

  get(teamId: number, id: number): FeatureFlagRecord | null {
    return this.#flags.repository.get(teamId, id)
  }

  liveByKey(teamId: number, key: string): FeatureFlagRecord | null {
    return this.#flags.repository.liveByKey(teamId, key)
  }

  /**
   * PostHog's `_ensure_feature_flag` for a new key: the config sent (variants, else the default pair;
   * rollout, else 100%; aggregation; payloads; experience continuity, else off: skylark's projects have
   * no `flags_persistence_default`), the experiment's holdout, and active only once launched.
   */
  create(project: Project, key: string, name: string, config: FlagConfigParameters | null | undefined, launched: boolean, userId: number, holdout: HoldoutRecord | null = null): number {
    const parameters = (config ?? {}) as JsonObject
    const change = flagConfigChange(parameters, null) ?? {}
    const filters: JsonObject = {
      groups: [{ properties: [], rollout_percentage: change.rollout_percentage ?? 100 }],
      multivariate: { variants: change.variants?.length ? change.variants : structuredClone(DEFAULT_VARIANTS) },
      aggregation_group_type_index: change.aggregation_group_type_index ?? null,
      ...holdoutFiltersForFlag(holdout),
    }
    const payloads = parameters.feature_flag_payloads
    if (payloads && typeof payloads === 'object' && Object.keys(payloads).length > 0) filters.payloads = payloads
    const continuity = parameters.ensure_experience_continuity
    const created = this.#flags.create(
      project,
      {
        key,
        name: `Feature Flag for Experiment ${name}`,
        filters,
        active: launched,
        ensure_experience_continuity: typeof continuity === 'boolean' ? continuity : false,
      },
      userId,
    )
    return created.id
  }

  applyConfig(project: Project, flag: FeatureFlagRecord, change: FlagConfigChange, userId: number): void {
    const continuity = change.ensure_experience_continuity
    this.#flags.update(project, flag.id, { filters: applyFlagConfig(flag.filters, change), ...(continuity === undefined ? {} : { ensure_experience_continuity: continuity }) }, userId)
  }

  setActive(project: Project, flag: FeatureFlagRecord, active: boolean, userId: number): void {
    if (flag.active !== active) this.#flags.update(project, flag.id, { active }, userId)
  }

  /**
   * PostHog's `_transform_filters_for_winning_variant`: the variant gets 100% of the split (the others
   * 0%, names kept), the conditions stay, and with `releaseToEveryone` a catch-all condition goes first.
   * Like PostHog, the new filters keep only conditions, variants, payloads and the aggregation.
   */
  ship(project: Project, flag: FeatureFlagRecord, variantKey: string, releaseToEveryone: boolean, userId: number): void {
    const groups = Array.isArray(flag.filters.groups) ? [...flag.filters.groups] : []
    if (releaseToEveryone) {
      groups.unshift({
        properties: [],
        rollout_percentage: 100,
        description: 'Added automatically when the experiment was ended to keep only one variant.',
      })
    }
    const filters: JsonObject = {
      aggregation_group_type_index: flag.filters.aggregation_group_type_index ?? null,
      payloads: flag.filters.payloads ?? {},
      multivariate: {
        variants: storedVariants(flag.filters).map((v) => ({
          key: v.key,
          rollout_percentage: v.key === variantKey ? 100 : 0,
          ...(v.name ? { name: v.name } : {}),
        })),
      },
      groups,
    }
    this.#flags.update(project, flag.id, { filters }, userId)
  }
}
