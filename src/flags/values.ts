/**
 * How PostHog's Rust service turns JSON values into text and numbers before comparing them
 * (`to_string_representation`, `to_f64_representation`). Operators are defined on these forms, so they
 * have to match serde_json's output, not JavaScript's `String()`.
 */

const TWO_POW_64 = 18446744073709551616
const TWO_POW_63 = 9223372036854775808

/**
 * serde_json's text for a number. JSON integer literals are kept as integers by serde and printed as such;
 * everything else is an f64 printed by ryu ("1.5", "0.001", "1e-7", "1.5e300", "1e20"). JavaScript cannot
 * tell `1.0` from `1`, so an integral double inside the u64/i64 range is printed as an integer.
 */
export function numberText(n: number): string {
  if (!Number.isFinite(n)) return 'null'
  // Below 2^64 String() never switches to exponent notation (that starts at 1e21).
  if (Number.isInteger(n) && n < TWO_POW_64 && n >= -TWO_POW_63) return String(n)
  const sign = n < 0 ? '-' : ''
  const [mantissa, exp] = Math.abs(n).toExponential().split('e')
  const digits = mantissa.replace('.', '')
  const kk = Number(exp) + 1
  const len = digits.length
  if (kk - len >= 0 && kk <= 16) return sign + digits + '0'.repeat(kk - len) + '.0'
  if (kk > 0 && kk <= 16) return sign + digits.slice(0, kk) + '.' + digits.slice(kk)
  if (kk > -5 && kk <= 0) return sign + '0.' + '0'.repeat(-kk) + digits
  const e = 'e' + (kk - 1)
  return sign + (len === 1 ? digits : digits[0] + '.' + digits.slice(1)) + e
}

/** serde_json's compact JSON text (numbers as above, strings escaped like serde). */
export function jsonText(v: unknown): string {
  if (v === null || v === undefined) return 'null'
  switch (typeof v) {
    case 'string':
      return JSON.stringify(v)
    case 'number':
      return numberText(v)
    case 'boolean':
      return v ? 'true' : 'false'
    case 'object':
      if (Array.isArray(v)) return '[' + v.map(jsonText).join(',') + ']'
      return '{' + Object.entries(v).map(([k, x]) => JSON.stringify(k) + ':' + jsonText(x)).join(',') + '}'
    default:
      return 'null'
  }
}

/** `to_string_representation`: strings as they are, anything else as its JSON text. */
export function valueText(v: unknown): string {
  return typeof v === 'string' ? v : jsonText(v)
}

const RUST_FLOAT = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/
const RUST_SPECIAL = /^([+-]?)(inf|infinity|nan)$/i

/** Rust's `str::parse::<f64>`: no whitespace, no hex, `inf`/`infinity`/`nan` in any case; null when invalid. */
export function parseRustF64(s: string): number | null {
  if (RUST_FLOAT.test(s)) return Number(s)
  const m = RUST_SPECIAL.exec(s)
  if (m === null) return null
  if (m[2].toLowerCase() === 'nan') return NaN
  return m[1] === '-' ? -Infinity : Infinity
}

/** `to_f64_representation`: numbers directly, anything else through its text. */
export function toF64(v: unknown): number | null {
  if (typeof v === 'number') return v
  return parseRustF64(valueText(v))
}

const ASCII_UPPER = /[A-Z]/

/** Rust's `to_ascii_lowercase`: only A–Z change, unlike `toLowerCase`. */
export function asciiLower(s: string): string {
  if (!ASCII_UPPER.test(s)) return s
  let out = ''
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    out += c >= 65 && c <= 90 ? String.fromCharCode(c + 32) : s[i]
  }
  return out
}

/**
 * Own-property lookup: property maps come from JSON, so a missing key must not find what `Object.prototype`
 * has (functions, and the `__proto__` accessor). JSON values are never functions, so only those need the
 * slower own-property check.
 */
export function lookup(props: Record<string, unknown>, key: string): unknown {
  const v = props[key]
  if (v === undefined) return undefined
  if ((typeof v === 'function' || v === Object.prototype) && !Object.hasOwn(props, key)) return undefined
  return v
}
