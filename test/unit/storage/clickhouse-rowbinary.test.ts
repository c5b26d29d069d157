import t, { type Test } from 'tap'
import { insertColumns, rowBinary } from '../../../src/storage/events/clickhouse-rowbinary.js'
import { packRows } from '../../../src/storage/events/packed-rows.js'
import { SinkError, type EventRow } from '../../../src/storage/events/types.js'

const features = (dateTime64: boolean) => ({ version: dateTime64 ? '23.8' : '18.16', dateTime64, jsonExtract: dateTime64 })

const row = (i: number): EventRow => ({
  uuid: `00000000-0000-7000-8000-${String(i).padStart(12, '0')}`,
  team_id: 2,
  event: i % 2 ? '$pageview' : 'ünïcödé "quoted"\n',
  distinct_id: `d${i}\t${i}`,
  person_id: '0123abcd-4567-5000-89ef-000000000001',
  // Lengths across the one-, two- and three-byte LEB128 prefixes.
  properties: JSON.stringify({ i, text: 'a "b" \\ c 😀', long: 'x'.repeat(i === 7 ? 20_000 : i) }),
  timestamp: Date.UTC(2024, 0, 2, 3, 4, 5, 678) + i,
  created_at: Date.UTC(2024, 0, 3),
  groups: ['g0', '', '', '', `g${i}\r\u0000`],
  elements_chain: i === 1 ? 'a:nth-child="1"' : '',
})

/** Reads RowBinary the way ClickHouse does, by the column types of the events table. */
class Reader {
  at = 0
  constructor(readonly buf: Buffer) {}
  string(): string {
    let length = 0
    for (let shift = 0; ; shift += 7) {
      const byte = this.buf[this.at++]
      length += (byte & 0x7f) * 2 ** shift
      if (byte < 0x80) break
    }
    this.at += length
    return this.buf.toString('utf8', this.at - length, this.at)
  }
  /** Two UInt64 halves, each little-endian. */
  uuid(): string {
    const half = (from: number) => Buffer.from(this.buf.subarray(from, from + 8)).reverse().toString('hex')
    const hex = half(this.at) + half(this.at + 8)
    this.at += 16
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
  }
  int64(): number {
    this.at += 8
    return Number(this.buf.readBigInt64LE(this.at - 8))
  }
  uint32(): number {
    this.at += 4
    return this.buf.readUInt32LE(this.at - 4)
  }
}

/** Rows as ClickHouse reads them: column name → value (times in ms for DateTime64, in s for DateTime). */
function decode(t: Test, buf: Buffer, dateTime64: boolean): Record<string, string | number>[] {
  const r = new Reader(buf)
  const columns = insertColumns(features(dateTime64)).split(', ')
  const rows: Record<string, string | number>[] = []
  while (r.at < buf.length) {
    const out: Record<string, string | number> = {}
    for (const column of columns) {
      if (column === 'uuid' || column === 'person_id') out[column] = r.uuid()
      else if (column === 'team_id' || column === 'timestamp_ms') out[column] = r.int64()
      else if (column === 'timestamp' || column === 'created_at') out[column] = dateTime64 ? r.int64() / 1000 : r.uint32()
      else if (column === '_timestamp') out[column] = r.uint32()
      else out[column] = r.string()
    }
    rows.push(out)
  }
  t.equal(r.at, buf.length, 'every byte belongs to a row')
  return rows
}

for (const dateTime64 of [true, false]) {
  t.test(`RowBinary in chunks of 64 rows, every column in the INSERT's order (dateTime64: ${dateTime64})`, async (t) => {
    const rows = Array.from({ length: 150 }, (_, i) => row(i))
    const before = Math.floor(Date.now() / 1000)
    const chunks = [...rowBinary(packRows(rows), features(dateTime64))]
    t.equal(chunks.length, 3, 'a buffer per 64 rows')
    const decoded = chunks.flatMap((chunk) => decode(t, chunk, dateTime64))
    t.same(
      decoded.map((d) => [d.uuid, d.event, d.distinct_id, d.person_id, d.properties, d['`$group_0`'], d['`$group_4`'], d.elements_chain, d.team_id]),
      rows.map((r) => [r.uuid, r.event, r.distinct_id, r.person_id, r.properties, r.groups[0], r.groups[4], r.elements_chain, r.team_id]),
    )
    const seconds = (ms: number) => Math.floor(ms / 1000)
    t.same(decoded.map((d) => d.timestamp), rows.map((r) => (dateTime64 ? r.timestamp : seconds(r.timestamp))))
    t.same(decoded.map((d) => d.created_at), rows.map((r) => (dateTime64 ? r.created_at : seconds(r.created_at))))
    if (!dateTime64) t.same(decoded.map((d) => d.timestamp_ms), rows.map((r) => r.timestamp))
    t.ok(decoded.every((d) => (d._timestamp as number) >= before && (d._timestamp as number) <= Date.now() / 1000), '_timestamp is now')
    t.same([...rowBinary(packRows([]), features(dateTime64))], [])
  })
}

t.test('chunks end once they hold 96 KB, below the 128 KB at which malloc maps each buffer anew', async (t) => {
  // Browser events with their GeoIP keys and $set/$set_once are ≈2.5 KB: 64 of them made ≈158 KB chunks.
  const rows = Array.from({ length: 160 }, (_, i) => ({ ...row(i), properties: JSON.stringify({ i, long: 'p'.repeat(2500) }) }))
  rows[90] = { ...rows[90], properties: JSON.stringify({ big: 'b'.repeat(200_000) }) }
  const chunks = [...rowBinary(packRows(rows), features(true))]
  const decoded = chunks.map((chunk) => decode(t, chunk, true))
  t.same(decoded.flat().map((d) => d.properties), rows.map((r) => r.properties), 'every row once, in order')
  const big = decoded.findIndex((c) => c.some((d) => (d.properties as string).includes('"big"')))
  t.match(decoded[big].at(-1)?.properties, /"big"/, 'a row of 200 KB ends its chunk')
  const others = chunks.filter((_, i) => i !== big)
  t.ok(others.every((c) => c.length < 128 * 1024), `the others: ${others.map((c) => c.length).join(', ')} bytes`)
  t.ok(chunks.slice(0, -1).every((c) => c.length >= 96 * 1024), 'each filled to 96 KB before the next begins')
  t.ok(decoded.every((c) => c.length < 64), 'fewer than 64 rows a chunk')
})

t.test('times are whole milliseconds, clamped to what DateTime holds, not sent as something ClickHouse refuses', async (t) => {
  const times = [-5, 1005.7, 9e15]
  const rows = times.map((ms, i) => ({ ...row(i), timestamp: ms, created_at: ms }))
  const [old] = decode(t, Buffer.concat([...rowBinary(packRows(rows.slice(0, 1)), features(false))]), false)
  t.equal(old.timestamp, 0, '1970-01-01 00:00:00')
  t.equal(old.timestamp_ms, -5, 'timestamp_ms as given')
  const decoded = decode(t, Buffer.concat([...rowBinary(packRows(rows), features(true))]), true)
  t.same(decoded.map((d) => d.timestamp), [0, 1005, 4294967294000])
  const last = decode(t, Buffer.concat([...rowBinary(packRows(rows.slice(2)), features(false))]), false)[0]
  t.equal(last.created_at, 4294967294, '2106-02-07 06:28:14, the last second DateTime holds')
})

t.test("a UUID is ClickHouse's two UInt64 halves, each little-endian, from either case of hex", async (t) => {
  for (const uuid of ['00112233-4455-6677-8899-aabbccddeeff', '00112233-4455-6677-8899-AABBCCDDEEFF']) {
    const [chunk] = [...rowBinary(packRows([{ ...row(1), uuid }]), features(true))]
    t.equal(chunk.subarray(0, 16).toString('hex'), '7766554433221100ffeeddccbbaa9988', uuid)
  }
})

t.test('a row no column can take exactly (a UUID not canonical, a fractional team, a time that is no number) is refused for good', async (t) => {
  const refusal = (bad: Partial<EventRow>, dateTime64 = false) => {
    try {
      return [...rowBinary(packRows([row(1), { ...row(2), ...bad }]), features(dateTime64))]
    } catch (e) {
      return e
    }
  }
  for (const uuid of ['not-a-uuid', '00112233445566778899aabbccddeeff', '00112233-4455-6677-8899-aabbccddeefg', '{00112233-4455-6677-8899-aabbccddeeff}']) {
    const error = refusal({ person_id: uuid })
    t.ok(error instanceof SinkError && error.permanent, uuid)
  }
  for (const [bad, name] of [[{ team_id: 1.5 }, 'team 1.5'], [{ timestamp: NaN }, 'NaN'], [{ timestamp: 1e300 }, 'timestamp_ms 1e300']] as const) {
    const error = refusal(bad)
    t.ok(error instanceof SinkError && error.permanent, name)
  }
  const error = refusal({ created_at: NaN }, true)
  t.ok(error instanceof SinkError && error.permanent, 'DateTime64 NaN')
})
