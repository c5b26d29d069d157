/**
 * The `name` PostHog's events/values gives a stored value. PostHog reads the value's text (strings without
 * their quotes), json.loads it where it parses (so the string "12" is the number 12, "null" is None), flattens
 * lists (an array of tags is one value per tag) and writes each with convert_property_value: booleans
 * `true`/`false`, objects json.dumps with sorted keys, anything else str() — Python's, so None is `None` and
 * the float 1.0 is `1.0`.
 */
import { sortedKeys } from '../../common/json.js'
import { pyJsonDumps } from '../../common/python-format.js'

/** Python's json whitespace; JS's trim() also takes Unicode spaces, which json.loads refuses. */
const JSON_SPACE = /^[ \t\n\r]+|[ \t\n\r]+$/g
const INT = /^-?(?:0|[1-9]\d*)$/
const FLOAT = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/
/** PostHog's flatten() goes 10 lists deep. */
const FLATTEN_DEPTH = 10

/** repr() of a Python float: shortest round-trip digits, fixed from 1e-4 to below 1e16, else `1e+16`. */
export function pyFloatRepr(n: number): string {
  if (Number.isNaN(n)) return 'nan'
  if (!Number.isFinite(n)) return n > 0 ? 'inf' : '-inf'
  const [mantissa, exponent] = n.toExponential().split('e')
  const exp = Number(exponent)
  const digits = mantissa.replace('-', '').replace('.', '')
  const sign = n < 0 || Object.is(n, -0) ? '-' : ''
  if (exp >= 16 || exp < -4) {
    const m = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits
    return `${sign}${m}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`
  }
  if (exp < 0) return `${sign}0.${'0'.repeat(-exp - 1)}${digits}`
  return `${sign}${digits.slice(0, exp + 1).padEnd(exp + 1, '0')}.${digits.slice(exp + 1) || '0'}`
}

/** A Python int's or float's text, kept apart as json.loads keeps them. */
class PyNumber {
  constructor(readonly text: string) {}
}

/** json.loads(text), or undefined where Python raises (the text is then kept as it is). */
function pyJsonLoads(raw: string): unknown {
  const text = raw.replace(JSON_SPACE, '')
  if (INT.test(text)) return new PyNumber(BigInt(text).toString())
  if (FLOAT.test(text)) return new PyNumber(pyFloatRepr(Number(text)))
  if (text === 'NaN' || text === 'Infinity' || text === '-Infinity') return new PyNumber(pyFloatRepr(Number(text)))
  try {
    return JSON.parse(text) as unknown
  } catch {
    return undefined
  }
}

/** convert_property_value. */
function name(value: unknown): string {
  if (value instanceof PyNumber) return value.text
  if (value === true || value === false) return String(value)
  if (value === null) return 'None'
  if (typeof value === 'number') return Number.isInteger(value) ? String(value) : pyFloatRepr(value)
  if (typeof value === 'string') return value
  return pyJsonDumps(sortedKeys(value))
}

function* flatten(value: unknown, depth: number): Generator<unknown> {
  if (Array.isArray(value) && depth > 0) {
    for (const item of value) yield* flatten(item, depth - 1)
  } else {
    yield value
  }
}

/** PostHog's `{name}` items for the stored texts, in their order (a list gives one item per element). */
export function valueNames(texts: readonly string[]): Array<{ name: string }> {
  const out: Array<{ name: string }> = []
  for (const text of texts) {
    const parsed = pyJsonLoads(text)
    for (const value of flatten(parsed === undefined ? text : parsed, FLATTEN_DEPTH)) out.push({ name: name(value) })
  }
  return out
}
