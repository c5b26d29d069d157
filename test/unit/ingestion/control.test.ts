import t from 'tap'
import { decodeControl, encodeControl, type PersonDeletion, type PersonSplit } from '../../../src/ingestion/control.js'
import { FrameBatch } from '../../../src/ingestion/consumer/read-batch.js'
import { RowQueue } from '../../../src/ingestion/consumer/row-queue.js'
import { FrameKind, HEADER_BYTES, readFrame } from '../../../src/ingestion/spool/format.js'
import { packedRows } from '../../../src/storage/events/packed-rows.js'

const deletion: PersonDeletion = {
  op: 'delete_persons',
  team_id: 3,
  uuids: ['0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b'],
  distinct_ids: ['alice', 'alice-anon'],
  delete_events: true,
  after: { historical: { segment: 2, offset: 0 }, overflow: { segment: 4, offset: 1200 } },
}

t.test('a person deletion is a control frame that reads back as written', async (t) => {
  const frame = readFrame(encodeControl(deletion), 0)
  t.equal(frame.status, 'ok')
  if (frame.status !== 'ok') return
  t.equal(frame.kind, FrameKind.control)
  t.same(decodeControl(frame.payload), deletion)
})

const split: PersonSplit = {
  op: 'split_person',
  team_id: 3,
  uuid: '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b',
  main_distinct_id: 'alice',
  distinct_ids_to_split: null,
  after: { overflow: { segment: 4, offset: 1200 } },
}

t.test('a person split is a control frame of the same kind that reads back as written', async (t) => {
  for (const record of [split, { ...split, main_distinct_id: null, distinct_ids_to_split: ['bob'] }]) {
    const frame = readFrame(encodeControl(record), 0)
    t.equal(frame.status, 'ok')
    if (frame.status !== 'ok') return
    t.equal(frame.kind, FrameKind.control)
    t.same(decodeControl(frame.payload), record)
  }
})

t.test('a control record this version cannot read is refused, not guessed at', async (t) => {
  const bad = [
    '{"op":"delete_everything"}',
    'null',
    JSON.stringify({ ...deletion, team_id: '3' }),
    JSON.stringify({ ...deletion, uuids: [1] }),
    JSON.stringify({ ...deletion, delete_events: 'yes' }),
    JSON.stringify({ ...deletion, after: { overflow: { segment: 1 } } }),
    JSON.stringify({ ...split, uuid: 5 }),
    JSON.stringify({ ...split, main_distinct_id: 1 }),
    JSON.stringify({ ...split, distinct_ids_to_split: 'bob' }),
    JSON.stringify({ ...split, after: null }),
  ]
  for (const text of bad) t.throws(() => decodeControl(Buffer.from(text)), text)
})

t.test('a read ending in a control frame gives it back with where it starts and ends', async (t) => {
  const batch = new FrameBatch({ segment: 1, offset: 0 })
  batch.add({ kind: FrameKind.event, payload: Buffer.from('{}'), end: { segment: 1, offset: HEADER_BYTES + 2 } })
  t.equal(batch.takeControl(), null, 'an event is no control frame')
  const payload = Buffer.from(JSON.stringify(deletion))
  batch.add({ kind: FrameKind.control, payload, end: { segment: 1, offset: 2 * HEADER_BYTES + 2 + payload.length } })
  const control = batch.takeControl()
  t.same(control?.start, { segment: 1, offset: HEADER_BYTES + 2 })
  t.same(control?.end, { segment: 1, offset: 2 * HEADER_BYTES + 2 + payload.length })
  t.same(control && decodeControl(control.payload), deletion)
  t.equal(batch.count, 1)
  t.same(batch.end, { segment: 1, offset: HEADER_BYTES + 2 }, 'the rest of the read ends where the control frame starts')
})

t.test('an insert batch ends at a queued event deletion, so no later row is stored before it runs', async (t) => {
  const queue = new RowQueue(1000, 1 << 20)
  const at = (offset: number) => ({ segment: 1, offset })
  queue.push('main', packedRows([]), at(10), 0)
  t.notOk(queue.batchReady)
  queue.push('main', packedRows([]), at(20), 0, false, { id: 1, teamId: 3, distinctIds: ['alice'] })
  queue.push('overflow', packedRows([]), at(30), 0)
  t.ok(queue.batchReady, 'a deletion is written at once, not at the flush interval')
  const first = queue.take()
  t.same(first.items.map((i) => i.end.offset), [10, 20])
  t.same(first.deletion, { id: 1, teamId: 3, distinctIds: ['alice'] })
  const second = queue.take()
  t.same(second.items.map((i) => i.end.offset), [30])
  t.equal(second.deletion, null)
})
