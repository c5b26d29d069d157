/**
 * The ClickHouse events list reads a page as FINAL gives it and the rows' large columns without FINAL: it must
 * return exactly what one FINAL query over all columns returns, replayed versions left unmerged included.
 */
import t from 'tap'
import { randomUUID } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import type { EventRow } from '../../../src/storage/events/index.js'
import { clickhouseEventStore, clickhouseUnavailableReason } from '../../helpers/clickhouse.js'

const TEAM = 3
const T0 = Date.parse('2024-05-01T12:00:00Z')
const person = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`

function row(i: number, over: Partial<EventRow> = {}): EventRow {
  return {
    uuid: randomUUID(),
    team_id: TEAM,
    event: i % 3 === 0 ? 'signup' : '$pageview',
    distinct_id: `d-${i % 5}`,
    person_id: person(i % 5),
    properties: JSON.stringify({ i, pad: 'x'.repeat(200) }),
    // Two rows share each second: the page order falls back on the uuid.
    timestamp: T0 + Math.floor(i / 2) * 1000,
    created_at: T0,
    groups: ['', '', '', '', ''],
    elements_chain: '',
    ...over,
  }
}

t.test('a page of ClickHouse events equals what FINAL gives, replayed versions included', { skip: clickhouseUnavailableReason() ?? false }, async (t) => {
  const { ch, features, sink, store } = await clickhouseEventStore(t, 'skylark_list')
  // Unmerged, a replay stays a second version beside the first: what FINAL resolves at query time.
  await ch.query('SYSTEM STOP MERGES skylark_list.events')

  const rows = Array.from({ length: 30 }, (_, i) => row(i))
  // The same uuid under another event name is another row for FINAL (another sorting key).
  const sameUuid = row(30, { uuid: rows[4].uuid, event: 'other' })
  await sink.write([...rows.slice(0, 15), sameUuid])
  await sink.write(rows.slice(15))
  // Versions are told apart by the second they were written in (`_timestamp`).
  await sleep(1100)
  const replayed = { ...rows[7], person_id: person(99), properties: JSON.stringify({ replayed: true }) }
  await sink.write([replayed, rows[11]])

  const ms = features.dateTime64 ? 'toUnixTimestamp64Milli(timestamp)' : 'timestamp_ms'
  const reference = (
    await ch.query(
      `SELECT toString(uuid) AS uuid, event, distinct_id, toString(person_id) AS person_id, properties, ${ms} AS ts
       FROM skylark_list.events FINAL WHERE team_id = ${TEAM} ORDER BY ts DESC, uuid DESC FORMAT JSONEachRow`,
    )
  )
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const r = JSON.parse(line) as Record<string, string>
      return [r.uuid, r.event, r.distinct_id, r.person_id, r.properties, new Date(Number(r.ts)).toISOString()]
    })
  t.equal(reference.length, 31, 'FINAL: 30 events and the one sharing a uuid, each replay once')
  const unmerged = Number(await ch.query(`SELECT count() FROM skylark_list.events WHERE team_id = ${TEAM}`))
  t.equal(unmerged, 33, 'the replays are still separate versions in the table')

  const listed: unknown[][] = []
  for (let offset = 0; offset < 35; offset += 7) {
    const page = await store.list({ teamId: TEAM }, { limit: 7, offset })
    for (const e of page) listed.push([e.uuid, e.event, e.distinct_id, e.person_id, JSON.stringify(e.properties), e.timestamp])
  }
  t.same(listed, reference, 'page by page, the same rows in the same order with the same versions')
  const newest = listed.filter((r) => r[0] === replayed.uuid)
  t.same(newest, [[replayed.uuid, replayed.event, replayed.distinct_id, person(99), '{"replayed":true}', new Date(replayed.timestamp).toISOString()]], 'the replay, once, as last written')
  t.equal(listed.filter((r) => r[0] === rows[4].uuid).length, 2, 'both rows that share a uuid')

  const signups = await store.list({ teamId: TEAM, event: 'signup' }, { limit: 100, offset: 0 })
  t.same(
    signups.map((e) => e.uuid),
    reference.filter((r) => r[1] === 'signup').map((r) => r[0]),
    'a filtered page too',
  )
  t.same(await store.list({ teamId: TEAM, event: 'none' }, { limit: 10, offset: 0 }), [], 'an empty page')
})

t.test('a rare event is read from the granules that hold it, not from a whole part', { skip: clickhouseUnavailableReason() ?? false }, async (t) => {
  const { ch, features, sink, store } = await clickhouseEventStore(t, 'skylark_granules')
  // One INSERT, one part: 20,000 page views and 50 identifies, which the sorting key keeps side by side
  // (and ahead of the page views, so not in the part's last granule, which may be short).
  const rows = Array.from({ length: 20_050 }, (_, i) => row(i, { event: i % 401 === 0 ? '$identify' : '$pageview' }))
  await sink.write(rows)
  const rare = rows.filter((r) => r.event === '$identify')
  t.equal(rare.length, 50)

  const stats = JSON.parse(
    await ch.query(`SELECT count() AS n FROM skylark_granules.events WHERE team_id = ${TEAM} AND event = '$identify' FORMAT JSON`),
  ) as { data: Array<{ n: string }>; statistics: { rows_read: number } }
  t.equal(Number(stats.data[0].n), 50)
  // At most the granules the 50 rows span and one either side of a boundary; 8,192-row granules read ≥ 8,192.
  t.ok(stats.statistics.rows_read <= 3 * 1024, `rows read for 50 identifies among 20,050 rows: ${stats.statistics.rows_read}`)

  const page = await store.list({ teamId: TEAM, event: '$identify' }, { limit: 100, offset: 0 })
  t.same(new Set(page.map((e) => e.uuid)), new Set(rare.map((r) => r.uuid)), 'the page holds every identify')
})
