/**
 * The linked flag is the source of truth for an experiment's flag config (variants, rollout, aggregation,
 * payloads, experience continuity), as in PostHog's current serializer: `parameters` is a deprecated
 * projection of it. Reads project the flag's config into `parameters`; writes take the config keys out of
 * `parameters` (they are applied to the flag, never stored), and only keys that differ from the flag's
 * current config count as a change, so a client echoing a GET back changes nothing.
 */
import { isPlainObject, type JsonObject } from '../common/json.js'
import { pyStr } from '../common/python-format.js'
import { jsonEqual, type FeatureFlagRecord } from '../management/index.js'
import { ValidationError } from '../common/errors.js'

/** The `parameters` keys that are flag config (PostHog's FEATURE_FLAG_CONFIG_KEYS). */
export const FLAG_CONFIG_KEYS = ['feature_flag_variants', 'rollout_percentage', 'aggregation_group_type_index'] as const

export const MAX_VARIANTS = 20

export interface FlagConfigChange {
  variants?: JsonObject[]
  rollout_percentage?: number
  aggregation_group_type_index?: number | null
  /** Only from the `feature_flag` object: the deprecated `parameters` keys set these on create only. */
  payloads?: JsonObject
  ensure_experience_continuity?: boolean
}

/** A request's `parameters` (free-form apart from the keys read here). */
type Parameters = Readonly<Record<string, unknown>> | null | undefined

const fail = (detail: string, attr: string | null = null) => new ValidationError('invalid', detail, attr)

/**
 * A copy of the variants as PostHog normalises them: a key that is `control` in another case becomes
 * `control` when no variant is exactly `control`, and `split_percent` (the current name) wins over
 * `rollout_percentage`, which it replaces.
 */
export function normaliseVariants(variants: readonly unknown[]): JsonObject[] {
  const copy = variants.filter(isPlainObject).map((v) => structuredClone(v))
  if (!copy.some((v) => v.key === 'control')) {
    const near = copy.find((v) => typeof v.key === 'string' && v.key.toLowerCase() === 'control')
    if (near) near.key = 'control'
  }
  for (const v of copy) {
    if ('split_percent' in v) {
      v.rollout_percentage = v.split_percent
      delete v.split_percent
    }
  }
  return copy
}

/** PostHog's variant rules for an experiment's flag: fewer than 21, at least 2, one keyed `control`. */
export function checkVariants(variants: readonly JsonObject[]): void {
  if (variants.length > MAX_VARIANTS) throw fail(`Feature flag variants must be less than ${MAX_VARIANTS + 1}`)
  if (variants.length === 0) return
  if (variants.length < 2) throw fail('Feature flag must have at least 2 variants (control and at least one test variant)')
  const keys = variants.map((v) => v.key)
  if (!keys.includes('control')) {
    throw fail(
      `Feature flag variants must contain a variant with key 'control' (lowercase, exactly). Got keys: ${pyStr(keys)}. ` +
        "Rename the baseline variant's 'key' to 'control'.",
    )
  }
}

/** `parameters` as stored: without the flag config keys (null and absent stay as they are). */
export function withoutFlagConfig(parameters: Parameters): JsonObject | null | undefined {
  if (!parameters) return parameters
  const rest = { ...parameters } as JsonObject
  for (const key of FLAG_CONFIG_KEYS) delete rest[key]
  return rest
}

/** The flag's `multivariate.variants` as stored. */
export function storedVariants(filters: JsonObject): JsonObject[] {
  const multivariate = filters.multivariate
  return isPlainObject(multivariate) && Array.isArray(multivariate.variants) ? multivariate.variants.filter(isPlainObject) : []
}

/** What `parameters` answers: the stored keys, with the flag's config projected over them. */
export function projectFlagConfig(stored: JsonObject | null, flag: FeatureFlagRecord | null): JsonObject | null {
  if (!flag) return stored
  const parameters: JsonObject = { ...(stored ?? {}) }
  // split_percent is PostHog's current name for a variant's share; both are answered.
  parameters.feature_flag_variants = storedVariants(flag.filters).map((v) =>
    'rollout_percentage' in v ? { ...v, split_percent: v.rollout_percentage } : v,
  )
  const set = (key: string, value: unknown, present: boolean) => {
    if (present) parameters[key] = value as JsonObject[string]
    else delete parameters[key]
  }
  const aggregation = flag.filters.aggregation_group_type_index
  set('aggregation_group_type_index', aggregation, typeof aggregation === 'number')
  const groups = Array.isArray(flag.filters.groups) ? flag.filters.groups : []
  const first = isPlainObject(groups[0]) ? groups[0].rollout_percentage : undefined
  set('rollout_percentage', first, first !== undefined && first !== null)
  const payloads = flag.filters.payloads
  set('feature_flag_payloads', payloads, isPlainObject(payloads) && Object.keys(payloads).length > 0)
  parameters.ensure_experience_continuity = flag.ensure_experience_continuity
  return parameters
}

/**
 * The flag config keys of a request's `parameters` that differ from the flag's (all present keys when
 * there is no flag yet), or null when there are none. Variants are compared normalised. With `all`
 * (config from the `feature_flag` object) payloads and experience continuity count too.
 */
export function flagConfigChange(parameters: Parameters, flag: FeatureFlagRecord | null, all = false): FlagConfigChange | null {
  if (!parameters) return null
  const projected = flag ? projectFlagConfig(null, flag)! : {}
  const change: FlagConfigChange = {}
  const raw = parameters.feature_flag_variants
  if (Array.isArray(raw)) {
    const variants = normaliseVariants(raw)
    const current = Array.isArray(projected.feature_flag_variants) ? normaliseVariants(projected.feature_flag_variants) : undefined
    if (!current || !jsonEqual(variants, current)) change.variants = variants
  }
  const rollout = parameters.rollout_percentage
  if (typeof rollout === 'number' && rollout !== projected.rollout_percentage) change.rollout_percentage = rollout
  if ('aggregation_group_type_index' in parameters) {
    const aggregation = parameters.aggregation_group_type_index
    if (typeof aggregation === 'number' || aggregation === null) {
      if (aggregation !== (projected.aggregation_group_type_index ?? null)) change.aggregation_group_type_index = aggregation
    }
  }
  if (all) {
    const payloads = parameters.feature_flag_payloads
    if (isPlainObject(payloads) && !jsonEqual(payloads, projected.feature_flag_payloads ?? {})) change.payloads = payloads
    const continuity = parameters.ensure_experience_continuity
    if (typeof continuity === 'boolean' && continuity !== projected.ensure_experience_continuity) change.ensure_experience_continuity = continuity
  }
  return Object.keys(change).length > 0 ? change : null
}

/** The flag's filters with a config change applied; conditions after the first are kept as they are. */
export function applyFlagConfig(filters: JsonObject, change: FlagConfigChange): JsonObject {
  const next: JsonObject = { ...filters }
  if (change.variants) next.multivariate = { ...(isPlainObject(filters.multivariate) ? filters.multivariate : {}), variants: change.variants }
  if (change.rollout_percentage !== undefined) {
    const groups = Array.isArray(filters.groups) ? [...filters.groups] : []
    groups[0] = { ...(isPlainObject(groups[0]) ? groups[0] : { properties: [] }), rollout_percentage: change.rollout_percentage }
    next.groups = groups
  }
  if (change.aggregation_group_type_index !== undefined) next.aggregation_group_type_index = change.aggregation_group_type_index
  if (change.payloads !== undefined) next.payloads = change.payloads
  return next
}
