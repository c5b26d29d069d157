/**
 * Python's text forms, for the two places PostHog's output depends on them: error messages that embed a
 * value with str() (`Invalid value for operator gt: [1, 2]`) and object payloads normalised with
 * json.dumps (`{"a": 1}`, the string SDKs receive).
 */
import { isPlainObject } from '../../common/json.js'

/** str(value) for JSON values. */
export function pyStr(value: unknown): string {
  if (typeof value === 'string') return value
  return pyRepr(value)
}

function pyRepr(value: unknown): string {
  if (value === null || value === undefined) return 'None'
  if (value === true) return 'True'
  if (value === false) return 'False'
  if (typeof value === 'number') return String(value)
  if (typeof value === 'string') return value.includes("'") && !value.includes('"') ? `"${value}"` : `'${value.replace(/'/g, "\\'")}'`
  if (Array.isArray(value)) return `[${value.map(pyRepr).join(', ')}]`
  if (isPlainObject(value)) return `{${Object.entries(value).map(([k, v]) => `${pyRepr(k)}: ${pyRepr(v)}`).join(', ')}}`
  return String(value)
}

/** json.dumps(value) with Python's defaults: `, ` and `: ` separators, non-ASCII escaped. */
export function pyJsonDumps(value: unknown): string {
  if (value === null || value === undefined) return 'null'
  if (typeof value === 'string') return asciiJsonString(value)
  if (typeof value === 'number' || typeof value === 'boolean') return JSON.stringify(value)
  if (Array.isArray(value)) return `[${value.map(pyJsonDumps).join(', ')}]`
  if (isPlainObject(value)) {
    return `{${Object.entries(value).map(([k, v]) => `${asciiJsonString(k)}: ${pyJsonDumps(v)}`).join(', ')}}`
  }
  return JSON.stringify(value)
}

function asciiJsonString(text: string): string {
  return JSON.stringify(text).replace(/[\u0080-\uffff]/g, (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'))
}
