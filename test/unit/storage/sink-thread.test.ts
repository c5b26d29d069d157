import t, { type Test } from 'tap'
import { randomUUID } from 'node:crypto'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { JsonText } from '../../../src/common/json-text.js'
import { migrate, openDatabase } from '../../../src/storage/index.js'
import { PackedReader, packedRows, packRows, RowPacker, unpackRows } from '../../../src/storage/events/packed-rows.js'
import { ThreadedSink } from '../../../src/storage/events/sink-thread.js'
import { ClickHouseEventSink } from '../../../src/storage/events/clickhouse-sink.js'
import { SinkError, type EventRow } from '../../../src/storage/events/types.js'
import { EVENTS_MIGRATIONS } from '../../../src/storage/sqlite/migrations/events.js'
import { clickhouseUnavailableReason, startClickHouse } from '../../helpers/clickhouse.js'
import { ROOT } from '../../helpers/server.js'
import { migrateClickHouse } from '../../../src/storage/events/clickhouse-schema.js'

// The thread runs the compiled entry, as the service does (`npm test` builds dist/ first).
const ENTRY = pathToFileURL(join(ROOT, 'dist', 'workers', 'event-sink.js'))

const row = (over: Partial<EventRow> = {}): EventRow => ({
  uuid: randomUUID(),
  team_id: 7,
  event: '$pageview',
  distinct_id: 'user-1',
  person_id: randomUUID(),
  properties: JSON.stringify({ $current_url: 'https://example.com/', n: 1 }),
  timestamp: 1_700_000_000_123,
  created_at: 1_700_000_000_456,
  groups: ['', '', '', '', ''],
  elements_chain: '',
  ...over,
})

function unpack(buf: Buffer): unknown[][] {
  const r = new PackedReader(buf)
  const rows: unknown[][] = []
  while (!r.done) rows.push([r.number(), r.number(), r.number(), ...Array.from({ length: 11 }, () => r.text())])
  return rows
}

function eventsFile(t: Test): string {
  const file = join(t.testdir(), 'events.db')
  const db = openDatabase(file)
  migrate(db, EVENTS_MIGRATIONS)
  db.close()
  return file
}

function storedRows(file: string): EventRow[] {
  const db = openDatabase(file, { readonly: true })
  try {
    return (db.prepare('SELECT * FROM events ORDER BY rowid').all() as Array<Record<string, unknown>>).map((r) => ({
      uuid: r.uuid as string,
      team_id: r.team_id as number,
      event: r.event as string,
      distinct_id: r.distinct_id as string,
      person_id: r.person_id as string,
      properties: r.properties as string,
      timestamp: r.timestamp as number,
      created_at: r.created_at as number,
      groups: [r.group_0, r.group_1, r.group_2, r.group_3, r.group_4] as EventRow['groups'],
      elements_chain: r.elements_chain as string,
    }))
  } finally {
    db.close()
  }
}

t.test('packed rows read back field for field, including non-ASCII text, empty strings and null', async (t) => {
  const rows = [
    row({ distinct_id: 'Zoë 🦜 ユーザー', properties: '{"emoji":"🦜","ö":"ü"}', groups: ['acme', '', 'ünï', '', 'x'], elements_chain: 'a:nth-child="1"' }),
    row({ person_id: null as unknown as string, event: '', timestamp: -1, team_id: 2 ** 40 }),
  ]
  const fields = rows.map((r) => [r.team_id, r.timestamp, r.created_at, r.uuid, r.event, r.distinct_id, r.person_id, r.properties, ...r.groups, r.elements_chain])
  t.same(unpack(packRows(rows)), fields)
  const packer = new RowPacker(0)
  packer.add(rows)
  t.same(unpack(packer.finish().parts[0]), fields, 'the same from a packer')
  const r = new PackedReader(packRows(rows))
  const properties = []
  while (!r.done) {
    Array.from({ length: 3 }, () => r.number())
    Array.from({ length: 4 }, () => r.text())
    properties.push(r.bytes().toString())
    Array.from({ length: 6 }, () => r.text())
  }
  t.same(properties, rows.map((row) => row.properties), 'a string read as its UTF-8 bytes')
})

t.test('rows whose properties are in pieces pack to the same bytes as with their joined text', async (t) => {
  const pieces = (i: number) => {
    const text = new JsonText()
    for (const piece of ['{"i":', String(i), Buffer.from(',"text":"'), '€🦔'.repeat(i), '"', 0x7d]) text.add(piece)
    return text
  }
  const joined = Array.from({ length: 40 }, (_, i) => row({ distinct_id: `ü-${i}`, properties: pieces(i).toString() }))
  const inPieces = joined.map((r, i) => ({ ...r, properties: pieces(i) }))
  const exact = packRows(joined)
  t.same(packRows(inPieces), exact, 'measured exactly')
  const packer = new RowPacker(exact.length, new ArrayBuffer(exact.length))
  for (let i = 0; i < inPieces.length; i += 7) packer.add(inPieces.slice(i, i + 7))
  t.same(packer.finish().parts[0], exact, 'bounded, then measured near the end of an exactly sized buffer')
  t.same(unpackRows(packedRows(inPieces)), joined)
})

t.test('a spare buffer is reused only when it is large enough', async (t) => {
  const big = packRows(Array.from({ length: 50 }, () => row()))
  const small = packRows([row()], big.buffer as ArrayBuffer)
  t.equal(small.buffer, big.buffer, 'packed into the spare')
  t.equal(unpack(small).length, 1, 'its length covers only the new rows')
  const tooSmall = packRows(Array.from({ length: 100 }, () => row()), small.buffer as ArrayBuffer)
  t.not(tooSmall.buffer, big.buffer, 'a new buffer when the spare is too small')
})

t.test('rows packed a few at a time grow their buffer and read back in order', async (t) => {
  const rows = Array.from({ length: 300 }, (_, i) => row({ distinct_id: `user-${i}`, properties: JSON.stringify({ i, pad: 'é'.repeat(i) }) }))
  const packer = new RowPacker(100) // far too small: it grows
  for (let i = 0; i < rows.length; i += 64) packer.add(rows.slice(i, i + 64))
  packer.add([])
  const packed = packer.finish()
  t.equal(packed.count, 300)
  t.same(unpackRows(packed), rows)
  t.same(unpackRows(new RowPacker(0).finish()), [], 'nothing packed: no parts')
})

t.test('a packer fills a buffer of exactly the rows’ size, multi-byte text included, without growing it', async (t) => {
  const rows = Array.from({ length: 40 }, (_, i) => row({ distinct_id: `ü-${i}`, properties: JSON.stringify({ i, text: '€🦔'.repeat(i) }) }))
  const exact = packRows(rows)
  const spare = new ArrayBuffer(exact.length)
  const packer = new RowPacker(exact.length, spare)
  for (let i = 0; i < rows.length; i += 7) packer.add(rows.slice(i, i + 7))
  const packed = packer.finish()
  t.equal(packed.parts[0].buffer, spare, 'the same buffer: rows near its end were measured, not bounded')
  t.equal(packed.parts[0].length, exact.length)
  t.same(unpackRows(packed), rows)
})

t.test('packed parts are stored in order, and stay with the caller when the thread fails', async (t) => {
  const dir = join(t.testdir(), 'later')
  const file = join(dir, 'events.db')
  const sink = new ThreadedSink({ spec: { kind: 'sqlite', file }, entry: ENTRY })
  t.teardown(() => sink.close())
  const first = Array.from({ length: 30 }, (_, i) => row({ distinct_id: `a-${i}` }))
  const second = [row({ distinct_id: 'Zoë 🦜' })]
  const packed = { parts: [packRows(first), packRows(second)], count: 31 }
  const error = await sink.writePacked(packed).catch((e: unknown) => e)
  t.ok(error instanceof SinkError && !error.permanent, 'no store yet: a retryable failure')
  t.same(unpackRows(packed), [...first, ...second], 'the parts were copied, not transferred away')
  mkdirSync(dir)
  const db = openDatabase(file)
  migrate(db, EVENTS_MIGRATIONS)
  db.close()
  await sink.writePacked(packed)
  t.same(storedRows(file), [...first, ...second])
})

t.test('the insert thread stores rows exactly as given, batch after batch', async (t) => {
  const file = eventsFile(t)
  const sink = new ThreadedSink({ spec: { kind: 'sqlite', file }, entry: ENTRY })
  t.teardown(() => sink.close())
  const first = Array.from({ length: 200 }, (_, i) => row({ distinct_id: `user-${i}`, groups: ['g', '', '', '', ''] }))
  const second = [row({ distinct_id: 'Zoë 🦜', properties: '{"emoji":"🦜","ö":"ü","escaped":"\\u0000\\ud800"}', elements_chain: 'button:text="Pay"' })]
  await sink.write(first)
  // The second batch is packed into the first one's (larger) returned buffer: nothing of the first may be re-read.
  await sink.write(second)
  await sink.write(second) // a replay: deduplicated by uuid
  await sink.write([]) // a batch whose events were all dropped
  t.same(storedRows(file), [...first, ...second])
  const db = openDatabase(file, { readonly: true })
  t.teardown(() => db.close())
  // Packed properties are bound as their UTF-8 bytes and cast: stored as TEXT, as a string would be.
  t.same(db.prepare('SELECT DISTINCT typeof(properties) FROM events').pluck().all(), ['text'])
  t.equal(db.prepare("SELECT properties ->> '$.emoji' FROM events WHERE distinct_id = 'Zoë 🦜'").pluck().get(), '🦜', 'and read by SQLite as JSON')
  t.equal(await sink.ping(), true)
})

t.test('rows SQLite refuses fail as permanent SinkErrors, and the thread goes on', async (t) => {
  const file = eventsFile(t)
  // INSERT OR IGNORE skips rows that break a column constraint, so the refusal comes from a trigger.
  const db = openDatabase(file)
  db.exec(`CREATE TRIGGER refuse BEFORE INSERT ON events WHEN NEW.event = 'refused' BEGIN SELECT RAISE(ABORT, 'this event is refused'); END`)
  db.close()
  const sink = new ThreadedSink({ spec: { kind: 'sqlite', file }, entry: ENTRY })
  t.teardown(() => sink.close())
  const error = await sink.write([row(), row({ event: 'refused' })]).catch((e: unknown) => e)
  t.ok(error instanceof SinkError, 'a SinkError')
  t.equal((error as SinkError).permanent, true, 'about the data: isolate and dead-letter, not retry')
  t.match((error as SinkError).message, /this event is refused/)
  t.same(storedRows(file), [], 'the whole batch was rolled back')
  const good = row()
  await sink.write([good])
  t.same(storedRows(file), [good])
})

t.test('a store the thread cannot open is a retryable failure; the next write starts a new thread', async (t) => {
  const dir = join(t.testdir(), 'not-yet')
  const file = join(dir, 'events.db')
  const sink = new ThreadedSink({ spec: { kind: 'sqlite', file }, entry: ENTRY })
  t.teardown(() => sink.close())
  const error = await sink.write([row()]).catch((e: unknown) => e)
  t.ok(error instanceof SinkError)
  t.equal((error as SinkError).permanent, false, 'retryable')
  t.match((error as SinkError).message, /event store thread failed/)
  t.equal(await sink.ping(), false, 'no answer while the file cannot be opened')

  mkdirSync(dir)
  const db = openDatabase(file)
  migrate(db, EVENTS_MIGRATIONS)
  db.close()
  const good = row()
  await sink.write([good])
  t.same(storedRows(file), [good])
})

t.test('close() lets the thread finish and end', async (t) => {
  const file = eventsFile(t)
  const sink = new ThreadedSink({ spec: { kind: 'sqlite', file }, entry: ENTRY })
  await sink.write([row()])
  await sink.close()
  t.equal(storedRows(file).length, 1)
  await sink.close() // a second close is a no-op
})

const skipClickHouse = clickhouseUnavailableReason()
t.test('the ClickHouse insert thread stores rows exactly as given, and an outage is a retryable failure', { skip: skipClickHouse ?? false }, async (t) => {
  const ch = await startClickHouse()
  t.teardown(() => ch.destroy())
  const options = { url: ch.url, database: 'skylark_thread', user: 'default', password: '', cluster: null }
  const features = await migrateClickHouse(options)
  const sink = new ThreadedSink({ spec: { kind: 'clickhouse', options, features }, entry: ENTRY })
  t.teardown(() => sink.close())
  t.equal(sink.kind, 'clickhouse')
  const first = Array.from({ length: 200 }, (_, i) => row({ distinct_id: `user-${i}`, groups: ['g', '', '', '', ''] }))
  // Bytes text formats escape (backslash, tab, newline, CR, NUL) and quotes, in every kind of string column.
  const hostile = 'a\\b\tc\nd\re\u0000f "g" \\\\'
  const second = [
    row({ distinct_id: 'Zoë 🦜', elements_chain: 'button:text="Pay"', properties: '{"emoji":"🦜"}' }),
    row({
      event: `ev ${hostile}`,
      distinct_id: `zz ${hostile}`,
      properties: JSON.stringify({ text: hostile, long: `${'x'.repeat(100)}${hostile}` }),
      groups: [hostile, '', '', '', `g4 ${hostile}`],
      elements_chain: `a:text="${hostile}"`,
      team_id: 123456,
      timestamp: 1_700_000_000_999,
    }),
  ]
  await sink.write(first)
  await sink.write(second)
  await sink.write([])
  const stored = async () =>
    (
      await ch.query(
        'SELECT toString(uuid) AS u, event AS v, distinct_id AS d, properties AS p, `$group_0` AS g, `$group_4` AS h, elements_chain AS e, ' +
          `team_id AS t, ${features.dateTime64 ? 'toUnixTimestamp64Milli(timestamp)' : 'timestamp_ms'} AS ms FROM skylark_thread.events FINAL ORDER BY d FORMAT JSONEachRow`,
      )
    )
      .split('\n')
      .filter(Boolean)
      .map((line) => Object.values(JSON.parse(line) as Record<string, string | number>).map(String))
  const expected = [...first, ...second].map((r) =>
    [r.uuid, r.event, r.distinct_id, r.properties, r.groups[0], r.groups[4], r.elements_chain, r.team_id, r.timestamp].map(String),
  )
  t.same(await stored(), expected.sort((a, b) => (a[2] < b[2] ? -1 : a[2] > b[2] ? 1 : 0)))
  t.equal(await sink.ping(), true)

  await ch.stop()
  const error = await sink.write([row()]).catch((e: unknown) => e)
  t.ok(error instanceof SinkError, 'a SinkError')
  t.equal((error as SinkError).permanent, false, 'retryable: the rows are written again later')
  t.equal(await sink.ping(), false, 'no answer while the server is down')
  await ch.start()
  const later = row({ distinct_id: 'zz-after-the-outage' })
  await sink.write([later])
  t.equal((await stored()).at(-1)?.[0], later.uuid)

  const refused = await sink.write([row({ uuid: 'not-a-uuid' })]).catch((e: unknown) => e)
  t.ok(refused instanceof SinkError && refused.permanent, 'a row ClickHouse cannot parse is refused for good (dead-lettered, not retried)')
})

t.test('a spanning ClickHouse insert stores its appended batches only at commit, and only all of them', { skip: skipClickHouse ?? false }, async (t) => {
  const ch = await startClickHouse()
  t.teardown(() => ch.destroy())
  const options = { url: ch.url, database: 'skylark_span', user: 'default', password: '', cluster: null }
  const features = await migrateClickHouse(options)
  const sink = new ThreadedSink({ spec: { kind: 'clickhouse', options, features }, entry: ENTRY })
  t.teardown(() => sink.close())
  const count = async () => Number((await ch.query('SELECT count() FROM skylark_span.events FINAL')).trim())
  const parts = async () => Number((await ch.query("SELECT count() FROM system.parts WHERE database = 'skylark_span' AND table = 'events' AND active")).trim())

  const batches = [0, 1, 2].map((b) => Array.from({ length: 100 }, (_, i) => row({ distinct_id: `span-${b}-${i}` })))
  // The first two batches as one append of two parts, as the consumer's row queue gives them.
  const twoParts = { parts: [packRows(batches[0]), packRows(batches[1])], count: 200 }
  const bytes = twoParts.parts.map((part) => Buffer.from(part))
  const back = await sink.appendPacked(twoParts)
  t.equal(twoParts.parts[0].buffer.byteLength, 0, "the parts' buffers are handed to the thread, not copied")
  t.same(back.parts.map((part) => Buffer.from(part)), bytes, 'and come back holding the same rows')
  t.equal(back.count, 200)
  await sink.appendPacked(packedRows(batches[2]))
  t.equal(await count(), 0, 'nothing is stored before the commit')
  await sink.commit(300)
  t.equal(await count(), 300, 'all three batches are stored once it resolves')
  t.equal(await parts(), 1, 'as one part')

  await sink.appendPacked(packedRows([row()]))
  const miscounted = await sink.commit(2).catch((e: unknown) => e)
  t.ok(miscounted instanceof SinkError, 'a commit for rows the open insert does not hold fails (the thread lost them)')
  const nothingOpen = await sink.commit(1).catch((e: unknown) => e)
  t.ok(nothingOpen instanceof SinkError, 'and so does a commit with no insert open')

  await sink.appendPacked(packedRows([row({ distinct_id: 'span-before-a-bad-batch' })]))
  const refused = await sink.appendPacked(packedRows([row({ uuid: 'not-a-uuid' })])).catch((e: unknown) => e)
  t.ok(refused instanceof SinkError && refused.permanent, 'a batch that cannot be encoded is refused for good')
  const after = row({ distinct_id: 'span-after-a-bad-batch' })
  await sink.appendPacked(packedRows([after]))
  await sink.commit(1)
  t.equal((await ch.query(`SELECT count() FROM skylark_span.events WHERE uuid = '${after.uuid}'`)).trim(), '1', 'a new insert takes the next batches')

  await sink.appendPacked(packedRows([row({ distinct_id: 'span-before-the-outage' })]))
  await ch.kill()
  const failed = await sink.commit(1).catch((e: unknown) => e)
  t.ok(failed instanceof SinkError && !failed.permanent, 'ClickHouse dying with the insert open fails the commit (retryable)')
  await ch.start()
  t.equal(Number((await ch.query("SELECT count() FROM skylark_span.events WHERE distinct_id = 'span-before-the-outage'")).trim()), 0, 'and the row is not there')
})

t.test('an insert given up (a miscounted commit, a batch that cannot be encoded) is ended, not left open on ClickHouse', { skip: skipClickHouse ?? false }, async (t) => {
  const ch = await startClickHouse()
  t.teardown(() => ch.destroy())
  const options = { url: ch.url, database: 'skylark_given_up', user: 'default', password: '', cluster: null }
  const features = await migrateClickHouse(options)
  const sink = new ClickHouseEventSink(options, features)
  t.teardown(() => sink.close())
  const insertsRunning = async () => Number((await ch.query("SELECT count() FROM system.processes WHERE query LIKE 'INSERT INTO%'")).trim())
  /** Whether the count of running INSERTs becomes `n` within 5 s (a request reaches ClickHouse a little later). */
  const insertsBecome = async (n: number) => {
    for (let tries = 0; tries < 50 && (await insertsRunning()) !== n; tries++) await new Promise((resolve) => setTimeout(resolve, 100))
    return (await insertsRunning()) === n
  }
  // Enough bytes that the request has reached ClickHouse (the first kilobytes may wait in buffers).
  const big = packRows(Array.from({ length: 2000 }, (_, i) => row({ distinct_id: `open-${i}`, elements_chain: 'x'.repeat(500) })))

  await sink.appendPacked([big], 2000)
  t.ok(await insertsBecome(1), 'an insert is open')
  t.ok((await sink.commit(1).catch((e: unknown) => e)) instanceof SinkError, 'a miscounted commit fails')
  t.ok(await insertsBecome(0), 'and ends the insert')

  await sink.appendPacked([big], 2000)
  t.ok(await insertsBecome(1), 'an insert is open')
  t.ok((await sink.appendPacked([packRows([row({ uuid: 'not-a-uuid' })])], 1).catch((e: unknown) => e)) instanceof SinkError, 'a batch that cannot be encoded fails')
  t.ok(await insertsBecome(0), 'and ends the insert')
})
