/** A consumer over a spool of ≈1 KB events, with a person stage and event store that only record what they get. */
import t from 'tap'
import { mkdirSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { Consumer } from '../../src/ingestion/consumer/consumer.js'
import type { PersonStage } from '../../src/ingestion/consumer/person-batch.js'
import type { StreamTarget } from '../../src/ingestion/consumer/spanning-insert.js'
import { SinkWriter } from '../../src/ingestion/consumer/sink-writer.js'
import { encodeFrame, FrameKind } from '../../src/ingestion/spool/format.js'
import { segmentPath } from '../../src/ingestion/spool/layout.js'
import type { CapturedEvent } from '../../src/ingestion/types.js'
import { NO_SETS, type PersonOutcome } from '../../src/persons/index.js'
import { packedLength, unpackRows } from '../../src/storage/events/packed-rows.js'
import type { EventRow } from '../../src/storage/events/types.js'
import { migrate, openDatabase } from '../../src/storage/index.js'
import { PERSONS_MIGRATIONS } from '../../src/storage/sqlite/migrations/persons.js'
import { testDir } from './temp.js'

export interface ConsumerCaps {
  batchBytes: number
  readBytes: number
  flushIntervalMs?: number
  /** ClickHouse's spanning inserts (none: every batch is one write). */
  stream?: StreamTarget
  /** How long each write to the event store takes (default: it resolves at once). */
  writeMs?: number
  /** Called where the consumer makes the stores durable, before it deletes consumed segments (default: nothing). */
  syncStores?: () => void
  /** The consumer's log (default: dropped). */
  log?: (level: 'info' | 'warn' | 'error', msg: string, fields?: Record<string, unknown>) => void
}

/**
 * One write to the event store: how many chunks of reads the person loop had processed when it began and
 * ended, and how many rows were queued besides its own when it ended.
 */
export interface WriteSpan {
  readsAtStart: number
  readsAtEnd: number
  queuedAtEnd: number
}

/** A spool with `count` events of ≈1 KB in one finished segment of the main lane, and a consumer over it. */
export function consumerOverSpool(count: number, caps: ConsumerCaps) {
  const dir = testDir(t, 'consumer-caps-')
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
  const spool = Buffer.concat(frames)
  writeFileSync(path, spool)

  const personsDb = openDatabase(join(dir, 'persons.db'))
  migrate(personsDb, PERSONS_MIGRATIONS)
  const processed: number[] = []
  const outcome = (e: CapturedEvent): PersonOutcome => ({ personId: 'p', groups: ['', '', '', '', ''], properties: e.properties, sets: NO_SETS, geo: null, propertiesText: null })
  const stage: PersonStage = {
    process: (events) => {
      processed.push(events.length)
      return events.map(outcome)
    },
    enrich: outcome,
    deletePersons: () => [],
    splitPerson: () => [],
    resetCache: () => {},
  }
  const inserts: EventRow[][] = []
  const insertBytes: number[] = []
  /** The memory each inserted part lives in. */
  const buffers: ArrayBufferLike[] = []
  const writes: WriteSpan[] = []
  const sinkWriter = new SinkWriter({
    sink: () => ({
      kind: 'sqlite',
      write: async () => {
        t.fail('rows reach the store packed')
      },
      deleteEvents: async () => {},
      writePacked: async (rows) => {
        const write = { readsAtStart: processed.length, readsAtEnd: 0, queuedAtEnd: 0 }
        writes.push(write)
        if (caps.writeMs) await new Promise((resolve) => setTimeout(resolve, caps.writeMs))
        inserts.push(unpackRows(rows))
        insertBytes.push(packedLength(rows))
        for (const part of rows.parts) buffers.push(part.buffer)
        write.readsAtEnd = processed.length
        // the rows it took still count until the store has them (RowQueue.settle)
        write.queuedAtEnd = consumer.refreshStats().queuedRows - rows.count
      },
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
    stream: caps.stream ?? null,
    clock: { now: () => Date.now() },
    log: caps.log ?? (() => {}),
    onFreed: () => {},
    syncStores: caps.syncStores ?? (() => {}),
  })
  /** Tells the consumer the whole spool is durable, as the writer does: it then counts what it has not read as its backlog. */
  const markDurable = () => consumer.durable('main', 1, spool.length)
  return { consumer, processed, inserts, insertBytes, buffers, writes, markDurable, segment: path }
}

