import t from 'tap'
import { ClickHouseEventSink } from '../../../src/storage/events/clickhouse.js'
import { packRows, unpackRows } from '../../../src/storage/events/packed-rows.js'
import type { EventRow } from '../../../src/storage/events/types.js'

const row = (i: number): EventRow => ({
  uuid: `00000000-0000-7000-8000-${String(i).padStart(12, '0')}`,
  team_id: 2,
  event: i % 2 ? '$pageview' : 'ünïcödé "quoted"\n',
  distinct_id: `d${i}`,
  person_id: '00000000-0000-5000-8000-000000000001',
  properties: JSON.stringify({ i, text: 'a "b" \\ c 😀' }),
  timestamp: Date.UTC(2024, 0, 2, 3, 4, 5, 678) + i,
  created_at: Date.UTC(2024, 0, 3),
  groups: ['g0', '', '', '', `g${i}`],
  elements_chain: i === 1 ? 'a:nth-child="1"' : '',
})

for (const dateTime64 of [true, false]) {
  t.test(`JSONEachRow in chunks, one line per row (dateTime64: ${dateTime64})`, async (t) => {
    const sink = new ClickHouseEventSink(
      { url: 'http://127.0.0.1:1', database: 'db', user: 'default', password: '' },
      { version: dateTime64 ? '23.8' : '18.16', dateTime64, jsonExtract: dateTime64 },
    )
    const rows = Array.from({ length: 150 }, (_, i) => row(i))
    const chunks = [...sink.jsonEachRow(rows)]
    t.equal(chunks.length, 3, 'a buffer per 64 rows')
    const lines = Buffer.concat(chunks).toString('utf8').split('\n')
    t.equal(lines.pop(), '', 'ends with a newline')
    t.equal(lines.length, 150)
    const parsed = lines.map((line) => JSON.parse(line) as Record<string, unknown>)
    t.same(
      parsed.map((p) => [p.uuid, p.event, JSON.parse(p.properties as string), p.distinct_id, p.$group_4, p.elements_chain]),
      rows.map((r) => [r.uuid, r.event, JSON.parse(r.properties), r.distinct_id, r.groups[4], r.elements_chain]),
    )
    t.equal(parsed[1].timestamp, dateTime64 ? '2024-01-02 03:04:05.679' : '2024-01-02 03:04:05')
    if (!dateTime64) t.equal(parsed[1].timestamp_ms, Date.UTC(2024, 0, 2, 3, 4, 5, 679))
    t.ok(parsed.every((p) => p.created_at === (dateTime64 ? '2024-01-03 00:00:00.000' : '2024-01-03 00:00:00')))
    t.same([...sink.jsonEachRow([])], [])
    await sink.close()
  })
}

t.test('rows packed for the insert thread serialise to the same JSONEachRow as the rows themselves', async (t) => {
  const sink = new ClickHouseEventSink(
    { url: 'http://127.0.0.1:1', database: 'db', user: 'default', password: '' },
    { version: '23.8', dateTime64: true, jsonExtract: true },
  )
  const rows = Array.from({ length: 130 }, (_, i) => row(i))
  const text = (chunks: Iterable<Buffer>) => Buffer.concat([...chunks]).toString('utf8').replace(/"_timestamp":"[^"]*"/g, '')
  t.equal(text(sink.jsonEachRow(unpackRows(packRows(rows)))), text(sink.jsonEachRow(rows)))
  t.same([...unpackRows(packRows(rows))], rows, 'every field back')
  await sink.close()
})
