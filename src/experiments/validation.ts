/**
 * PostHog's experiment rules with its messages (products/experiments/backend/experiment_service.py and
 * presentation/serializers.py; formerly ee/clickhouse/views/experiments.py). Field rules carry the
 * field as `attr`; rules PostHog raises from `validate()`, `create()` or `update()` have `attr: null`. All
 * codes are DRF's default `invalid` unless DRF names another.
 */
import { drfBoolean, parseDateField } from '../common/drf-fields.js'
import { ValidationError } from '../common/errors.js'
import { isPlainObject, type JsonObject } from '../common/json.js'
import type { FeatureFlagRecord } from '../management/index.js'
import type { ExperimentWrite } from '../schemas/experiment.js'

export const DEFAULT_VARIANTS: ReadonlyArray<Readonly<{ key: string; name: string; rollout_percentage: number }>> = [
  { key: 'control', name: 'Control Group', rollout_percentage: 50 },
  { key: 'test', name: 'Test Variant', rollout_percentage: 50 },
]

export { drfBoolean, parseDateField }

const fail = (detail: string, attr: string | null = null, code = 'invalid') => new ValidationError(code, detail, attr)

/** `name`: a CharField, so blank is refused. */
export function checkName(name: string | undefined): void {
  if (name !== undefined && name.trim() === '') throw fail('This field may not be blank.', 'name', 'blank')
}

/** `validate()`: when both dates are known, the end must come after the start. */
export function checkDates(start: string | null, end: string | null): void {
  if (start !== null && end !== null && Date.parse(end) <= Date.parse(start)) throw fail('End date must be after start date')
}

/** Experiments target whole variants; metric filters must not narrow who is in the experiment. */
export function checkNoGlobalProperties(filters: JsonObject | undefined): void {
  const props = filters?.properties
  const nonEmpty = Array.isArray(props) ? props.length > 0 : isPlainObject(props) ? Object.keys(props).length > 0 : Boolean(props)
  if (nonEmpty) throw fail('Experiments do not support global filter properties')
}

/**
 * An existing flag may back an experiment, or a draft be launched on its flag, when it has at least two
 * variants, one keyed `control` (PostHog's `_validate_existing_flag`; control need not come first).
 */
export function checkEligibleFlag(flag: FeatureFlagRecord): void {
  const variants = flagVariants(flag.filters)
  if (variants.length < 2) throw fail('Feature flag must have at least 2 variants (control and at least one test variant)')
  if (!variants.some((v) => v.key === 'control')) throw fail("Feature flag must have a variant with key 'control'")
}

/** PATCH may not carry fields PostHog's update refuses: a different flag key, or `type`. */
export function checkUpdatableKeys(body: ExperimentWrite, currentFlagKey: string): void {
  const extra: string[] = []
  if (body.feature_flag_key !== undefined && body.feature_flag_key !== currentFlagKey) extra.push('get_feature_flag_key')
  if (body.type !== undefined) extra.push('type')
  if (extra.length > 0) throw fail(`Can't update keys: ${extra.sort().join(', ')} on Experiment`)
}

/** After launch the variants' keys are fixed: the same number, each key once and known to the flag. */
export function checkVariantsUnchanged(variants: readonly JsonObject[], flag: FeatureFlagRecord): void {
  const current = flagVariants(flag.filters)
  const same = variants.length === current.length && variants.every((v) => current.filter((c) => c.key === v.key).length === 1)
  if (!same) throw fail("Can't update feature_flag_variants on Experiment")
}

export interface FlagVariant {
  key: string
  name?: string | null
  rollout_percentage: number
}

/** The flag's `multivariate.variants` (what the experiment's split is). */
export function flagVariants(filters: JsonObject): FlagVariant[] {
  const multivariate = filters.multivariate
  if (!isPlainObject(multivariate) || !Array.isArray(multivariate.variants)) return []
  return multivariate.variants
    .filter((v): v is JsonObject => isPlainObject(v) && typeof v.key === 'string')
    .map((v) => ({
      key: v.key as string,
      name: typeof v.name === 'string' ? v.name : null,
      rollout_percentage: typeof v.rollout_percentage === 'number' ? v.rollout_percentage : 0,
    }))
}
