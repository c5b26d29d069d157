/**
 * PostHog's newest write surface for an experiment's flag config: `feature_flag: {filters,
 * ensure_experience_continuity}` in the flag's own filters shape (presentation/serializers.py,
 * ExperimentFeatureFlagInputSerializer). It is checked strictly (unknown keys are refused, so half an
 * object is never applied) with DRF's messages, then translated into the deprecated `parameters` keys the
 * rest of the flag-config code reads (PostHog's `feature_flag_config_to_parameters`).
 *
 * An object carrying a non-null `id` is the read-only flag a client echoes back from a GET, and one
 * with neither `filters` nor `ensure_experience_continuity` is a stub: both are ignored, as in PostHog.
 */
import { drfInteger, drfList, drfText } from '../common/drf-fields.js'
import { ValidationError } from '../common/errors.js'
import { isPlainObject, type JsonObject } from '../common/json.js'
import { pyTypeName as pyType } from '../common/python-format.js'
import { checkVariants, normaliseVariants } from './flag-config.js'
import { drfBoolean } from './validation.js'

/** The flag config in the deprecated `parameters` shape. */
export interface FlagConfigParameters {
  feature_flag_variants?: JsonObject[]
  rollout_percentage?: number
  aggregation_group_type_index?: number | null
  feature_flag_payloads?: Record<string, string>
  ensure_experience_continuity?: boolean | null
  [other: string]: unknown
}

const ATTR = 'feature_flag'
const UNSUPPORTED = 'Unsupported key for the experiment feature_flag input.'

const err = (code: string, detail: string, path: readonly (string | number)[]) => new ValidationError(code, detail, attrOf(path))

/** A nested serializer's value: a dict whose keys are all known (`_StrictFieldsMixin`). */
function strictObject(value: unknown, known: readonly string[], path: readonly (string | number)[]): JsonObject {
  if (value === null) throw err('null', 'This field may not be null.', path)
  if (!isPlainObject(value)) throw err('invalid', `Invalid data. Expected a dictionary, but got ${pyType(value)}.`, path)
  const unknown = Object.keys(value).filter((k) => !known.includes(k)).sort()
  if (unknown.length > 0) throw err('invalid', UNSUPPORTED, [...path, unknown[0]!])
  return value
}

function list(value: unknown, path: readonly (string | number)[], maxLength?: number): unknown[] {
  return drfList(value, attrOf(path), { maxLength })
}

const attrOf = (path: readonly (string | number)[]) => [ATTR, ...path].join('.')

function integer(value: unknown, path: readonly (string | number)[], options: { nullable?: boolean; min?: number; max?: number }): number | null {
  return drfInteger(value, attrOf(path), options)
}

/** Kept as sent (not trimmed), as this serializer's fields were always read. */
function text(value: unknown, path: readonly (string | number)[], allowBlank: boolean): string {
  return drfText(value, attrOf(path), { allowBlank, trim: false })
}

function variants(raw: unknown, path: readonly (string | number)[]): JsonObject[] {
  const items = list(raw, path)
  // Normalised before the per-variant checks, as PostHog does: `Control` → `control`, split_percent → rollout_percentage.
  return normaliseVariants(items.map((v, i) => (isPlainObject(v) ? v : strictObject(v, [], [...path, i])))).map((v, i) => {
    const at = [...path, i]
    if (v.key === undefined) throw err('required', 'This field is required.', [...at, 'key'])
    if (v.rollout_percentage === undefined) throw err('required', 'This field is required.', [...at, 'rollout_percentage'])
    // Extra per-variant keys are dropped, as PostHog's variant serializer does.
    const variant: JsonObject = { key: text(v.key, [...at, 'key'], false) }
    if (v.name !== undefined) variant.name = text(v.name, [...at, 'name'], true)
    variant.rollout_percentage = integer(v.rollout_percentage, [...at, 'rollout_percentage'], { min: 0, max: 100 })
    return variant
  })
}

function filtersConfig(raw: unknown, out: FlagConfigParameters): void {
  const path = ['filters']
  const filters = strictObject(raw, ['groups', 'multivariate', 'aggregation_group_type_index', 'payloads', 'super_groups'], path)
  if (filters.groups !== undefined) {
    const groups = list(filters.groups, [...path, 'groups'], 1)
    groups.forEach((g, i) => {
      const at = [...path, 'groups', i]
      const group = strictObject(g, ['rollout_percentage', 'properties'], at)
      if (group.properties !== undefined) list(group.properties, [...at, 'properties'], 0)
      if (group.rollout_percentage !== undefined) {
        const rollout = integer(group.rollout_percentage, [...at, 'rollout_percentage'], { nullable: true, min: 0, max: 100 })
        if (i === 0 && rollout !== null) out.rollout_percentage = rollout
      }
    })
  }
  if (filters.multivariate !== undefined && filters.multivariate !== null) {
    const multivariate = strictObject(filters.multivariate, ['variants'], [...path, 'multivariate'])
    if (multivariate.variants === undefined) throw err('required', 'This field is required.', [...path, 'multivariate', 'variants'])
    out.feature_flag_variants = variants(multivariate.variants, [...path, 'multivariate', 'variants'])
  }
  if (filters.aggregation_group_type_index !== undefined) {
    out.aggregation_group_type_index = integer(filters.aggregation_group_type_index, [...path, 'aggregation_group_type_index'], { nullable: true })
  }
  if (filters.payloads !== undefined) {
    const payloads = filters.payloads
    if (!isPlainObject(payloads)) throw err(payloads === null ? 'null' : 'not_a_dict', payloads === null ? 'This field may not be null.' : `Expected a dictionary of items but got type "${pyType(payloads)}".`, [...path, 'payloads'])
    out.feature_flag_payloads = Object.fromEntries(Object.entries(payloads).map(([k, v]) => [k, text(v, [...path, 'payloads', k], true)]))
  }
  if (filters.super_groups !== undefined) {
    // Accepted as the flag's filters schema has it, but not applied (PostHog's translation ignores it too).
    list(filters.super_groups, [...path, 'super_groups']).forEach((g, i) => {
      if (!isPlainObject(g)) throw err('not_a_dict', `Expected a dictionary of items but got type "${pyType(g)}".`, [...path, 'super_groups', i])
    })
  }
}

/** Whether the body's `feature_flag` expresses write intent (not absent, not an echoed flag, not a stub). */
export function isFlagConfigInput(raw: unknown): raw is JsonObject {
  return isPlainObject(raw) && (raw.id === undefined || raw.id === null) && ('filters' in raw || 'ensure_experience_continuity' in raw)
}

/**
 * The body's `feature_flag` config as `parameters` keys, or null when it carries none. Checked strictly
 * and against the experiment's variant rules (fewer than 21, at least two, one keyed `control`).
 */
export function flagConfigFromInput(raw: unknown): FlagConfigParameters | null {
  if (!isFlagConfigInput(raw)) return null
  const { id: _echoMarker, ...input } = raw
  strictObject(input, ['filters', 'ensure_experience_continuity'], [])
  const out: FlagConfigParameters = {}
  if (input.filters !== undefined) filtersConfig(input.filters, out)
  if ('ensure_experience_continuity' in input) {
    out.ensure_experience_continuity = input.ensure_experience_continuity === null ? null : drfBoolean(input.ensure_experience_continuity, `${ATTR}.ensure_experience_continuity`)
  }
  if (out.feature_flag_variants) checkVariants(out.feature_flag_variants)
  return out
}
