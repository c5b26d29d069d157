/**
 * The protobuf form of an OTLP logs request (opentelemetry/proto/collector/logs/v1), read field by field: the
 * handful of messages it uses are small and stable, and a general protobuf library would be a dependency for
 * ≈100 lines. Unknown fields are skipped, as protobuf readers must; a truncated or misshapen message throws.
 */
import type { AnyValue, OtlpLogRecord, OtlpResourceLogs, OtlpScopeLogs } from './otlp.js'

const VARINT = 0
const I64 = 1
const LEN = 2
const I32 = 5

class Reader {
  pos: number

  constructor(
    readonly buf: Buffer,
    start = 0,
    readonly end = buf.length,
  ) {
    this.pos = start
  }

  get done(): boolean {
    return this.pos >= this.end
  }

  varint(): bigint {
    let result = 0n
    for (let shift = 0n; shift < 70n; shift += 7n) {
      if (this.pos >= this.end) throw new Error('truncated varint')
      const byte = this.buf[this.pos++]
      result |= BigInt(byte & 0x7f) << shift
      if (byte < 0x80) return BigInt.asUintN(64, result)
    }
    throw new Error('varint too long')
  }

  small(): number {
    return Number(BigInt.asIntN(32, this.varint()))
  }

  fixed64(): bigint {
    if (this.pos + 8 > this.end) throw new Error('truncated fixed64')
    const v = this.buf.readBigUInt64LE(this.pos)
    this.pos += 8
    return v
  }

  fixed32(): number {
    if (this.pos + 4 > this.end) throw new Error('truncated fixed32')
    const v = this.buf.readUInt32LE(this.pos)
    this.pos += 4
    return v
  }

  double(): number {
    if (this.pos + 8 > this.end) throw new Error('truncated double')
    const v = this.buf.readDoubleLE(this.pos)
    this.pos += 8
    return v
  }

  /** A length-delimited field's reader (and this one moved past it). */
  sub(): Reader {
    const length = Number(this.varint())
    if (this.pos + length > this.end) throw new Error('truncated field')
    const r = new Reader(this.buf, this.pos, this.pos + length)
    this.pos += length
    return r
  }

  bytes(): Buffer {
    const r = this.sub()
    return this.buf.subarray(r.pos, r.end)
  }

  string(): string {
    return this.bytes().toString('utf8')
  }

  skip(wire: number): void {
    if (wire === VARINT) this.varint()
    else if (wire === I64) this.fixed64()
    else if (wire === LEN) this.sub()
    else if (wire === I32) this.fixed32()
    else throw new Error(`unsupported wire type ${wire}`)
  }

  /** Each field of the message: `on` reads the ones it knows and returns false for the rest, which are skipped. */
  fields(on: (field: number, wire: number) => boolean): void {
    while (!this.done) {
      const key = Number(this.varint())
      const field = key >>> 3
      const wire = key & 7
      if (field === 0) throw new Error('field number 0')
      if (!on(field, wire)) this.skip(wire)
    }
  }
}

function anyValue(r: Reader): AnyValue {
  let value: AnyValue = null
  r.fields((field, wire) => {
    if (field === 1 && wire === LEN) value = { s: r.string() }
    else if (field === 2 && wire === VARINT) value = { b: r.varint() !== 0n }
    else if (field === 3 && wire === VARINT) value = { i: BigInt.asIntN(64, r.varint()).toString() }
    else if (field === 4 && wire === I64) value = { d: r.double() }
    else if (field === 5 && wire === LEN) {
      const values: AnyValue[] = []
      const a = r.sub()
      a.fields((f, w) => f === 1 && w === LEN && values.push(anyValue(a.sub())) > 0)
      value = { a: values }
    } else if (field === 6 && wire === LEN) {
      const kv = r.sub()
      const pairs: Array<[string, AnyValue]> = []
      kv.fields((f, w) => f === 1 && w === LEN && pairs.push(keyValue(kv.sub())) > 0)
      value = { kv: pairs }
    } else if (field === 7 && wire === LEN) value = { bytes: Buffer.from(r.bytes()) }
    else return false
    return true
  })
  return value
}

function keyValue(r: Reader): [string, AnyValue] {
  let key = ''
  let value: AnyValue = null
  r.fields((field, wire) => {
    if (field === 1 && wire === LEN) key = r.string()
    else if (field === 2 && wire === LEN) value = anyValue(r.sub())
    else return false
    return true
  })
  return [key, value]
}

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
    if (field === 1 && wire === LEN) {
      const s = r.sub()
      const scope = { name: '', version: '' }
      s.fields((f, w) => {
        if (f === 1 && w === LEN) scope.name = s.string()
        else if (f === 2 && w === LEN) scope.version = s.string()
        else return false
        return true
      })
      out.scope = scope
    } else if (field === 2 && wire === LEN) out.logRecords.push(logRecord(r.sub()))
    else return false
    return true
  })
  return out
}

function resourceLogs(r: Reader): OtlpResourceLogs {
  const out: OtlpResourceLogs = { resourceAttributes: null, scopeLogs: [] }
  r.fields((field, wire) => {
    if (field === 1 && wire === LEN) {
      const res = r.sub()
      const attributes: Array<[string, AnyValue]> = []
      res.fields((f, w) => f === 1 && w === LEN && attributes.push(keyValue(res.sub())) > 0)
      out.resourceAttributes = attributes
    } else if (field === 2 && wire === LEN) out.scopeLogs.push(scopeLogs(r.sub()))
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
