/** The protobuf form of an OTLP logs request (opentelemetry/proto/collector/logs/v1), on the shared reader. */
import { anyValue, I32, I64, keyValue, LEN, Reader, resourceAttributes, scope, VARINT } from '../common/otlp-proto.js'
import type { OtlpLogRecord, OtlpResourceLogs, OtlpScopeLogs } from './otlp.js'

function logRecord(r: Reader): OtlpLogRecord {
  const record: OtlpLogRecord = {
    timeUnixNano: '0',
    severityNumber: 0,
    severityText: '',
    body: null,
    attributes: [],
    flags: 0,
    traceId: Buffer.alloc(0),
    spanId: Buffer.alloc(0),
    eventName: '',
  }
  r.fields((field, wire) => {
    if (field === 1 && wire === I64) record.timeUnixNano = r.fixed64().toString()
    else if (field === 2 && wire === VARINT) record.severityNumber = r.small()
    else if (field === 3 && wire === LEN) record.severityText = r.string()
    else if (field === 5 && wire === LEN) record.body = anyValue(r.sub())
    else if (field === 6 && wire === LEN) record.attributes.push(keyValue(r.sub()))
    else if (field === 8 && wire === I32) record.flags = r.fixed32()
    else if (field === 9 && wire === LEN) record.traceId = Buffer.from(r.bytes())
    else if (field === 10 && wire === LEN) record.spanId = Buffer.from(r.bytes())
    else if (field === 12 && wire === LEN) record.eventName = r.string()
    else return false
    return true
  })
  return record
}

function scopeLogs(r: Reader): OtlpScopeLogs {
  const out: OtlpScopeLogs = { scope: null, logRecords: [] }
  r.fields((field, wire) => {
    if (field === 1 && wire === LEN) out.scope = scope(r.sub())
    else if (field === 2 && wire === LEN) out.logRecords.push(logRecord(r.sub()))
    else return false
    return true
  })
  return out
}

function resourceLogs(r: Reader): OtlpResourceLogs {
  const out: OtlpResourceLogs = { resourceAttributes: null, scopeLogs: [] }
  r.fields((field, wire) => {
    if (field === 1 && wire === LEN) out.resourceAttributes = resourceAttributes(r.sub())
    else if (field === 2 && wire === LEN) out.scopeLogs.push(scopeLogs(r.sub()))
    else return false
    return true
  })
  return out
}

/** ExportLogsServiceRequest's resource logs (field 1). */
export function readLogsProto(body: Buffer): OtlpResourceLogs[] {
  const out: OtlpResourceLogs[] = []
  const r = new Reader(body)
  r.fields((field, wire) => field === 1 && wire === LEN && out.push(resourceLogs(r.sub())) > 0)
  return out
}
