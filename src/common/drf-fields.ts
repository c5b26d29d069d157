/**
 * DRF's field checks with its messages and codes, for bodies that are read field by field: PostHog's
 * serializers answer these, and clients show them. `attr` names the field in the error envelope.
 */
import { ValidationError } from './errors.js'
import { isPlainObject, type JsonObject } from './json.js'
import { pyTypeName } from './python-format.js'

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

const DATETIME_FORMAT = 'Datetime has wrong format. Use one of these formats instead: YYYY-MM-DDThh:mm[:ss[.uuuuuu]][+HH:MM|-HH:MM|Z].'

/** DRF's DateTimeField on a string: ISO 8601; a time without an offset is UTC (Django's default time zone). */
export function parseDateField(value: string | null | undefined, attr: string): string | null | undefined {
  if (value === undefined || value === null) return value
  const iso = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(\.\d+)?)?)?(Z|[+-]\d{2}:?\d{2})?$/i.exec(value.trim())
  const ms = iso ? Date.parse(`${iso[1]}-${iso[2]}-${iso[3]}T${iso[4] ?? '00'}:${iso[5] ?? '00'}:${iso[6] ?? '00'}${(iso[7] ?? '').slice(0, 4)}${normaliseOffset(iso[8])}`) : NaN
  if (!Number.isFinite(ms)) {
    throw new ValidationError('invalid', DATETIME_FORMAT, attr)
  }
  return new Date(ms).toISOString()
}

/** DRF's DateTimeField on any JSON value: null where the field allows it, anything but a string is refused. */
export function drfDateTime(value: unknown, attr: string, options: { nullable?: boolean } = {}): string | null {
  if (value === null) {
    if (options.nullable) return null
    throw nullError(attr)
  }
  if (typeof value !== 'string') throw new ValidationError('invalid', DATETIME_FORMAT, attr)
  return parseDateField(value, attr)!
}

function normaliseOffset(offset: string | undefined): string {
  if (!offset || offset.toUpperCase() === 'Z') return 'Z'
  return offset.includes(':') ? offset : `${offset.slice(0, 3)}:${offset.slice(3)}`
}

const TRUE = new Set<unknown>(['t', 'T', 'y', 'Y', 'yes', 'Yes', 'YES', 'true', 'True', 'TRUE', 'on', 'On', 'ON', '1', 1, true])
const FALSE = new Set<unknown>(['f', 'F', 'n', 'N', 'no', 'No', 'NO', 'false', 'False', 'FALSE', 'off', 'Off', 'OFF', '0', 0, false])

/** DRF's BooleanField: its true and false spellings, absent is false, anything else "Must be a valid boolean.". */
export function drfBoolean(value: unknown, attr: string): boolean {
  if (value === undefined || FALSE.has(value)) return false
  if (TRUE.has(value)) return true
  throw new ValidationError('invalid', 'Must be a valid boolean.', attr)
}

/** ListField: a JSON array (a string or an object is not a list), at most `maxLength` items. */
export function drfList(value: unknown, attr: string, options: { maxLength?: number } = {}): unknown[] {
  if (value === null) throw nullError(attr)
  if (!Array.isArray(value)) throw new ValidationError('not_a_list', `Expected a list of items but got type "${pyTypeName(value)}".`, attr)
  if (options.maxLength !== undefined && value.length > options.maxLength) {
    throw new ValidationError('max_length', `Ensure this field has no more than ${options.maxLength} elements.`, attr)
  }
  return value
}

/** A serializer's body must be a dict (DRF's `non_field_errors`, answered with attr null); no body reads as `{}`. */
export function drfDict(body: unknown): JsonObject {
  if (isPlainObject(body)) return body
  if (body === null || body === undefined) return {}
  throw new ValidationError('invalid', `Invalid data. Expected a dictionary, but got ${pyTypeName(body)}.`)
}
