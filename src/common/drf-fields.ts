/**
 * DRF's field checks with its messages and codes, for bodies that are read field by field: PostHog's
 * serializers answer these, and clients show them. `attr` names the field in the error envelope.
 */
import { ValidationError } from './errors.js'

const nullError = (attr: string) => new ValidationError('null', 'This field may not be null.', attr)

/** DRF refuses longer strings before it tries int() on them. */
const MAX_STRING_LENGTH = 1000

/**
 * IntegerField: integral numbers and digit strings, spaces around allowed as Python's int() allows, and a
 * `.0…` tail, which DRF strips first (`"3.0"` is 3).
 */
export function drfInteger(value: unknown, attr: string, options: { nullable?: boolean; min?: number; max?: number } = {}): number | null {
  if (value === null) {
    if (options.nullable) return null
    throw nullError(attr)
  }
  if (typeof value === 'string' && value.length > MAX_STRING_LENGTH) throw new ValidationError('max_string_length', 'String value too large.', attr)
  const n = typeof value === 'string' && /^\s*[+-]?\d+(\.0*)?\s*$/.test(value) ? Number.parseInt(value, 10) : value
  if (typeof n !== 'number' || !Number.isSafeInteger(n)) throw new ValidationError('invalid', 'A valid integer is required.', attr)
  if (options.min !== undefined && n < options.min) throw new ValidationError('min_value', `Ensure this value is greater than or equal to ${options.min}.`, attr)
  if (options.max !== undefined && n > options.max) throw new ValidationError('max_value', `Ensure this value is less than or equal to ${options.max}.`, attr)
  return n
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/

/**
 * CharField: strings (numbers become strings), blank only where allowed, at most `maxLength` characters (code
 * points, as Python counts), then DRF's validators against NUL and lone surrogates, in its order. `trim` is
 * DRF's `trim_whitespace`, on by default there.
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
  if (s.includes('\u0000')) throw new ValidationError('null_characters_not_allowed', 'Null characters are not allowed.', attr)
  const surrogate = LONE_SURROGATE.exec(s)
  if (surrogate) {
    const code = surrogate[0].charCodeAt(0).toString(16).toUpperCase()
    throw new ValidationError('surrogate_characters_not_allowed', `Surrogate characters are not allowed: U+${code}.`, attr)
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
