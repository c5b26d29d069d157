/**
 * Holdout bodies read as PostHog's ExperimentHoldoutSerializer reads them: name, description, filters in its
 * field order with DRF's messages and `validate_filters`' own. Where PostHog's checks meet a value they were not
 * written for (filters that are not a list of objects, a percentage that is not a number) it answers 500;
 * skylark refuses those with DRF's messages for the shape it expected. A percentage of `true` (1 to Python) is
 * refused too: the flag service reads only numbers.
 */
import { drfText, pyTruthy } from '../../common/drf-fields.js'
import { ValidationError } from '../../common/errors.js'
import { isPlainObject, type JsonObject } from '../../common/json.js'
import { pyStr, pyTypeName } from '../../common/python-format.js'

export interface HoldoutFields {
  name?: string
  /** Present when sent: null or text. */
  description?: string | null
  filters?: JsonObject[]
}

const filtersError = (detail: string, code = 'invalid') => new ValidationError(code, detail, 'filters')

function dict(body: unknown): JsonObject {
  if (isPlainObject(body)) return body
  if (body === null || body === undefined) return {}
  throw new ValidationError('invalid', `Invalid data. Expected a dictionary, but got ${pyTypeName(body)}.`)
}

/** PostHog's `validate_filters`: a non-empty list whose every group has a rollout percentage from 0 to 100. */
export function readHoldoutFilters(value: unknown): JsonObject[] {
  if (value === null) throw filtersError('This field may not be null.', 'null')
  if (!pyTruthy(value)) throw filtersError('Filters must not be empty.')
  if (!Array.isArray(value)) throw filtersError(`Expected a list of items but got type "${pyTypeName(value)}".`, 'not_a_list')
  for (const group of value) {
    if (!isPlainObject(group)) throw filtersError(`Expected a dictionary of items but got type "${pyTypeName(group)}".`, 'not_a_dict')
    const pct = group.rollout_percentage
    if (pct === undefined || pct === null) throw filtersError('Rollout percentage must be present.')
    if (typeof pct !== 'number' || !Number.isFinite(pct)) throw filtersError('A valid number is required.')
    if (pct < 0 || pct > 100) throw filtersError('Rollout percentage must be between 0 and 100.')
  }
  return value as JsonObject[]
}

function shared(body: JsonObject, creating: boolean): HoldoutFields {
  const out: HoldoutFields = {}
  if (body.name !== undefined) out.name = drfText(body.name, 'name', { maxLength: 400 })
  else if (creating) throw new ValidationError('required', 'This field is required.', 'name')
  if (body.description !== undefined) out.description = body.description === null ? null : drfText(body.description, 'description', { allowBlank: true, maxLength: 400 })
  if (body.filters !== undefined) out.filters = readHoldoutFilters(body.filters)
  return out
}

export function readHoldoutCreate(raw: unknown): HoldoutFields & { name: string; filters: JsonObject[] } {
  const fields = shared(dict(raw), true)
  // Checked by PostHog's create(), after the fields: not a field error.
  if (!fields.filters) throw new ValidationError('invalid', 'Filters are required to create an holdout group')
  return { ...fields, name: fields.name!, filters: fields.filters }
}

export function readHoldoutUpdate(raw: unknown): HoldoutFields {
  return shared(dict(raw), false)
}

/**
 * An experiment's `holdout_id` as DRF's PrimaryKeyRelatedField reads it: undefined when not sent, null to
 * remove, else the id (Django's int() of it: numbers truncate, strings must be digits). Whether that holdout
 * exists in the project is the service's check.
 */
export function readHoldoutRef(value: unknown): number | null | undefined {
  if (value === undefined || value === null) return value
  if (typeof value === 'number' && Number.isFinite(value)) return Math.trunc(value)
  if (typeof value === 'string' && /^\s*[+-]?\d+\s*$/.test(value)) return Number(value)
  throw new ValidationError('incorrect_type', `Incorrect type. Expected pk value, received ${pyTypeName(value)}.`, 'holdout_id')
}

export function holdoutNotFound(value: unknown): ValidationError {
  return new ValidationError('does_not_exist', `Invalid pk "${pyStr(value)}" - object does not exist.`, 'holdout_id')
}
