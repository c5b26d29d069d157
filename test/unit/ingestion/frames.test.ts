import t from 'tap'
import { encodePayload, fnv1a } from '../../../src/ingestion/frames.js'
import { FrameKind, readFrame } from '../../../src/ingestion/spool/format.js'
import type { CapturedEvent } from '../../../src/ingestion/types.js'

const event = (i: number, name: string): CapturedEvent => ({
  uuid: `00000000-0000-7000-8000-${String(i).padStart(12, '0')}`,
  event: name,
  distinct_id: `user-${i}`,
  properties: { i, text: name.repeat(i) },
  timestamp: 1_700_000_000_000 + i,
  team_id: 2,
  now: 1_700_000_000_000,
})

t.test("a body's events are framed back to back, each at its offset, with its checksum and its exact JSON", async (t) => {
  const events = ['$pageview', 'Zoë 🦜 ユーザー', 'x', '\u2028"\\'].map((name, i) => event(i + 1, name))
  const warnings = [{ team_id: 2, type: 'event_dropped', source: 'capture', details: { reason: 'missing_event_name' }, timestamp: 1 }]
  const encoded = encodePayload({ teamId: 2, historical: false, events, warnings })
  t.equal(encoded.offsets.length, events.length + 1)
  t.equal(encoded.offsets[events.length], encoded.frames.length, 'the last offset is the end of the frames')
  const frames = Buffer.from(encoded.frames.buffer, encoded.frames.byteOffset, encoded.frames.length)
  events.forEach((e, i) => {
    const read = readFrame(frames, encoded.offsets[i])
    t.equal(read.status, 'ok', `frame ${i} reads with a valid checksum`)
    if (read.status !== 'ok') return
    t.equal(read.kind, FrameKind.event)
    t.equal(read.payload.toString('utf8'), JSON.stringify(e))
    t.equal(read.next, encoded.offsets[i + 1], 'it ends where the next one starts')
    t.equal(encoded.keyHashes[i], fnv1a(`2:${e.distinct_id}`))
  })
  const warning = readFrame(Buffer.from(encoded.warningFrames), 0)
  t.ok(warning.status === 'ok' && warning.kind === FrameKind.warning && JSON.parse(warning.payload.toString()).type === 'event_dropped')
  t.same(encoded.dropReasons, ['missing_event_name'])
})

t.test('a body with no accepted events has no frames', async (t) => {
  const encoded = encodePayload({ teamId: 2, historical: true, events: [], warnings: [] })
  t.equal(encoded.frames.length, 0)
  t.same([...encoded.offsets], [0])
  t.equal(encoded.historical, true)
})
