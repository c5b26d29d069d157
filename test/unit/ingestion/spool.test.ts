import t from 'tap'
import { appendFileSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { encodeFrame, FrameKind, readFrame } from '../../../src/ingestion/spool/format.js'
import { listSegments, segmentPath } from '../../../src/ingestion/spool/layout.js'
import { holdsDataAt, LaneReader, type CorruptionReport } from '../../../src/ingestion/spool/reader.js'
import { writeZerosSync } from '../../../src/ingestion/spool/filler.js'
import { SpoolWriter, type SpoolWriterOptions } from '../../../src/ingestion/spool/writer.js'
import type { Lane } from '../../../src/ingestion/types.js'
import { testDir } from '../../helpers/temp.js'
import { until } from '../../helpers/wait.js'

type WriterOptions = Partial<Pick<SpoolWriterOptions, 'maxBytes' | 'segmentBytes' | 'syncDir' | 'onError'>>

function writer(dir: string, opts: WriterOptions = {}) {
  const durable: Array<[Lane, number, number]> = []
  const w = new SpoolWriter({
    dir,
    segmentBytes: opts.segmentBytes ?? 1024 * 1024,
    maxBytes: opts.maxBytes ?? 10 * 1024 * 1024,
    fsyncIntervalMs: 1,
    fill: async (path, from, to) => writeZerosSync(path, from, to),
    syncDir: opts.syncDir,
    onDurable: (lane, segment, offset) => durable.push([lane, segment, offset]),
    onError: opts.onError ?? (() => {}),
  })
  return { w, durable }
}

const frame = (text: string) => encodeFrame(FrameKind.event, text)

/** Writes `texts` to a segment of the main lane and closes the writer, as a run before a restart does; the segment's number. */
async function earlierRun(dir: string, texts: string[]): Promise<number> {
  const { w } = writer(dir)
  const frames = texts.map(frame)
  await w.append('main', frames, Buffer.concat(frames).length)
  const segment = w.currentState().segments.main
  await w.close()
  return segment
}

t.test('frames round-trip and detect damage', async (t) => {
  const f = frame('{"a":"ü"}')
  const ok = readFrame(f, 0)
  t.equal(ok.status, 'ok')
  if (ok.status === 'ok') t.equal(ok.payload.toString(), '{"a":"ü"}')
  t.same(readFrame(f.subarray(0, f.length - 1), 0), { status: 'incomplete' })
  const bad = Buffer.from(f)
  bad[bad.length - 1] ^= 1
  t.equal(readFrame(bad, 0).status, 'corrupt')
  t.same(readFrame(Buffer.alloc(64), 0), { status: 'unused' }, 'zero fill is no frame')
})

t.test('appends resolve only once durable, and the reader sees them in order', async (t) => {
  const dir = testDir(t, 'spool-')
  const { w, durable } = writer(dir)
  const first = w.currentState().segments.main
  await Promise.all([w.append('main', [frame('1'), frame('2')], 2 * frame('1').length), w.append('main', [frame('3')], frame('3').length)])
  t.ok(durable.length >= 1, 'the reader was told')
  const reader = new LaneReader(dir, 'main', { segment: 0, offset: 0 }, first)
  for (const [lane, segment, offset] of durable) if (lane === 'main') reader.durable(segment, offset)
  const frames = reader.read(10, () => t.fail('no corruption'))
  t.same(frames.map((f) => f.payload.toString()), ['1', '2', '3'])
  t.same(reader.read(10, () => {}), [], 'nothing more until the writer reports more')
  await w.close()
})

t.test('appends made before a write starts share it', async (t) => {
  const dir = testDir(t, 'spool-')
  const { w, durable } = writer(dir)
  const a = w.append('main', [frame('a')], frame('a').length)
  const b = w.append('main', [frame('b')], frame('b').length)
  await Promise.all([a, b])
  t.same(durable.filter(([lane]) => lane === 'main').length, 1, 'one synced write for both')
  await w.close()
})

t.test('a full spool refuses appends with 503 and Retry-After', async (t) => {
  const dir = testDir(t, 'spool-')
  const { w } = writer(dir, { maxBytes: 100, segmentBytes: 100 })
  await t.rejects(w.append('main', [Buffer.alloc(200)], 200), { code: 'service_unavailable', retryAfter: 5 })
  t.notOk(w.hasRoom(101))
  await w.append('main', [frame('small')], frame('small').length)
  w.release(w.usedBytes)
  t.ok(w.hasRoom(100), 'room again once the consumer released segments')
  await w.close()
})

t.test('after a restart the reader skips a torn tail and reports damage in the middle', async (t) => {
  const dir = testDir(t, 'spool-')
  const segment = await earlierRun(dir, ['a', 'b'])
  // a crash mid-write leaves half a frame at the end of the segment
  appendFileSync(segmentPath(dir, 'main', segment), frame('never acknowledged').subarray(0, 7))
  // a second old segment whose middle frame is damaged
  const damaged = Buffer.concat([frame('c'), frame('d'), frame('e')])
  damaged[frame('c').length + 9] ^= 0xff // the payload byte of 'd'
  writeFileSync(segmentPath(dir, 'main', segment + 1), damaged)

  const { w: next } = writer(dir)
  const live = next.currentState().segments.main
  t.equal(live, segment + 2, 'a restarted writer starts a new segment')
  const reports: CorruptionReport[] = []
  const reader = new LaneReader(dir, 'main', { segment: 0, offset: 0 }, live)
  const frames = reader.read(100, (r) => reports.push(r))
  t.same(frames.map((f) => f.payload.toString()), ['a', 'b', 'c'])
  t.equal(reports.length, 1, 'the torn tail is not reported, the damage is')
  t.equal(reports[0].segment, segment + 1)
  t.equal(reports[0].reason, 'checksum mismatch')
  await next.close()
})

t.test('after a restart the backlog counts the older segments left to read, and nothing once they are read', async (t) => {
  const dir = testDir(t, 'spool-')
  const segment = await earlierRun(dir, ['a', 'b'])
  writeFileSync(segmentPath(dir, 'main', segment + 1), frame('c'))
  const { w: next, durable } = writer(dir)
  const live = next.currentState().segments.main
  await next.append('main', [frame('d')], frame('d').length)
  const reader = new LaneReader(dir, 'main', { segment, offset: frame('a').length }, live)
  for (const [lane, s, offset] of durable) if (lane === 'main') reader.durable(s, offset)
  t.equal(reader.backlogBytes(), 3 * frame('a').length, "'b' and 'c' from before the restart, 'd' since")
  t.same(reader.read(2, () => t.fail('no corruption')).map((f) => f.payload.toString()), ['b', 'c'])
  t.equal(reader.backlogBytes(), frame('d').length, 'only what the running writer made durable is left')
  t.same(reader.read(10, () => {}).map((f) => f.payload.toString()), ['d'])
  t.equal(reader.backlogBytes(), 0)
  await next.close()
})

t.test('a segment holds data where a frame, whole or torn, starts, not in its zero fill nor past its end', async (t) => {
  const dir = testDir(t, 'spool-')
  const segment = await earlierRun(dir, ['a', 'b'])
  const path = segmentPath(dir, 'main', segment)
  const framesEnd = 2 * frame('a').length
  appendFileSync(path, Buffer.alloc(4096)) // a crash's zero fill
  t.ok(holdsDataAt(dir, 'main', segment, 0))
  t.ok(holdsDataAt(dir, 'main', segment, frame('a').length), "'b'")
  t.notOk(holdsDataAt(dir, 'main', segment, framesEnd), 'the zero fill')
  t.notOk(holdsDataAt(dir, 'main', segment, framesEnd + 4096), 'the end of the file')
  writeFileSync(path, Buffer.concat([frame('a'), frame('b').subarray(0, 4)]))
  t.ok(holdsDataAt(dir, 'main', segment, frame('a').length), 'a torn frame is for the reader to skip')
  t.notOk(holdsDataAt(dir, 'main', segment + 5, 0), 'a segment that is gone')
})

t.test('a segment is zero-filled ahead of its frames and cut back to them when closed', async (t) => {
  const dir = testDir(t, 'spool-')
  const { w } = writer(dir, { segmentBytes: 256 * 1024 })
  const segment = w.currentState().segments.main
  const path = segmentPath(dir, 'main', segment)
  await w.append('main', [frame('a')], frame('a').length)
  for (let i = 0; i < 200 && statSync(path).size < 256 * 1024; i++) await new Promise((r) => setTimeout(r, 10))
  t.equal(statSync(path).size, 256 * 1024, 'zeros written up to the segment size')
  await w.append('main', [frame('b')], frame('b').length)
  t.equal(statSync(path).size, 256 * 1024, 'later frames land inside the filled space')
  t.same([...readFileSync(path).subarray(2 * frame('a').length)].filter((b) => b !== 0), [], 'the rest is zeros')
  await w.close()
  t.same(readFileSync(path), Buffer.concat([frame('a'), frame('b')]), 'closing cuts the segment back to its frames')
})

/** Bytes this process has sent to the storage layer (Linux counts a page when it is dirtied). */
const deviceWrites = () => Number(/write_bytes: (\d+)/.exec(readFileSync('/proc/self/io', 'utf8'))![1])

t.test('a group write into the zero fill sends about its own size to the disk, not the size of the fill writes', async (t) => {
  const dir = testDir(t, 'spool-')
  // One fill step reaches the segment's end: no fill runs while the group writes are measured.
  const { w } = writer(dir, { segmentBytes: 2 * 1024 * 1024 })
  const path = segmentPath(dir, 'main', w.currentState().segments.main)
  const group = frame('x'.repeat(13_000))
  await w.append('main', [group], group.length)
  for (let i = 0; i < 300 && statSync(path).size < 2 * 1024 * 1024; i++) await new Promise((r) => setTimeout(r, 10))
  await new Promise((r) => setTimeout(r, 200)) // the fill's closing sync
  const before = deviceWrites()
  for (let i = 0; i < 50; i++) await w.append('main', [group], group.length)
  const perWrite = (deviceWrites() - before) / 50
  // 1 MB fill writes made every group write rewrite ≈1 MB (Linux 6.x page-cache folios as large as the writes).
  t.ok(perWrite < 128 * 1024, `${Math.round(perWrite / 1024)} KB of device writes per ${Math.round(group.length / 1024)} KB group write`)
  await w.close()
})

t.test('a lane whose group writes are large stops zero-filling and appends', async (t) => {
  const dir = testDir(t, 'spool-')
  const { w } = writer(dir, { segmentBytes: 64 * 1024 * 1024, maxBytes: 64 * 1024 * 1024 })
  const path = segmentPath(dir, 'main', w.currentState().segments.main)
  const group = frame('x'.repeat(512 * 1024))
  for (let i = 0; i < 24; i++) await w.append('main', [group], group.length)
  await new Promise((r) => setTimeout(r, 300)) // a fill still running would grow the file now
  t.equal(statSync(path).size, 24 * group.length, 'the frames reach past every fill, and nothing is filled ahead of them')
  await w.close()
})

t.test('frames appended while fills and rotations run are all read back in order, and closed segments hold only frames', async (t) => {
  const dir = testDir(t, 'spool-')
  const { w } = writer(dir, { segmentBytes: 48 * 1024 })
  const first = w.currentState().segments.main
  const sent: string[] = []
  const appends: Promise<void>[] = []
  // Groups keep forming while earlier writes and fills are still running (no round waits for the last).
  for (let round = 0; round < 120; round++) {
    for (let i = 0; i < 25; i++) {
      const text = `${round}-${i}-${'x'.repeat((round * 37 + i * 101) % 900)}`
      sent.push(text)
      appends.push(w.append('main', [frame(text)], frame(text).length))
    }
    await new Promise((resolve) => setImmediate(resolve))
  }
  await Promise.all(appends)
  await w.close()
  const segments = listSegments(dir, 'main')
  // Read as a restarted writer's reader does: every segment is old, read to its last frame.
  const reports: CorruptionReport[] = []
  const reader = new LaneReader(dir, 'main', { segment: 0, offset: 0 }, first + segments.length)
  const frames = reader.read(10_000, (r) => reports.push(r))
  reader.close()
  t.same(reports, [], 'no damage reported')
  t.equal(frames.length, sent.length)
  t.ok(frames.every((f, i) => f.payload.toString() === sent[i]), 'every frame, in order')
  let frameBytes = 0
  for (const text of sent) frameBytes += frame(text).length
  t.equal(segments.reduce((sum, s) => sum + s.bytes, 0), frameBytes, 'no zero fill left in closed segments')
})

t.test('after a crash the reader stops at the zero fill, skips a frame cut off before it, and reports damage followed by frames', async (t) => {
  const dir = testDir(t, 'spool-')
  mkdirSync(join(dir, 'main'))
  const zeros = Buffer.alloc(8192)
  // ended by the fill: nothing was being written
  writeFileSync(segmentPath(dir, 'main', 1), Buffer.concat([frame('a'), frame('b'), zeros]))
  // a write cut off at a page: the frame's header and the start of its text, then the fill
  const cut = frame(`{"text":"${'x'.repeat(5000)}"}`)
  cut.fill(0, 4096)
  writeFileSync(segmentPath(dir, 'main', 2), Buffer.concat([frame('c'), cut, zeros]))
  // damage with frames after it
  const damaged = frame('e')
  damaged[9] ^= 0xff
  writeFileSync(segmentPath(dir, 'main', 3), Buffer.concat([frame('d'), damaged, frame('f'), zeros]))

  const reports: CorruptionReport[] = []
  const reader = new LaneReader(dir, 'main', { segment: 0, offset: 0 }, 4)
  const frames = reader.read(100, (r) => reports.push(r))
  t.same(frames.map((f) => f.payload.toString()), ['a', 'b', 'c', 'd'])
  t.same(reports.map((r) => [r.segment, r.reason]), [[3, 'checksum mismatch']], 'only the damage is reported')
  reader.close()
})

t.test('segments rotate at the size limit and a checkpoint resumes mid-lane', async (t) => {
  const dir = testDir(t, 'spool-')
  const { w, durable } = writer(dir, { segmentBytes: 64 })
  const first = w.currentState().segments.main
  for (let i = 0; i < 10; i++) await w.append('main', [frame(`event-${i}-${'x'.repeat(20)}`)], frame(`event-${i}-${'x'.repeat(20)}`).length)
  t.ok(listSegments(dir, 'main').length >= 5, 'several segments')
  const reader = new LaneReader(dir, 'main', { segment: 0, offset: 0 }, first)
  for (const [lane, segment, offset] of durable) if (lane === 'main') reader.durable(segment, offset)
  const all = reader.read(4, () => {})
  const resumed = new LaneReader(dir, 'main', all[3].end, first)
  for (const [lane, segment, offset] of durable) if (lane === 'main') resumed.durable(segment, offset)
  const rest = resumed.read(100, () => {})
  t.same([...all, ...rest].map((f) => f.payload.toString().split('-')[1]), ['0', '1', '2', '3', '4', '5', '6', '7', '8', '9'])
  await w.close()
  t.ok(readFileSync(segmentPath(dir, 'main', first)).length > 0)
})

t.test('the first frames of a new segment are acknowledged only once the folders naming it are synced', async (t) => {
  const dir = join(testDir(t, 'spool-'), 'spool') // a first start: the folders are new
  // Each folder sync waits until the test lets the syncs requested so far finish.
  const requested: string[] = []
  const lanesAtSpoolSync: string[] = []
  let waiting: Array<() => void> = []
  const finishSyncs = () => {
    for (const finish of waiting) finish()
    waiting = []
  }
  const { w } = writer(dir, {
    segmentBytes: 64,
    syncDir: (folder) => {
      if (folder === dir) lanesAtSpoolSync.push(...readdirSync(dir))
      requested.push(folder)
      return new Promise((resolve) => waiting.push(resolve))
    },
    onError: () => t.fail('no write error'),
  })
  const settled = (promise: Promise<void>) => {
    const state = { done: false }
    void promise.then(() => (state.done = true))
    return state
  }
  // What must not happen is given a pause to happen; what must happen is waited for (writes go through libuv's
  // pool, which a busy machine can keep for more than a pause: CI once read the first frame unwritten at 50 ms).
  const pause = () => new Promise((r) => setTimeout(r, 50))
  const eventually = (what: string, ok: () => boolean) => until(what, ok, 10_000, 5)
  const first = frame(`a-${'x'.repeat(64)}`) // fills the 64-byte segment: the lane rotates after it
  const segment = w.currentState().segments.main
  const a = settled(w.append('main', [first], first.length))
  await eventually('the frame to be written', () => statSync(segmentPath(dir, 'main', segment)).size >= first.length)
  await pause()
  t.notOk(a.done, 'written, but not acknowledged while the folders are being synced')
  t.ok([dir, join(dir, '..'), join(dir, 'main')].every((folder) => requested.some((r) => join(r) === join(folder))), 'the spool folder, its parent and the lane folder')
  t.same(lanesAtSpoolSync.sort(), ['historical', 'main', 'overflow'], 'the spool folder is synced once its lane folders exist')
  finishSyncs()
  await eventually('the frame to be acknowledged', () => a.done)
  await eventually('the lane to rotate', () => w.currentState().segments.main === segment + 1 && requested.length === 6)
  t.same(requested.slice(5), [join(dir, 'main')], 'rotated, and asked for the lane folder once more')

  const b = settled(w.append('main', [frame('b')], frame('b').length))
  await pause()
  t.notOk(b.done, 'the next segment waits for its own sync')
  finishSyncs()
  await eventually('the next segment to be acknowledged once synced', () => b.done)
  const c = settled(w.append('main', [frame('c')], frame('c').length))
  await eventually('later frames of the same segment to be acknowledged without a folder sync', () => c.done)
  t.equal(requested.length, 6, 'later frames of the same segment do not ask for a folder sync')
  finishSyncs()
  await w.close()
})

t.test('a failed folder sync refuses the frames that waited for it with 503', async (t) => {
  const dir = testDir(t, 'spool-')
  let failures = 1
  const { w } = writer(dir, {
    syncDir: async () => {
      if (failures-- > 0) throw new Error('EIO')
    },
  })
  await t.rejects(w.append('main', [frame('a')], frame('a').length), { code: 'service_unavailable' })
  await w.append('main', [frame('b')], frame('b').length)
  t.pass('the next segment takes frames once the folder syncs again')
  await w.close()
})

t.test('the reader reads into a chunk buffer again only once the frames viewing it are released', async (t) => {
  const dir = testDir(t, 'spool-')
  // 13 MB of 100 KB frames in a segment from before a restart: the reader takes it in 4 MB chunks.
  const texts = Array.from({ length: 130 }, (_, i) => `${i}:`.padEnd(100_000, String.fromCharCode(97 + (i % 26))))
  mkdirSync(join(dir, 'main'), { recursive: true })
  writeFileSync(segmentPath(dir, 'main', 1), Buffer.concat(texts.map(frame)))
  const { w } = writer(dir)
  const reader = new LaneReader(dir, 'main', { segment: 0, offset: 0 }, w.currentState().segments.main)
  const read = (n: number) => reader.read(n, () => t.fail('no corruption'))

  const first = read(50) // the first chunk and part of the second
  const second = read(50) // the rest of the second and part of the third
  t.same([...first, ...second].map((f) => f.payload.toString()), texts.slice(0, 100), 'frames not released keep their bytes while later chunks are read')
  reader.release()
  const third = read(30)
  const current = second[second.length - 1].payload.buffer
  const replaced = new Set([...first, ...second].map((f) => f.payload.buffer).filter((b) => b !== current))
  t.ok(third.some((f) => replaced.has(f.payload.buffer)), 'once released, an earlier chunk buffer is read into again')
  t.same(third.map((f) => f.payload.toString()), texts.slice(100), 'and the frames read into it are whole')
  reader.close()
  await w.close()
})
