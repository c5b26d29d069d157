import t from 'tap'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { FrameBatch, readBatch } from '../../../src/ingestion/consumer/read-batch.js'
import { encodeFrame, FrameKind } from '../../../src/ingestion/spool/format.js'
import { segmentPath } from '../../../src/ingestion/spool/layout.js'
import { LaneReader } from '../../../src/ingestion/spool/reader.js'
import { testDir } from '../../helpers/temp.js'

t.test('a read keeps its frames as kinds and offsets, and gives them back whole and in order across chunk buffers', async (t) => {
  const dir = testDir(t, 'read-batch-')
  mkdirSync(join(dir, 'main'), { recursive: true })
  // 60 frames of 100 KB: the reader's 4 MB chunks end inside the 41st.
  const texts = Array.from({ length: 60 }, (_, i) => `${i}:`.padEnd(100_000, String.fromCharCode(97 + (i % 26))))
  const frames = texts.map((text, i) => encodeFrame(i % 7 === 3 ? FrameKind.warning : FrameKind.event, text))
  writeFileSync(segmentPath(dir, 'main', 1), Buffer.concat(frames))
  const reader = new LaneReader(dir, 'main', { segment: 0, offset: 0 }, 2)
  t.teardown(() => reader.close())

  const batch = readBatch(reader, 10 * 1024 * 1024, () => t.fail('no corruption'))
  t.equal(batch.count, 60)
  t.equal(batch.bytes, texts.reduce((sum, text) => sum + text.length, 0))
  t.same(batch.end, { segment: 1, offset: frames.reduce((sum, f) => sum + f.length, 0) }, 'the batch ends where its last frame does')
  const back = batch.frames()
  t.not(back[0].payload.buffer, back[59].payload.buffer, 'the frames came from two buffers')
  t.same(back.map((f) => f.kind), texts.map((_, i) => (i % 7 === 3 ? FrameKind.warning : FrameKind.event)))
  t.same(back.map((f) => f.payload.toString()), texts)
  t.same(batch.frames(40, 42).map((f) => f.payload.toString()), texts.slice(40, 42), 'a range of them')
  t.same(new FrameBatch({ segment: 3, offset: 9 }).end, { segment: 3, offset: 9 }, 'an empty batch ends where it starts')
})
