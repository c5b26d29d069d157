import t from 'tap'
import { Worker } from 'node:worker_threads'
import { Lateness, leftover, StoredCursors } from '../../../src/ingestion/consumer/lateness.js'
import { importTypeScript } from '../../helpers/threads.js'

t.test('a stored cursor written on one thread reads the same on another, up to a segment of 2^23 and an offset of 1 TiB', async (t) => {
  const main = new StoredCursors()
  const far = { segment: 2 ** 23 - 1, offset: 2 ** 40 - 1 }
  // The consumer thread's side, as it runs there: its own StoredCursors over the same shared memory.
  const source = `
    import { parentPort, workerData } from 'node:worker_threads'
    ${importTypeScript('{ StoredCursors }', new URL('../../../src/ingestion/consumer/lateness.ts', import.meta.url))}
    const cursors = new StoredCursors(workerData.buffer)
    cursors.set('historical', workerData.far)
    cursors.set('main', { segment: 7, offset: 4096 })
    parentPort.postMessage('done')
  `
  const worker = new Worker(new URL(`data:text/javascript,${encodeURIComponent(source)}`), {
    execArgv: process.execArgv,
    workerData: { buffer: main.buffer, far },
  })
  await new Promise((resolve) => worker.once('message', resolve))
  await worker.terminate()
  t.same(main.get('main'), { segment: 7, offset: 4096 })
  t.same(main.get('historical'), far)
  t.same(main.get('overflow'), { segment: 0, offset: 0 }, 'a lane never written reads as the spool’s start')
})

t.test('the lag is the age of the oldest durable position the store has not passed, over every lane', async (t) => {
  const stored = new StoredCursors()
  const lateness = new Lateness()
  t.equal(lateness.ageMs(stored, 1000), 0, 'nothing durable: not late')
  lateness.durable('main', 1, 100, 1000)
  lateness.durable('main', 1, 250, 1010)
  lateness.durable('historical', 4, 50, 1005)
  t.equal(lateness.ageMs(stored, 1100), 100)

  stored.set('main', { segment: 1, offset: 100 })
  t.equal(lateness.ageMs(stored, 1100), 95, 'main’s first position stored: the historical lane’s is now the oldest')
  stored.set('historical', { segment: 4, offset: 50 })
  t.equal(lateness.ageMs(stored, 1100), 90)
  stored.set('main', { segment: 2, offset: 0 })
  t.equal(lateness.ageMs(stored, 1200), 0, 'a later segment passes every offset of the earlier one')

  lateness.durable('main', 2, 10, 1300)
  t.equal(lateness.ageMs(stored, 1350), 50, 'positions passed before are forgotten, not counted again')
})

t.test('past 2,000 waiting positions a lane keeps the oldest one’s age exact and moves its newest forward', async (t) => {
  const stored = new StoredCursors()
  const lateness = new Lateness()
  for (let i = 1; i <= 2_500; i++) lateness.durable('main', 1, i * 10, i)
  t.equal(lateness.ageMs(stored, 3000), 2999)
  stored.set('main', { segment: 1, offset: 19_990 })
  t.equal(lateness.ageMs(stored, 3000), 1000, 'the 2,000th position, which took the last 500 reports, is still waiting')
  stored.set('main', { segment: 1, offset: 25_000 })
  t.equal(lateness.ageMs(stored, 3000), 0, 'every report was kept in some position: all stored, none late')
})

t.test('an earlier run’s unstored segments wait from when the oldest was last written until the store passes the last one’s end', async (t) => {
  const segments = [
    { segment: 3, bytes: 4096, modifiedAt: 100 }, // stored to its end before the crash
    { segment: 4, bytes: 8192, modifiedAt: 200 },
    { segment: 5, bytes: 1024, modifiedAt: 300 },
    { segment: 6, bytes: 0, modifiedAt: 400 }, // this run's first
  ]
  // Frames fill each segment; a crash's zero fill would follow them.
  const framesEnd = new Map(segments.map((s) => [s.segment, s.bytes]))
  const frames = (segment: number, offset: number) => offset < (framesEnd.get(segment) ?? 0)
  t.same(leftover(segments, 6, { segment: 3, offset: 4096 }, frames), { end: { segment: 5, offset: 1024 }, writtenAt: 200 })
  t.same(leftover(segments, 6, { segment: 4, offset: 100 }, frames), { end: { segment: 5, offset: 1024 }, writtenAt: 200 }, 'a segment stored in part still waits')
  t.same(leftover(segments, 6, { segment: 5, offset: 1024 }, frames), null, 'all stored: nothing left over')
  t.same(leftover(segments, 5, { segment: 3, offset: 4096 }, frames), { end: { segment: 4, offset: 8192 }, writtenAt: 200 }, 'this run’s segments are not left over')

  const unwritten = [{ segment: 1, bytes: 0, modifiedAt: 50 }, ...segments] // a lane's segment from a start that wrote nothing to it
  t.equal(leftover(unwritten, 6, { segment: 0, offset: 0 }, frames)?.writtenAt, 100, 'an empty segment does not wait: the lag counts from the first with frames')
  framesEnd.set(5, 512) // the rest of segment 5 is a crash's zero fill
  t.same(leftover(segments, 6, { segment: 5, offset: 512 }, frames), null, 'all its frames stored: a zero tail does not wait')
  t.same(leftover(segments, 6, { segment: 5, offset: 100 }, frames), { end: { segment: 5, offset: 1024 }, writtenAt: 300 }, 'the zero tail counts to the end the store will reach')

  const stored = new StoredCursors()
  stored.set('main', { segment: 3, offset: 4096 })
  const lateness = new Lateness()
  lateness.durable('main', 6, 500, 1000)
  lateness.leftover('main', { segment: 5, offset: 1024 }, 400)
  t.equal(lateness.ageMs(stored, 1100), 700, 'older than what this run made durable, though noted after it')
  stored.set('main', { segment: 5, offset: 1024 })
  t.equal(lateness.ageMs(stored, 1100), 100, 'stored: this run’s own events are the oldest waiting')
})
