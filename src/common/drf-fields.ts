/**
 * DRF's field checks with its messages and codes, for bodies that are read field by field: PostHog's
 * serializers answer these, and clients show them. `attr` names the field in the error envelope.
 */
import { ValidationError } from './errors.js'

const nullError = (attr: string) => new ValidationError('null', 'This field may not be null.', attr)

/** IntegerField: integral numbers and digit strings (spaces around allowed, as Python's int() allows). */
export function drfInteger(value: unknown, attr: string, options: { nullable?: boolean; min?: number; max?: number } = {}): number | null {
  if (value === null) {
    if (options.nullable) return null
    throw nullError(attr)
  }
  const n = typeof value === 'string' && /^\s*[+-]?\d+\s*$/.test(value) ? Number(value) : value
  if (typeof n !== 'number' || !Number.isSafeInteger(n)) throw new ValidationError('invalid', 'A valid integer is required.', attr)
  if (options.min !== undefined && n < options.min) throw new ValidationError('min_value', `Ensure this value is greater than or equal to ${options.min}.`, attr)
  if (options.max !== undefined && n > options.max) throw new ValidationError('max_value', `Ensure this value is less than or equal to ${options.max}.`, attr)
  return n
}

/**
 * CharField: strings (numbers become strings), blank only where allowed, at most `maxLength` characters (code
 * points, as Python counts). `trim` is DRF's `trim_whitespace`, on by default there.
 */
export function drfText(value: unknown, attr: string, options: { allowBlank?: boolean; maxLength?: number; trim?: boolean } = {}): string {
  if (value === null) throw nullError(attr)
  if (typeof value !== 'string' && typeof value !== 'number') throw new ValidationError('invalid', 'Not a valid string.', attr)
  const raw = String(value)
  const s = options.trim === false ? raw : raw.trim()
  if (!options.allowBlank && raw.trim() === '') throw new ValidationError('blank', 'This field may not be blank.', attr)
  if (options.maxLength !== undefined && [...s].length > options.maxLength) {
    throw new ValidationError('max_length', `Ensure this field has no more than ${options.maxLength} characters.`, attr)
  }
  return s
}

/** Python's truthiness of a JSON value (`if value:`). */
export function pyTruthy(value: unknown): boolean {
  if (value === null || value === undefined || value === false || value === 0 || value === '') return false
  if (Array.isArray(value)) return value.length > 0
  if (typeof value === 'object') return Object.keys(value).length > 0
  return true
}
