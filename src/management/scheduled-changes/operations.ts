/**
 * What a scheduled change asks of its flag, as the PATCH body the flag service applies (PostHog's
 * `FeatureFlag.scheduled_changes_dispatcher`): `update_status` sets `active`, `add_release_condition` appends
 * condition groups, `update_variants` replaces the variants and payloads. Read only when applied, as PostHog
 * reads it, so a payload that no longer fits fails then with PostHog's sentence.
 */
import { isPlainObject, type JsonObject } from '../../common/json.js'
import { pyRepr } from '../../common/python-format.js'
import { DEFAULT_FILTERS } from '../feature-flags/index.js'

/** A change that can never apply as it is: recorded as a permanent failure, never retried. */
export class ChangeRefused extends Error {
  constructor(
    message: string,
    readonly errorType = 'ValueError',
  ) {
    super(message)
    this.name = 'ChangeRefused'
  }
}

const invalidPayload = () => new ChangeRefused('Invalid payload', 'Exception')

/** Python's repr of a set of texts (sorted: a set's own order is arbitrary). */
const pySet = (values: Iterable<unknown>) => `{${[...values].map(pyRepr).sort().join(', ')}}`

function listOf(value: unknown, fallback: unknown[]): unknown[] {
  if (value === undefined) return fallback
  if (!Array.isArray(value)) throw invalidPayload()
  return value
}

function variantsBody(filters: JsonObject, value: JsonObject): JsonObject {
  const variants = listOf(value.variants, [])
  const payloads = value.payloads === undefined || value.payloads === null ? {} : value.payloads
  if (!isPlainObject(payloads) || !variants.every(isPlainObject)) throw invalidPayload()
  if (variants.length > 0) {
    const percentages = variants.map((v) => (v as JsonObject).rollout_percentage ?? 0)
    if (!percentages.every((p) => typeof p === 'number')) throw invalidPayload()
    const total = (percentages as number[]).reduce((a, b) => a + b, 0)
    if (total !== 100) throw new ChangeRefused(`Invalid variant rollout percentages: sum is ${total}, must be 100`)
  }
  const variantKeys = new Set(variants.map((v) => (v as JsonObject).key ?? null))
  const stray = Object.keys(payloads).filter((k) => !variantKeys.has(k))
  // Variants without payloads, or payloads with no variants, are allowed.
  if (stray.length > 0 && variantKeys.size > 0) throw new ChangeRefused(`Payload keys ${pySet(stray)} don't match variant keys ${pySet(variantKeys)}`)
  const multivariate = isPlainObject(filters.multivariate) ? filters.multivariate : {}
  return { groups: structuredClone(DEFAULT_FILTERS.groups), ...filters, multivariate: { ...multivariate, variants }, payloads }
}

/** The flag PATCH body for `payload` against the flag's current filters, or ChangeRefused. */
export function flagPatchFor(payload: unknown, filters: JsonObject): JsonObject {
  if (!isPlainObject(payload) || !('operation' in payload) || !('value' in payload)) throw invalidPayload()
  const { operation, value } = payload
  switch (operation) {
    case 'update_status':
      return { active: value }
    case 'add_release_condition': {
      if (!isPlainObject(value)) throw invalidPayload()
      const current = Array.isArray(filters.groups) ? filters.groups : []
      return { filters: { ...filters, groups: [...current, ...listOf(value.groups, [])] } }
    }
    case 'update_variants':
      if (!isPlainObject(value)) throw invalidPayload()
      return { filters: variantsBody(filters, value) }
    default:
      throw new ChangeRefused(`Unrecognized operation: ${typeof operation === 'string' ? operation : pyRepr(operation)}`, 'Exception')
  }
}
