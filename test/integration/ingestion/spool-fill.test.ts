/**
 * The service's spool zero-fills its active segment ahead of the frames on a thread of its own
 * (src/ingestion/spool/filler.ts): the file grows to the fill step with the frames at its start and zeros
 * after them, and a stop cuts it back to its frames.
 */
import t from 'tap'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { readFrame } from '../../../src/ingestion/spool/format.js'
import { startServer } from '../../helpers/server.js'
import { until } from '../../helpers/wait.js'

/** One fill step (writer.ts): a single event's write starts one. */
const FILL_STEP = 2 * 1024 * 1024

t.test('the service fills the active segment with zeros ahead of its frames and cuts it back when it stops', async (t) => {
  const server = await startServer()
  t.teardown(() => server.cleanup())
  const lane = join(server.dataDir, 'spool', 'main')
  const res = await server.request('POST', '/capture/', { body: { api_key: server.boot.project_api_key, event: 'filled', distinct_id: 'd' } })
  t.equal(res.status, 200)
  const active = () => join(lane, readdirSync(lane).sort().at(-1)!)
  // The fill thread writes in steps of its own, with fdatasyncs between them: a busy disk can take seconds.
  await until('a fill step after the frame', () => {
    const written = readFileSync(active())
    const first = readFrame(written, 0)
    return first.status === 'ok' && written.length >= first.next + FILL_STEP
  })
  const path = active()
  const bytes = readFileSync(path)
  const frame = readFrame(bytes, 0)
  t.equal(frame.status, 'ok', 'the frame is at its start')
  if (frame.status !== 'ok') return
  t.equal(bytes.length, frame.next + FILL_STEP, 'a fill step of zeros was written after it')
  t.match(frame.payload.toString(), '"event":"filled"')
  t.equal(bytes.subarray(frame.next).findIndex((b) => b !== 0), -1, 'zeros after it')
  t.equal(await server.stop(), 0)
  t.equal(statSync(path).size, frame.next, 'stopping cut the segment back to its frame')
})
