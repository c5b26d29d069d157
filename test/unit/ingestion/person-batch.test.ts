import t from 'tap'
import { join } from 'node:path'
import { Checkpoints } from '../../../src/ingestion/consumer/checkpoints.js'
import { PersonBatches, type PersonStage } from '../../../src/ingestion/consumer/person-batch.js'
import { FrameBatch } from '../../../src/ingestion/consumer/read-batch.js'
import { FrameKind } from '../../../src/ingestion/spool/format.js'
import type { SpoolFrame } from '../../../src/ingestion/spool/reader.js'
import type { CapturedEvent } from '../../../src/ingestion/types.js'
import { CookielessIngest, CookielessState, NO_SETS, type PersonOutcome } from '../../../src/persons/index.js'
import type { DeadLetterInput } from '../../../src/storage/dead-letters.js'
import { unpackRows } from '../../../src/storage/events/packed-rows.js'
import { migrate, openDatabase } from '../../../src/storage/index.js'
import { PERSONS_MIGRATIONS } from '../../../src/storage/sqlite/migrations/persons.js'

const event = (i: number, name = 'e'): CapturedEvent => ({
  uuid: `00000000-0000-7000-8000-${String(i).padStart(12, '0')}`,
  event: name,
  distinct_id: `d${i}`,
  properties: { i },
  timestamp: 1_700_000_000_000 + i,
  team_id: 1,
  now: 1_700_000_000_000,
})
const outcome = (e: CapturedEvent): PersonOutcome => ({ personId: 'p', groups: ['', '', '', '', ''], properties: e.properties, sets: NO_SETS, geo: null, propertiesText: null })
/** Throws (as a database error would) for any batch holding an event named `bad`, which persons then never take. */
const stage: PersonStage = {
  process: (events) => {
    if (events.some((e) => e.event === 'bad')) throw new Error('disk I/O error')
    return events.map(outcome)
  },
  enrich: outcome,
  deletePersons: () => [],
  splitPerson: () => [],
  resetCache: () => {},
}
const frame = (kind: number, text: string, at: number): SpoolFrame => ({ kind, payload: Buffer.from(text), end: { segment: 1, offset: at + 1 } })

t.test('a read that fails as a whole is redone event by event: the rest stored in order, each failure and unreadable frame reported once', async (t) => {
  const db = openDatabase(join(t.testdir(), 'persons.db'))
  t.teardown(() => db.close())
  migrate(db, PERSONS_MIGRATIONS)
  const checkpoints = new Checkpoints(db)
  const deadLetters: DeadLetterInput[] = []
  const batches = new PersonBatches({ db, stage, checkpoints, clock: { now: () => 0 }, log: () => {}, deadLetter: (e) => deadLetters.push(...e) })

  // 150 frames, 64 a chunk: an unreadable one in the first chunk (parsed before the failure), the bad event
  // in the second, another unreadable one and a warning in the third (parsed only by the redo).
  const frames = new FrameBatch({ segment: 1, offset: 0 })
  for (let i = 0; i < 150; i++) {
    if (i === 10 || i === 140) frames.add(frame(FrameKind.event, `{"torn`, i))
    else if (i === 145) frames.add(frame(FrameKind.warning, JSON.stringify({ team_id: 1, type: 'event_dropped', source: 'capture', details: { reason: 'r' }, timestamp: 0 }), i))
    else frames.add(frame(FrameKind.event, JSON.stringify(event(i, i === 100 ? 'bad' : 'e')), i))
  }
  const unreadable: string[] = []
  const end = { segment: 1, offset: 150 }
  const { rows, processed } = batches.process('main', frames, (payload) => unreadable.push(payload.toString()))

  const stored = unpackRows(rows).map((r) => r.distinct_id)
  const expected = Array.from({ length: 150 }, (_, i) => i).filter((i) => ![10, 100, 140, 145].includes(i)).map((i) => `d${i}`)
  t.same(stored, expected, 'every other event, in spool order')
  t.equal(processed, expected.length)
  t.same(unreadable, ['{"torn', '{"torn'], 'each unreadable frame reported once')
  t.same(deadLetters.map((d) => [d.stage, JSON.parse(d.payload!).distinct_id]), [['persons', 'd100']])
  t.equal((db.prepare('SELECT count(*) AS n FROM ingestion_warnings').get() as { n: number }).n, 1, 'the warning written once')
  t.same(checkpoints.get('persons', 'main'), end)
})

t.test("capture's warnings are written once an hour per project, type and reason", async (t) => {
  const db = openDatabase(join(t.testdir(), 'persons.db'))
  t.teardown(() => db.close())
  migrate(db, PERSONS_MIGRATIONS)
  let now = 0
  const batches = new PersonBatches({ db, stage, checkpoints: new Checkpoints(db), clock: { now: () => now }, log: () => {}, deadLetter: () => {} })
  const warning = (team: number, reason: string, type = 'event_dropped') => JSON.stringify({ team_id: team, type, source: 'capture', details: { reason }, timestamp: 0 })
  const read = (texts: string[], from: number) => {
    const frames = new FrameBatch({ segment: 1, offset: from })
    texts.forEach((text, i) => frames.add(frame(FrameKind.warning, text, from + i)))
    batches.process('main', frames, () => {})
  }
  const written = () => db.prepare('SELECT team_id, type, details FROM ingestion_warnings ORDER BY id').all().map((r: any) => `${r.team_id} ${r.type} ${JSON.parse(r.details).reason}`)
  read([warning(1, 'missing_distinct_id'), warning(1, 'missing_distinct_id'), warning(2, 'missing_distinct_id'), warning(1, 'missing_event_name'), warning(1, 'x', 'ignored_invalid_timestamp')], 0)
  t.same(written(), ['1 event_dropped missing_distinct_id', '2 event_dropped missing_distinct_id', '1 event_dropped missing_event_name', '1 ignored_invalid_timestamp x'])
  now = 60 * 60 * 1000 - 1
  read([warning(1, 'missing_distinct_id')], 10)
  t.equal(written().length, 4, 'not again within the hour')
  now = 60 * 60 * 1000
  read([warning(1, 'missing_distinct_id')], 20)
  t.equal(written().length, 5, 'again after it')
})

t.test('a batch redone event by event counts and warns of its cookieless drops once', async (t) => {
  const db = openDatabase(join(t.testdir(), 'persons.db'))
  t.teardown(() => db.close())
  migrate(db, PERSONS_MIGRATIONS)
  const now = Date.parse('2025-06-10T12:00:00Z')
  const cookieless = new CookielessIngest(new CookielessState(db), () => ({ timezone: 'UTC', cookielessMode: 0 }))
  const batches = new PersonBatches({ db, stage, cookieless, checkpoints: new Checkpoints(db), clock: { now: () => now }, log: () => {}, deadLetter: () => {} })
  const frames = new FrameBatch({ segment: 1, offset: 0 })
  const visitor = { ...event(1), distinct_id: '$posthog_cookieless', properties: { $cookieless_mode: true }, timestamp: now }
  frames.add(frame(FrameKind.event, JSON.stringify(visitor), 0))
  frames.add(frame(FrameKind.event, JSON.stringify(event(2, 'bad')), 1))
  frames.add(frame(FrameKind.event, JSON.stringify(event(3)), 2))
  const { processed } = batches.process('main', frames, () => {})
  t.equal(processed, 1, 'the good event stored, the bad one dead-lettered, the cookieless one dropped')
  t.equal(batches.cookielessDropped, 1, 'counted once')
  t.same(db.prepare('SELECT type, source FROM ingestion_warnings').all(), [{ type: 'event_dropped', source: 'cookieless' }], 'warned of once')
})
