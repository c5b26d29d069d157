/**
 * What OTLP requests share, as PostHog's capture-logs reads them (rust/capture-logs): the AnyValue model and how
 * it is written, the JSON form's field readers (lowerCamelCase or snake_case names, int64 as digits), the body's
 * form told by its first byte, and the record rules both signals follow (attributes as texts, a time more than a
 * day off replaced by now). Malformed input is an AppError (`invalid_payload`), never a crash.
 */
import { AppError } from './errors.js'
import { isPlainObject } from './json.js'

/** An OTLP AnyValue: the decoders agree on this form, and `anyJson` writes it. */
export type AnyValue =
  | { s: string }
  | { b: boolean }
  /** int64 as its decimal digits: JSON sends it as a string, protobuf as a varint wider than a double. */
  | { i: string }
  | { d: number }
  | { a: AnyValue[] }
  | { kv: Array<[string, AnyValue]> }
  | { bytes: Buffer }
  | null

/** JSON of an AnyValue, as serde_json writes PostHog's (a non-finite double is null; bytes are base64). */
export function anyJson(v: AnyValue): string {
  if (v === null) return 'null'
  if ('s' in v) return JSON.stringify(v.s)
  if ('b' in v) return v.b ? 'true' : 'false'
  if ('i' in v) return v.i
  if ('d' in v) return Number.isFinite(v.d) ? JSON.stringify(v.d) : 'null'
  if ('a' in v) return `[${v.a.map(anyJson).join(',')}]`
  if ('kv' in v) return `{${v.kv.filter(([, x]) => x !== null).map(([k, x]) => `${JSON.stringify(k)}:${anyJson(x)}`).join(',')}}`
  return JSON.stringify(v.bytes.toString('base64'))
}

/** An attribute's stored text: a string as itself, anything else as its JSON. */
export function anyText(v: AnyValue): string {
  return v !== null && 's' in v ? v.s : anyJson(v)
}

export const bad = (detail: string) => new AppError('invalid_payload', { detail: `Malformed OTLP request: ${detail}.` })

/**
 * The request's documents: protobuf (read by `readProto`) unless the body opens as JSON does (`{`), as
 * capture-logs tries both; the JSON as one object or as JSON Lines of several.
 */
export function otlpDocuments<T>(body: Buffer, readProto: (body: Buffer) => T[], readJson: (doc: unknown) => T[]): T[] {
  let i = 0
  while (i < body.length && (body[i] === 0x20 || body[i] === 0x0a || body[i] === 0x0d || body[i] === 0x09)) i++
  if (body[i] !== 0x7b) {
    try {
      return readProto(body)
    } catch (error) {
      throw bad(`not protobuf (${(error as Error).message}) and not JSON`)
    }
  }
  const text = body.toString('utf8')
  let docs: unknown[]
  try {
    docs = [JSON.parse(text)]
  } catch {
    try {
      docs = text.split('\n').filter((line) => line.trim() !== '').map((line) => JSON.parse(line) as unknown)
    } catch (error) {
      throw bad(`not JSON (${(error as Error).message})`)
    }
  }
  return docs.flatMap(readJson)
}

// OTLP/JSON names fields in lowerCamelCase; receivers take the proto's snake_case names too.
export function field(o: Record<string, unknown>, camel: string, snake: string): unknown {
  return o[camel] !== undefined ? o[camel] : o[snake]
}

export function object(v: unknown, what: string): Record<string, unknown> {
  if (v === null || v === undefined) return {}
  if (!isPlainObject(v)) throw bad(`${what} is not an object`)
  return v
}

export function list(v: unknown, what: string): unknown[] {
  if (v === null || v === undefined) return []
  if (!Array.isArray(v)) throw bad(`${what} is not a list`)
  return v
}

export function text(v: unknown, what: string): string {
  if (v === null || v === undefined) return ''
  if (typeof v !== 'string') throw bad(`${what} is not a string`)
  return v
}

/** A uint64/int64 field: a JSON number or its digits in a string. */
export function digits(v: unknown, what: string): string {
  if (v === null || v === undefined || v === '') return '0'
  if (typeof v === 'number' && Number.isInteger(v)) return BigInt(v).toString()
  if (typeof v === 'string' && /^-?\d{1,20}$/.test(v)) return BigInt(v).toString()
  throw bad(`${what} is not an integer`)
}

/** A double: a JSON number, or a string of one (OTLP/JSON writes NaN and the infinities so). */
export function double(v: unknown, what: string): number {
  if (typeof v === 'number') return v
  if (typeof v === 'string' && /^(?:-?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?|NaN|-?Infinity)$/.test(v)) return Number(v)
  throw bad(`${what} is not a number`)
}

export function int32(v: unknown, what: string): number {
  const n = Number(digits(v, what))
  if (!Number.isSafeInteger(n) || n < -(2 ** 31) || n >= 2 ** 32) throw bad(`${what} is out of range`)
  return n
}

/** trace and span ids are hex in OTLP/JSON; an empty or misshapen one is stored as zeros, as capture-logs does. */
export function hexId(v: unknown, what: string): Buffer {
  const s = text(v, what)
  return /^(?:[0-9a-fA-F]{2})*$/.test(s) ? Buffer.from(s, 'hex') : Buffer.alloc(0)
}

export function anyValue(v: unknown): AnyValue {
  if (v === null || v === undefined) return null
  const o = object(v, 'a value')
  const s = field(o, 'stringValue', 'string_value')
  if (s !== undefined) return { s: text(s, 'stringValue') }
  const b = field(o, 'boolValue', 'bool_value')
  if (b !== undefined) {
    if (typeof b !== 'boolean') throw bad('boolValue is not a boolean')
    return { b }
  }
  const i = field(o, 'intValue', 'int_value')
  if (i !== undefined) return { i: digits(i, 'intValue') }
  const d = field(o, 'doubleValue', 'double_value')
  if (d !== undefined) return { d: double(d, 'doubleValue') }
  const a = field(o, 'arrayValue', 'array_value')
  if (a !== undefined) return { a: list(object(a, 'arrayValue').values, 'arrayValue.values').map(anyValue) }
  const kv = field(o, 'kvlistValue', 'kvlist_value')
  if (kv !== undefined) return { kv: keyValues(object(kv, 'kvlistValue').values) }
  const bytes = field(o, 'bytesValue', 'bytes_value')
  if (bytes !== undefined) return { bytes: Buffer.from(text(bytes, 'bytesValue'), 'base64') }
  return null
}

export function keyValues(v: unknown): Array<[string, AnyValue]> {
  return list(v, 'attributes').map((kv) => {
    const o = object(kv, 'an attribute')
    return [text(o.key, 'an attribute key'), anyValue(o.value)]
  })
}

/** Attributes as stored: each value's text (`anyText`), an absent value as ''. */
export function attributesOf(pairs: ReadonlyArray<[string, AnyValue]>): Record<string, string> {
  const out: Record<string, string> = Object.create(null)
  for (const [key, value] of pairs) out[key] = anyText(value ?? { s: '' })
  return out
}

export const DAY_NS = 24n * 3600n * 1_000_000_000n

/** RFC 3339 in UTC as chrono's `to_rfc3339` writes it: the fraction in 0, 3, 6 or 9 digits, `+00:00`. */
export function rfc3339(ns: bigint): string {
  const ms = ns / 1_000_000n - (ns % 1_000_000n < 0n ? 1n : 0n)
  const base = new Date(Number(ms)).toISOString().slice(0, 19)
  const frac = ((ns % 1_000_000_000n) + 1_000_000_000n) % 1_000_000_000n
  const nine = frac.toString().padStart(9, '0')
  const digits = frac === 0n ? '' : nine.endsWith('000000') ? nine.slice(0, 3) : nine.endsWith('000') ? nine.slice(0, 6) : nine
  return `${base}${digits ? '.' + digits : ''}+00:00`
}

/**
 * A record's time in nanoseconds: now when it sent none (0), and now when it is more than a day off, the sent
 * one then kept as the `$originalTimestamp` attribute.
 */
export function recordTime(sentNs: string, nowNs: bigint, attributes: Record<string, string>): bigint {
  const ns = BigInt(sentNs)
  if (ns === 0n) return nowNs
  if (ns < nowNs - DAY_NS || ns > nowNs + DAY_NS) {
    attributes.$originalTimestamp = rfc3339(ns)
    return nowNs
  }
  return ns
}
