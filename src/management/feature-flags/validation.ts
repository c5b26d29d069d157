/**
 * PostHog's flag rules, with its messages and codes. Errors on `filters` carry attr `filters` and, unless
 * PostHog names one, the code `invalid` (DRF's default). Checks run in PostHog's order, so the first
 * broken rule is the one reported.
 */
import { ValidationError } from '../../common/errors.js'
import { isConfigFormatOne } from '../../flags/index.js'
import { isPlainObject, type JsonObject } from '../../common/json.js'
import { flagDependencyRefs, safeInt } from './record.js'
import { pyJsonDumps, pyStr } from '../../common/python-format.js'

export const MAX_PROPERTY_VALUES = 1000
const KEY_RE = /^[a-zA-Z0-9_-]+$/
const STRING_VALUE_OPERATORS = new Set(['regex', 'icontains', 'not_regex', 'not_icontains', 'gte', 'lte', 'gt', 'lt'])
/** PostHog checks the dates of these two only: `is_date_exact` with an unreadable date is stored (and never matches). */
const DATE_OPERATORS = new Set(['is_date_before', 'is_date_after'])
const RELATIVE_DATE_RE = /^-?(\d+)([hdwmy])$/

/** What the rules need to look up: other flags and cohorts of the same project. */
export interface FlagLookups {
  liveFlagByKey(key: string): { id: number } | null
  liveFlag(id: number): { id: number; key: string; active: boolean; filters: JsonObject } | null
  /** The cohort and the cohorts it references, transitively; empty when it does not exist (or is deleted). */
  cohortWithDependencies(id: number): Array<{ id: number; name: string; filters: JsonObject; is_static: boolean }>
  /** Event filters make a dynamic cohort unusable; a static cohort's members are stored, so its filters never count. */
  isBehaviouralCohort(cohort: { filters: JsonObject; is_static: boolean }): boolean
}

const invalid = (detail: string, code = 'invalid') => new ValidationError(code, detail, 'filters')

/** Blank, too long, already used by another live flag (checked first, as PostHog does), bad characters. */
export function validateKey(key: string, selfId: number | null, lookups: FlagLookups): void {
  if (key === '') throw new ValidationError('blank', 'This field may not be blank.', 'key')
  if (key.length > 400) throw new ValidationError('max_length', 'Ensure this field has no more than 400 characters.', 'key')
  const existing = lookups.liveFlagByKey(key)
  if (existing && existing.id !== selfId) throw new ValidationError('unique', 'There is already a feature flag with this key.', 'key')
  if (!KEY_RE.test(key)) {
    throw new ValidationError('invalid_key', 'Only letters, numbers, hyphens (-) & underscores (_) are allowed.', 'key')
  }
}

export interface FiltersContext {
  creating: boolean
  /** The flag being changed (null on create) and its key (the new key on create). */
  flagId: number | null
  flagKey: string | null
}

interface Prop {
  key: unknown
  value: unknown
  operator: string
  type: string
  group_type_index: unknown
}

function props(filters: JsonObject): Prop[] {
  const groups = (filters.groups ?? []) as JsonObject[]
  return groups.flatMap((g) =>
    ((g.properties ?? []) as JsonObject[]).map((p) => ({
      key: p.key,
      value: p.value,
      // Property() defaults: operator "exact", type "event".
      operator: typeof p.operator === 'string' ? p.operator : 'exact',
      type: typeof p.type === 'string' ? p.type : 'event',
      group_type_index: p.group_type_index ?? null,
    })),
  )
}

/**
 * PostHog reserves `filters.version` for its config formats (format 2 writes are closed to every project that
 * is not admitted, which is all of them by default): a request naming it, with any value, 1 included, is
 * refused before anything else of `filters` is read, on create and on update.
 */
export function refuseConfigVersion(filters: JsonObject | undefined): void {
  if (filters !== undefined && Object.hasOwn(filters, 'version')) {
    throw invalid('filters.version is reserved. Remove it from the request.', 'reserved_config_version')
  }
}

/**
 * Checks `filters` (already type-checked by the schema) and returns what is stored: the same object with
 * object payloads turned into JSON strings, as PostHog normalises them.
 */
export function validateFilters(filters: JsonObject, ctx: FiltersContext, lookups: FlagLookups): JsonObject {
  const groups = (filters.groups ?? []) as JsonObject[]
  if (ctx.creating && groups.length === 0) throw invalid('Feature flags must have at least one condition set (group).')
  const aggregation = filters.aggregation_group_type_index ?? null
  // A condition may aggregate by its own group type, or by persons with an explicit null (PostHog's mixed
  // targeting: flag-level null, group conditions beside person ones); its properties follow its own.
  for (const group of groups) {
    const own = Object.hasOwn(group, 'aggregation_group_type_index') ? (group.aggregation_group_type_index ?? null) : aggregation
    const conditionProps = props({ groups: [group] })
    if (own === null) {
      if (!conditionProps.every((p) => p.type === 'person' || p.type === 'cohort' || p.type === 'flag')) {
        throw invalid('Filters are not valid (can only use person, cohort, and flag properties)')
      }
      if (!conditionProps.every((p) => p.type !== 'flag' || p.operator === 'flag_evaluates_to')) {
        throw invalid("Flag properties must use the 'flag_evaluates_to' operator")
      }
    } else if (!conditionProps.every((p) => p.type === 'group' && p.group_type_index === own)) {
      throw invalid('Filters are not valid (can only use group properties)')
    }
  }
  if (aggregation === null) checkDependencies(filters, ctx, lookups)

  const variantList = ((filters.multivariate as JsonObject | null | undefined)?.variants ?? []) as JsonObject[]
  const variants = new Set(variantList.map((v) => v.key as string))
  if (variantList.length > 0) {
    const sum = variantList.reduce((total, v) => total + ((v.rollout_percentage as number | undefined) ?? 0), 0)
    if (sum !== 100) throw invalid('Invalid variant definitions: Variant rollout percentages must sum to 100.', 'invalid_input')
  }

  for (const group of groups) {
    if (group.variant && !variants.has(group.variant as string)) throw invalid('Filters are not valid (variant override does not exist)')
    for (const prop of props({ groups: [group] })) checkProperty(prop, lookups)
  }

  return { ...filters, ...normalisedPayloads(filters, variants) }
}

function checkProperty(prop: Prop, lookups: FlagLookups): void {
  if (Array.isArray(prop.value) && prop.value.length > MAX_PROPERTY_VALUES) {
    throw invalid(`Property group expressions of type ${pyStr(prop.key)} cannot contain more than ${MAX_PROPERTY_VALUES} values.`)
  }
  if (prop.type === 'cohort') {
    const id = safeInt(prop.value)
    const cohorts = id === null ? [] : lookups.cohortWithDependencies(id)
    if (cohorts.length === 0) throw invalid(`Cohort with id ${pyStr(prop.value)} does not exist`, 'cohort_does_not_exist')
    const behavioural = cohorts.find((c) => lookups.isBehaviouralCohort(c))
    if (behavioural) {
      throw invalid(`Cohort '${behavioural.name}' with filters on events cannot be used in feature flags.`, 'behavioral_cohort_found')
    }
  }
  if (DATE_OPERATORS.has(prop.operator) && !isParseableDate(prop.value)) {
    throw invalid(`Invalid date value: ${pyStr(prop.value)}`, 'invalid_date')
  }
  if (STRING_VALUE_OPERATORS.has(prop.operator) && typeof prop.value !== 'string') {
    throw invalid(`Invalid value for operator ${prop.operator}: ${pyStr(prop.value)}`, 'invalid_value')
  }
  if ((prop.operator === 'in' || prop.operator === 'not_in') && prop.type !== 'cohort') {
    throw invalid(
      `The '${prop.operator}' operator is only valid for cohort properties, not '${prop.type}' properties.`,
      'invalid_operator',
    )
  }
}

/** A relative date (`-7d`, `3m`; fewer than 10,000 units) or an absolute one. */
export function isParseableDate(value: unknown): boolean {
  if (typeof value !== 'string' && typeof value !== 'number') return false
  const text = String(value).trim()
  const relative = RELATIVE_DATE_RE.exec(text)
  if (relative) return Number(relative[1]) < 10_000
  return text !== '' && !Number.isNaN(Date.parse(text))
}

function normalisedPayloads(filters: JsonObject, variants: Set<string>): JsonObject {
  if (!('payloads' in filters)) return {}
  const payloads = filters.payloads
  if (!isPlainObject(payloads)) throw invalid('Payloads must be passed as a dictionary')
  const out: JsonObject = {}
  for (const [key, value] of Object.entries(payloads)) {
    if (typeof value === 'string') {
      try {
        JSON.parse(value)
      } catch {
        throw invalid('Payload value is not valid JSON')
      }
      out[key] = value
    } else {
      out[key] = isPlainObject(value) ? pyJsonDumps(value) : value
    }
  }
  const keys = Object.keys(out)
  if (isPlainObject(filters.multivariate) && Object.keys(filters.multivariate).length > 0) {
    if (!keys.every((k) => variants.has(k))) throw invalid('Payload keys must match a variant key for multivariate flags')
  } else if (keys.length > 1 || keys.some((k) => k !== 'true')) {
    throw invalid("Payload keys must be 'true' for boolean flags")
  }
  return { payloads: out }
}

/** Flag conditions must name live, active flags by id, and must not make the flag depend on itself. */
function checkDependencies(filters: JsonObject, ctx: FiltersContext, lookups: FlagLookups): void {
  const selfKey = ctx.flagKey
  if (!selfKey) return
  const deps = flagDependencyRefs(filters).map((ref) => {
    const id = safeInt(ref)
    if (id === null) {
      throw invalid(`Flag dependencies must reference flag IDs (integers), not flag keys. Invalid reference: '${pyStr(ref)}'`)
    }
    const flag = lookups.liveFlag(id)
    if (!flag) throw invalid(`Flag dependency references non-existent flag with ID ${id}`)
    if (!isConfigFormatOne(flag.filters)) {
      throw invalid('A flag dependency uses an unsupported configuration format. Remove this dependency to continue.', 'unsupported_dependency_config_version')
    }
    if (!flag.active) {
      throw invalid(
        `Cannot create dependency on disabled flag '${flag.key}' (ID: ${id}). Flag dependencies must reference active flags only.`,
      )
    }
    return flag
  })
  if (deps.length === 0) return
  if (deps.some((d) => d.id === ctx.flagId || d.key === selfKey)) throw invalid(`Feature flag '${selfKey}' cannot depend on itself`)

  // Depth-first over stored flags; only a path back to this flag can be new, so explored nodes are skipped.
  const explored = new Set<number>()
  const visit = (flag: { id: number; key: string; filters: JsonObject }, path: Array<{ id: number | null; key: string }>): void => {
    const at = path.findIndex((p) => (p.id !== null && p.id === flag.id) || p.key === flag.key)
    if (at >= 0) throw invalid(`Circular dependency detected: ${[...path.slice(at).map((p) => p.key), flag.key].join(' → ')}`)
    if (explored.has(flag.id)) return
    for (const ref of flagDependencyRefs(flag.filters)) {
      const id = safeInt(ref)
      const next = id === null ? null : lookups.liveFlag(id)
      if (next) visit(next, [...path, { id: flag.id, key: flag.key }])
    }
    explored.add(flag.id)
  }
  for (const dep of deps) visit(dep, [{ id: ctx.flagId, key: selfKey }])
}
