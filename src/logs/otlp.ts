/**
 * OTLP logs requests (ExportLogsServiceRequest) as PostHog's capture-logs reads them: protobuf or JSON, the JSON
 * as one object or as JSON Lines of several (src/common/otlp.ts). Both decoders give the same shape, `OtlpResourceLogs[]`, with every
 * AnyValue already written the way PostHog stores it (`anyJson`): strings as themselves where a text is wanted,
 * anything else as JSON. Malformed input is an AppError (`invalid_payload`), never a crash.
 */
import { anyValue, type AnyValue, digits, field, hexId, int32, keyValues, list, object, otlpDocuments, text } from '../common/otlp.js'
import { readLogsProto } from './otlp-proto.js'

export { anyJson, anyText, type AnyValue } from '../common/otlp.js'

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

/** The request's resource logs. */
export function decodeLogsRequest(body: Buffer): OtlpResourceLogs[] {
  return otlpDocuments(body, readLogsProto, (doc) => list(field(object(doc, 'the request'), 'resourceLogs', 'resource_logs'), 'resourceLogs').map(resourceLogs))
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
