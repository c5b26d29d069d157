/**
 * OTLP logs requests (ExportLogsServiceRequest) as PostHog's capture-logs reads them: protobuf or JSON, the JSON
 * as one object or as JSON Lines of several. Both decoders give the same shape, `OtlpResourceLogs[]`, with every
 * AnyValue already written the way PostHog stores it (`anyJson`): strings as themselves where a text is wanted,
 * anything else as JSON. Malformed input is an AppError (`invalid_payload`), never a crash.
 */
import { AppError } from '../common/errors.js'
import { isPlainObject } from '../common/json.js'
import { readLogsProto } from './otlp-proto.js'

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

export interface OtlpLogRecord {
  /** Nanoseconds since the epoch as digits ('0' when absent). */
  timeUnixNano: string
  severityNumber: number
  severityText: string
  body: AnyValue
  attributes: Array<[string, AnyValue]>
  flags: number
  traceId: Buffer
  spanId: Buffer
  eventName: string
}

export interface OtlpScopeLogs {
  scope: { name: string; version: string } | null
  logRecords: OtlpLogRecord[]
}

export interface OtlpResourceLogs {
  /** null: the resource was absent. */
  resourceAttributes: Array<[string, AnyValue]> | null
  scopeLogs: OtlpScopeLogs[]
}

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

const bad = (detail: string) => new AppError('invalid_payload', { detail: `Malformed OTLP logs request: ${detail}.` })

/** The request's resource logs: protobuf unless the body opens as JSON does (`{`), as capture-logs tries both. */
export function decodeLogsRequest(body: Buffer): OtlpResourceLogs[] {
  let i = 0
  while (i < body.length && (body[i] === 0x20 || body[i] === 0x0a || body[i] === 0x0d || body[i] === 0x09)) i++
  if (body[i] !== 0x7b) {
    try {
      return readLogsProto(body)
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
  return docs.flatMap((doc) => list(field(object(doc, 'the request'), 'resourceLogs', 'resource_logs'), 'resourceLogs').map(resourceLogs))
}

// OTLP/JSON names fields in lowerCamelCase; receivers take the proto's snake_case names too.
function field(o: Record<string, unknown>, camel: string, snake: string): unknown {
  return o[camel] !== undefined ? o[camel] : o[snake]
}

function object(v: unknown, what: string): Record<string, unknown> {
  if (v === null || v === undefined) return {}
  if (!isPlainObject(v)) throw bad(`${what} is not an object`)
  return v
}

function list(v: unknown, what: string): unknown[] {
  if (v === null || v === undefined) return []
  if (!Array.isArray(v)) throw bad(`${what} is not a list`)
  return v
}

function text(v: unknown, what: string): string {
  if (v === null || v === undefined) return ''
  if (typeof v !== 'string') throw bad(`${what} is not a string`)
  return v
}

/** A uint64/int64 field: a JSON number or its digits in a string. */
function digits(v: unknown, what: string): string {
  if (v === null || v === undefined || v === '') return '0'
  if (typeof v === 'number' && Number.isInteger(v)) return BigInt(v).toString()
  if (typeof v === 'string' && /^-?\d{1,20}$/.test(v)) return BigInt(v).toString()
  throw bad(`${what} is not an integer`)
}

function int32(v: unknown, what: string): number {
  const n = Number(digits(v, what))
  if (!Number.isSafeInteger(n) || n < -(2 ** 31) || n >= 2 ** 32) throw bad(`${what} is out of range`)
  return n
}

/** trace and span ids are hex in OTLP/JSON; an empty or misshapen one is stored as zeros, as capture-logs does. */
function hexId(v: unknown, what: string): Buffer {
  const s = text(v, what)
  return /^(?:[0-9a-fA-F]{2})*$/.test(s) ? Buffer.from(s, 'hex') : Buffer.alloc(0)
}

function anyValue(v: unknown): AnyValue {
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
  if (d !== undefined) {
    const n = typeof d === 'string' ? Number(d) : d
    if (typeof n !== 'number' || (typeof d === 'string' && !/^(?:-?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?|NaN|-?Infinity)$/.test(d))) throw bad('doubleValue is not a number')
    return { d: n }
  }
  const a = field(o, 'arrayValue', 'array_value')
  if (a !== undefined) return { a: list(object(a, 'arrayValue').values, 'arrayValue.values').map(anyValue) }
  const kv = field(o, 'kvlistValue', 'kvlist_value')
  if (kv !== undefined) return { kv: keyValues(object(kv, 'kvlistValue').values) }
  const bytes = field(o, 'bytesValue', 'bytes_value')
  if (bytes !== undefined) return { bytes: Buffer.from(text(bytes, 'bytesValue'), 'base64') }
  return null
}

function keyValues(v: unknown): Array<[string, AnyValue]> {
  return list(v, 'attributes').map((kv) => {
    const o = object(kv, 'an attribute')
    return [text(o.key, 'an attribute key'), anyValue(o.value)]
  })
}

function logRecord(v: unknown): OtlpLogRecord {
  const o = object(v, 'a log record')
  return {
    timeUnixNano: digits(field(o, 'timeUnixNano', 'time_unix_nano'), 'timeUnixNano'),
    severityNumber: int32(field(o, 'severityNumber', 'severity_number'), 'severityNumber'),
    severityText: text(field(o, 'severityText', 'severity_text'), 'severityText'),
    body: anyValue(o.body),
    attributes: keyValues(o.attributes),
    flags: int32(o.flags, 'flags'),
    traceId: hexId(field(o, 'traceId', 'trace_id'), 'traceId'),
    spanId: hexId(field(o, 'spanId', 'span_id'), 'spanId'),
    eventName: text(field(o, 'eventName', 'event_name'), 'eventName'),
  }
}

function resourceLogs(v: unknown): OtlpResourceLogs {
  const o = object(v, 'a resourceLogs entry')
  const resource = o.resource === undefined || o.resource === null ? null : object(o.resource, 'resource')
  return {
    resourceAttributes: resource ? keyValues(resource.attributes) : null,
    scopeLogs: list(field(o, 'scopeLogs', 'scope_logs'), 'scopeLogs').map((s) => {
      const so = object(s, 'a scopeLogs entry')
      const scope = so.scope === undefined || so.scope === null ? null : object(so.scope, 'scope')
      return {
        scope: scope ? { name: text(scope.name, 'scope.name'), version: text(scope.version, 'scope.version') } : null,
        logRecords: list(field(so, 'logRecords', 'log_records'), 'logRecords').map(logRecord),
      }
    }),
  }
}
