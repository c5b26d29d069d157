import t from 'tap'
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { Consumer } from '../../../src/ingestion/consumer/consumer.js'
import type { PersonStage } from '../../../src/ingestion/consumer/person-batch.js'
import { rowBytes } from '../../../src/ingestion/consumer/row-queue.js'
import { SinkWriter } from '../../../src/ingestion/consumer/sink-writer.js'
import { encodeFrame, FrameKind } from '../../../src/ingestion/spool/format.js'
import { segmentPath } from '../../../src/ingestion/spool/layout.js'
import type { CapturedEvent } from '../../../src/ingestion/types.js'
import { NO_SETS } from '../../../src/persons/index.js'
import type { EventRow } from '../../../src/storage/events/types.js'
import { migrate, openDatabase } from '../../../src/storage/index.js'
import { PERSONS_MIGRATIONS } from '../../../src/storage/sqlite/migrations/persons.js'

/** A spool with `count` events of ≈1 KB in one finished segment of the main lane, and a consumer over it. */
function setup(count: number, caps: { batchBytes: number; readBytes: number; flushIntervalMs?: number }) {
  const dir = mkdtempSync(join(tmpdir(), 'consumer-caps-'))
  const spoolDir = join(dir, 'spool')
  const frames: Buffer[] = []
  for (let i = 0; i < count; i++) {
    const event: CapturedEvent = {
      uuid: `00000000-0000-7000-8000-${String(i).padStart(12, '0')}`,
      event: 'e',
      distinct_id: `d${i}`,
      properties: { i, pad: 'x'.repeat(1000) },
      timestamp: 1_700_000_000_000 + i,
      team_id: 1,
      now: 1_700_000_000_000,
    }
    frames.push(encodeFrame(FrameKind.event, JSON.stringify(event)))
  }
  const path = segmentPath(spoolDir, 'main', 1)
  mkdirSync(dirname(path), { recursive: true })
  writeFileSync(path, Buffer.concat(frames))

  const personsDb = openDatabase(join(dir, 'persons.db'))
  migrate(personsDb, PERSONS_MIGRATIONS)
  const processed: number[] = []
  const stage: PersonStage = {
    process: (events) => {
      processed.push(events.length)
      return events.map((e) => ({ personId: 'p', groups: ['', '', '', '', ''], properties: e.properties, sets: NO_SETS, geo: null }))
    },
    enrich: (e) => ({ personId: 'p', groups: ['', '', '', '', ''], properties: e.properties, sets: NO_SETS, geo: null }),
    resetCache: () => {},
  }
  const inserts: EventRow[][] = []
  const sinkWriter = new SinkWriter({
    sink: () => ({
      kind: 'sqlite',
      write: async (rows) => void inserts.push([...rows]),
      ping: async () => true,
      close: async () => {},
    }),
    retryMaxMs: 100,
    deadLetter: () => t.fail('nothing is dead-lettered'),
    onFailure: (error) => t.fail(String(error)),
    onSuccess: () => {},
    abandoned: () => false,
  })
  const consumer = new Consumer({
    spoolDir,
    personsDb,
    stage,
    sinkWriter,
    deadLetter: () => t.fail('nothing is dead-lettered'),
    writeDirect: async () => {},
    // Segment 1 is older than the writer's first live segment: it is read to its end.
    activeSegments: { main: 100, historical: 100, overflow: 100 },
    batchRows: 10_000,
    batchBytes: caps.batchBytes,
    readBytes: caps.readBytes,
    flushIntervalMs: caps.flushIntervalMs ?? 10,
    clock: { now: () => Date.now() },
    log: () => {},
    onFreed: () => {},
  })
  return { consumer, processed, inserts }
}

t.test('reads and inserts are capped by bytes, and every event is stored once, in order', async (t) => {
  // A flush interval far beyond the test: inserts happen because the queue holds a batch's worth of bytes.
  const { consumer, processed, inserts } = setup(300, { batchBytes: 50_000, readBytes: 10_000, flushIntervalMs: 2_000 })
  const running = consumer.run()
  for (let waited = 0; consumer.stats.stored < 250 && waited < 1500; waited += 10) await new Promise((r) => setTimeout(r, 10))
  t.ok(consumer.stats.stored >= 250, `full batches were inserted without waiting for the interval (${consumer.stats.stored})`)
  consumer.stop()
  await running

  const stored = inserts.flat()
  t.equal(stored.length, 300)
  t.same(
    stored.map((r) => r.distinct_id),
    Array.from({ length: 300 }, (_, i) => `d${i}`),
    'in spool order',
  )
  t.equal(consumer.stats.stored, 300)
  // ≈1.1 KB frames: the first step of 16 frames already passes 10 KB.
  t.ok(Math.max(...processed) <= 16, `no read far beyond the byte cap (largest ${Math.max(...processed)} events)`)
  for (const rows of inserts) t.ok(rowBytes(rows) <= 50_000, `insert of ${rows.length} rows, ${rowBytes(rows)} bytes`)
  t.ok(inserts.length > 1, `several inserts (${inserts.length})`)
})

t.test('without byte pressure a read takes up to 2,000 frames', async (t) => {
  const { consumer, processed, inserts } = setup(2500, { batchBytes: 64 * 1024 * 1024, readBytes: 64 * 1024 * 1024 })
  consumer.stop()
  await consumer.run()
  t.same(processed, [2000, 500])
  t.equal(inserts.flat().length, 2500)
})
