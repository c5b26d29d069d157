/**
 * The protobuf wire form OTLP requests share (opentelemetry/proto/common/v1), read field by field: the handful
 * of messages OTLP uses are small and stable, and a general protobuf library would be a dependency for ≈100
 * lines. Unknown fields are skipped, as protobuf readers must; a truncated or misshapen message throws. The logs
 * and metrics requests' own messages are read where they are used (src/logs, src/metrics).
 */
import type { AnyValue } from './otlp.js'

export const VARINT = 0
export const I64 = 1
export const LEN = 2
export const I32 = 5

export class Reader {
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

export function anyValue(r: Reader): AnyValue {
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

export function keyValue(r: Reader): [string, AnyValue] {
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

/** A Resource's attributes (opentelemetry.proto.resource.v1.Resource, field 1). */
export function resourceAttributes(r: Reader): Array<[string, AnyValue]> {
  const attributes: Array<[string, AnyValue]> = []
  r.fields((f, w) => f === 1 && w === LEN && attributes.push(keyValue(r.sub())) > 0)
  return attributes
}

/** An InstrumentationScope's name and version. */
export function scope(r: Reader): { name: string; version: string } {
  const out = { name: '', version: '' }
  r.fields((f, w) => {
    if (f === 1 && w === LEN) out.name = r.string()
    else if (f === 2 && w === LEN) out.version = r.string()
    else return false
    return true
  })
  return out
}
