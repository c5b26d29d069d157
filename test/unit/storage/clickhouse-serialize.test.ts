import t from 'tap'
import { tabSeparated, tsvColumns } from '../../../src/storage/events/clickhouse-tsv.js'
import { packRows } from '../../../src/storage/events/packed-rows.js'
import type { EventRow } from '../../../src/storage/events/types.js'

const row = (i: number): EventRow => ({
  uuid: `00000000-0000-7000-8000-${String(i).padStart(12, '0')}`,
  team_id: 2,
  event: i % 2 ? '$pageview' : 'ünïcödé "quoted"\n',
  distinct_id: `d${i}\t${i}`,
  person_id: '00000000-0000-5000-8000-000000000001',
  properties: JSON.stringify({ i, text: 'a "b" \\ c 😀', long: 'x'.repeat(i) }),
  timestamp: Date.UTC(2024, 0, 2, 3, 4, 5, 678) + i,
  created_at: Date.UTC(2024, 0, 3),
  groups: ['g0', '', '', '', `g${i}\r\u0000`],
  elements_chain: i === 1 ? 'a:nth-child="1"' : '',
})

/** ClickHouse's reading of an escaped TabSeparated field. */
const unescape = (field: string) => field.replace(/\\(.)/g, (_, c: string) => ({ t: '\t', n: '\n', r: '\r', '0': '\0' })[c] ?? c)

for (const dateTime64 of [true, false]) {
  t.test(`TabSeparated in chunks of 64 rows, one line per row, every column in the INSERT's order (dateTime64: ${dateTime64})`, async (t) => {
    const features = { version: dateTime64 ? '23.8' : '18.16', dateTime64, jsonExtract: dateTime64 }
    const rows = Array.from({ length: 150 }, (_, i) => row(i))
    const chunks = [...tabSeparated(packRows(rows), features)]
    t.equal(chunks.length, 3, 'a buffer per 64 rows')
    const lines = Buffer.concat(chunks).toString('utf8').split('\n')
    t.equal(lines.pop(), '', 'ends with a newline')
    t.equal(lines.length, 150, 'newlines inside values are escaped')
    const columns = tsvColumns(features).split(', ')
    const parsed = lines.map((line) => Object.fromEntries(line.split('\t').map((field, c) => [columns[c], unescape(field)])))
    t.ok(lines.every((line) => line.split('\t').length === columns.length), 'tabs inside values are escaped')
    t.same(
      parsed.map((p) => [p.uuid, p.event, p.distinct_id, p.person_id, JSON.parse(p.properties), p['`$group_0`'], p['`$group_4`'], p.elements_chain, p.team_id]),
      rows.map((r) => [r.uuid, r.event, r.distinct_id, r.person_id, JSON.parse(r.properties), r.groups[0], r.groups[4], r.elements_chain, String(r.team_id)]),
    )
    t.equal(parsed[1].timestamp, dateTime64 ? '2024-01-02 03:04:05.679' : '2024-01-02 03:04:05')
    if (!dateTime64) t.equal(parsed[1].timestamp_ms, String(Date.UTC(2024, 0, 2, 3, 4, 5, 679)))
    t.ok(parsed.every((p) => p.created_at === (dateTime64 ? '2024-01-03 00:00:00.000' : '2024-01-03 00:00:00')))
    t.match(parsed[0]._timestamp, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/)
    t.same([...tabSeparated(packRows([]), features)], [])
  })
}

t.test('times outside what DateTime holds are clamped, not sent as something ClickHouse refuses', async (t) => {
  const features = { version: '18.16', dateTime64: false, jsonExtract: false }
  const [chunk] = [...tabSeparated(packRows([{ ...row(1), timestamp: -5 }, { ...row(2), timestamp: 9e15 }]), features)]
  const times = chunk.toString('utf8').split('\n').slice(0, 2).map((line) => line.split('\t')[12])
  t.same(times, ['1970-01-01 00:00:00', '2106-02-07 06:28:14'])
})

t.test('every timestamp is written as its own ISO time, also when rows share or revisit a second', async (t) => {
  const base = Date.UTC(2024, 5, 30, 23, 59, 58)
  // Milliseconds of one, two and three digits, fractions of a millisecond, and seconds left and come back to.
  const times = [0, 1, 9, 10, 99, 100, 999, 1000, 1005.7, 1999.999, 500, 2001, 3, 86_400_000 + 42].map((d) => base + d)
  for (const dateTime64 of [true, false]) {
    const features = { version: dateTime64 ? '23.8' : '18.16', dateTime64, jsonExtract: dateTime64 }
    const rows = times.map((ms, i) => ({ ...row(i), timestamp: ms, created_at: times[times.length - 1 - i] }))
    const lines = Buffer.concat([...tabSeparated(packRows(rows), features)]).toString('utf8').split('\n').slice(0, -1)
    const iso = (ms: number) => {
      const text = new Date(ms).toISOString()
      return `${text.slice(0, 10)} ${text.slice(11, dateTime64 ? 23 : 19)}`
    }
    const columns = tsvColumns(features).split(', ')
    const field = (line: string, name: string) => line.split('\t')[columns.indexOf(name)]
    t.same(lines.map((line) => field(line, 'timestamp')), times.map(iso), `timestamp (dateTime64: ${dateTime64})`)
    t.same(lines.map((line) => field(line, 'created_at')), [...times].reverse().map(iso), `created_at (dateTime64: ${dateTime64})`)
  }
})
