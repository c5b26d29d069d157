/**
 * Python's text forms, for the two places PostHog's output depends on them: error messages that embed a
 * value with str() (`Invalid value for operator gt: [1, 2]`) and object payloads normalised with
 * json.dumps (`{"a": 1}`, the string SDKs receive).
 */
import { isPlainObject } from './json.js'

/** str(value) for JSON values. */
export function pyStr(value: unknown): string {
  if (typeof value === 'string') return value
  return pyRepr(value)
}

/** Python's repr() of a JSON value. */
export function pyRepr(value: unknown): string {
  if (value === null || value === undefined) return 'None'
  if (value === true) return 'True'
  if (value === false) return 'False'
  if (typeof value === 'number') return String(value)
  if (typeof value === 'string') return value.includes("'") && !value.includes('"') ? `"${value}"` : `'${value.replace(/'/g, "\\'")}'`
  if (Array.isArray(value)) return `[${value.map(pyRepr).join(', ')}]`
  if (isPlainObject(value)) return `{${Object.entries(value).map(([k, v]) => `${pyRepr(k)}: ${pyRepr(v)}`).join(', ')}}`
  return String(value)
}

export interface PyJsonOptions {
  /** json.dumps's sort_keys. */
  sortKeys?: boolean
  /** separators=(",", ":") instead of the default (", ", ": "). */
  compact?: boolean
}

/** json.dumps(value) with Python's defaults (non-ASCII escaped), optionally with sort_keys and compact separators. */
export function pyJsonDumps(value: unknown, options: PyJsonOptions = {}): string {
  const [item, pair] = options.compact ? [',', ':'] : [', ', ': ']
  const dump = (v: unknown): string => {
    if (v === null || v === undefined) return 'null'
    if (typeof v === 'string') return asciiJsonString(v)
    if (typeof v === 'number' || typeof v === 'boolean') return JSON.stringify(v)
    if (Array.isArray(v)) return `[${v.map(dump).join(item)}]`
    if (isPlainObject(v)) {
      const entries = Object.entries(v)
      if (options.sortKeys) entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      return `{${entries.map(([k, x]) => `${asciiJsonString(k)}${pair}${dump(x)}`).join(item)}}`
    }
    return JSON.stringify(v)
  }
  return dump(value)
}

function asciiJsonString(text: string): string {
  return JSON.stringify(text).replace(/[\u0080-\uffff]/g, (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'))
}

/** Python's `type(value).__name__` of a JSON value, as DRF's and PostHog's messages print it. */
export function pyTypeName(value: unknown): string {
  if (value === null || value === undefined) return 'NoneType'
  if (typeof value === 'boolean') return 'bool'
  if (typeof value === 'number') return Number.isInteger(value) ? 'int' : 'float'
  if (typeof value === 'string') return 'str'
  return Array.isArray(value) ? 'list' : 'dict'
}
