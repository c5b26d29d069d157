/**
 * Stored property filters (`{key, value, operator, type, negation, group_type_index}`) checked and compiled
 * once. A filter PostHog could not deserialize (no key, unknown operator or type) makes its flag or cohort
 * unusable; `FilterShapeError` carries that up to the compiler.
 */
import { compileOperator, isOperator, readsNow, type Operator, type ValueTest } from './operators.js'

export class FilterShapeError extends Error {}

/** A person/group property test. `lookupKey` is where the value lives (person metadata is prefixed). */
export interface PropertyTest {
  kind: 'property'
  key: string
  lookupKey: string
  scope: 'person' | 'group'
  groupTypeIndex: number | null
  negation: boolean
  test: ValueTest
  /** The operator and filter value as JSON: with `scope` and `lookupKey`, equal signatures mean equal tests. */
  signature: string
  /** The test reads the request's `now` (date operators), not only the value. */
  readsNow: boolean
}

/** Membership in a cohort; `cohortId` null means the value is not a cohort id (an evaluation error). */
export interface CohortTest {
  kind: 'cohort'
  cohortId: number | null
  operator: Operator
  negation: boolean
  /** Cohort ids inside cohort definitions must be JSON numbers; flags also accept numeric strings. */
  numericValue: boolean
}

/** A flag dependency: `key` is the other flag's id, `value` what it must evaluate to. */
export interface FlagTest {
  kind: 'flag'
  flagId: number | null
  operator: Operator
  value: unknown
  /** Where the referenced flag sits in its set, resolved when the whole set is compiled; -1 if absent. */
  position: number
}

export type CompiledFilter = PropertyTest | CohortTest | FlagTest

/** PostHog prefixes person-table columns (e.g. `created_at`) so they cannot collide with person properties. */
export const PERSON_METADATA_PREFIX = '__posthog_person_metadata__'

const I32_MAX = 2147483647

/** Rust's `str::parse::<i32>()`: optional sign, ASCII digits, in range. */
export function parseI32(s: string): number | null {
  if (!/^[+-]?[0-9]+$/.test(s)) return null
  const n = Number(s)
  return n >= -I32_MAX - 1 && n <= I32_MAX ? n : null
}

function cohortIdOf(value: unknown): number | null {
  if (typeof value === 'number') return Number.isInteger(value) && Math.abs(value) <= I32_MAX ? value : null
  return typeof value === 'string' ? parseI32(value) : null
}

export function compileFilter(raw: unknown, tz: string): CompiledFilter {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw new FilterShapeError('property filter is not an object')
  const f = raw as Record<string, unknown>
  if (typeof f.key !== 'string') throw new FilterShapeError('property filter without a key')
  const opRaw = f.operator ?? 'exact'
  if (typeof opRaw !== 'string' || !isOperator(opRaw)) throw new FilterShapeError(`unknown operator ${JSON.stringify(opRaw)}`)
  const type = f.type ?? 'person'
  const negation = f.negation === true
  const value = f.value ?? null
  const gti = f.group_type_index
  if (gti !== undefined && gti !== null && !Number.isInteger(gti)) throw new FilterShapeError('group_type_index is not an integer')
  switch (type) {
    case 'cohort':
      // a cohort filter without an operator means `in`
      return { kind: 'cohort', cohortId: cohortIdOf(value), operator: f.operator == null ? 'in' : opRaw, negation, numericValue: typeof value === 'number' }
    case 'flag':
      return { kind: 'flag', flagId: parseI32(f.key), operator: opRaw, value, position: -1 }
    case 'person':
    case 'group':
    case 'person_metadata':
      return {
        kind: 'property',
        key: f.key,
        lookupKey: type === 'person_metadata' ? PERSON_METADATA_PREFIX + f.key : f.key,
        scope: type === 'group' ? 'group' : 'person',
        groupTypeIndex: (gti as number | null | undefined) ?? null,
        negation,
        test: compileOperator(opRaw, value, tz),
        signature: JSON.stringify([opRaw, value]),
        readsNow: readsNow(opRaw),
      }
    default:
      throw new FilterShapeError(`unknown property type ${JSON.stringify(type)}`)
  }
}
