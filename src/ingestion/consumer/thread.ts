/**
 * Everything that runs inside the consumer thread: opens persons.db (read-write), the dead-letter store
 * and the event store, builds the person stage and the Consumer, and talks to the main thread. ClickHouse
 * may be down when the service starts: the sink connects (and migrates) in the background with backoff
 * while person processing already runs.
 */
import type { MessagePort } from 'node:worker_threads'
import { systemClock } from '../../common/clock.js'
import { lowerThreadPriority, type ThreadPolicy } from '../../common/thread-priority.js'
import { openGeoIp, type GeoIpData } from '../../geoip/index.js'
import { THREAD_STARTED } from '../../observability/logger.js'
import { CookielessIngest, CookielessState, DefinitionBackfill, DefinitionRecorder, PersonsStage } from '../../persons/index.js'
import { ProjectDirectory } from '../../management/project-directory.js'
import { DeadLetters } from '../../storage/dead-letters.js'
import { migrateClickHouse, type ClickHouseOptions } from '../../storage/events/clickhouse-schema.js'
import { ThreadedSink, type SinkSpec } from '../../storage/events/sink-thread.js'
import { SqliteEventScan } from '../../storage/events/scan.js'
import { ClickHouseEventScan } from '../../storage/events/clickhouse-scan.js'
import type { EventSink } from '../../storage/events/types.js'
import { openDatabase, syncCommitted } from '../../storage/index.js'
import { WORKER_YOUNG_MB, workerLimits } from '../../pool/index.js'
import type { Lane } from '../types.js'
import { BackfillRunner } from './backfill.js'
import { Consumer } from './consumer.js'
import { StoredCursors } from './lateness.js'
import { statsWhenChanged, type FromConsumer, type ToConsumer } from './messages.js'
import { SinkWriter } from './sink-writer.js'
import { MAX_SPAN_BYTES, MAX_SPAN_ROWS } from './spanning-insert.js'

const EVENT_SINK_URL = new URL('../../../workers/event-sink.js', import.meta.url)
/**
 * The insert thread's batches stay outside its heap (packed buffers) and it makes one row's strings at a time
 * (ClickHouse: one chunk of RowBinary, at most 64 rows), so its live set is a few MB; the limit is headroom, far below
 * the default (a share of the machine's memory).
 */
const EVENT_SINK_HEAP_MB = 256

export interface ConsumerWorkerData {
  spoolDir: string
  personsPath: string
  /** Read for each project's cookieless mode and timezone (a read-only connection). */
  managementPath: string
  eventsPath: string
  deadLettersPath: string
  clickhouse: ClickHouseOptions | null
  geoipPath: string | null
  /** Where the main thread's copy of the GeoIP database (shared memory) arrives, once; null: read it here. */
  geoipPort: MessagePort
  activeSegments: Record<Lane, number>
  durable: Record<Lane, number>
  batchRows: number
  flushIntervalMs: number
  retryMaxMs: number
  /** ClickHouse: longest span of batches one INSERT takes while the consumer is behind; 0 = one per batch. */
  insertSpanMs: number
  /** ClickHouse: shortest span of batches one INSERT takes while the consumer keeps up; 0 = one per batch. */
  insertMinSpanMs: number
  /** Scheduling of this thread and of the insert thread it starts (which puts itself under it). */
  policy: ThreadPolicy
  /** Niceness under the `other` policy (0 = unchanged). */
  nice: number
  /** StoredCursors' shared memory: this thread's sink checkpoints, which the main thread's ingestion lag compares against. */
  storedCursors: SharedArrayBuffer
}

export async function runConsumerThread(port: MessagePort, data: ConsumerWorkerData): Promise<void> {
  const send = (message: FromConsumer) => port.postMessage(message)
  const log = (level: 'info' | 'warn' | 'error', msg: string, fields?: Record<string, unknown>) => send({ type: 'log', level, msg, fields })
  // The insert thread lowers itself in the same way when it starts (workers/event-sink.ts).
  const lowered = lowerThreadPriority(data.policy, data.nice)
  if (lowered !== (data.policy === 'idle' ? 'idle' : data.nice > 0 ? 'nice' : null)) {
    log('info', 'ingestion thread priority not fully applied (not Linux, chrt missing, or not allowed)', { policy: data.policy, nice: data.nice, applied: lowered })
  }
  const personsDb = openDatabase(data.personsPath)
  const deadLetters = new DeadLetters(data.deadLettersPath)
  const geoipData = await new Promise<GeoIpData | null>((resolve) => data.geoipPort.once('message', resolve))
  data.geoipPort.close()
  const geoip = await openGeoIp({ mmdbPath: data.geoipPath, data: geoipData }).catch((error: unknown) => {
    log('warn', 'GeoIP database unavailable; events are stored without $geoip_* properties', { error: String(error) })
    return null
  })

  const threadedSink = (spec: SinkSpec): ThreadedSink => {
    const threaded = new ThreadedSink({
      spec,
      entry: EVENT_SINK_URL,
      resourceLimits: workerLimits(EVENT_SINK_HEAP_MB, WORKER_YOUNG_MB),
      scheduling: { policy: data.policy, nice: data.nice },
      onThreadStart: (threadId) => log('info', THREAD_STARTED, { thread: 'insert', threadId }),
    })
    // The thread starts and opens the store now, not at the first insert, whose rows would wait for it (the
    // first event after a start was visible after ≈460 ms here, the next ones after ≈110 ms).
    void threaded.ping()
    return threaded
  }
  let sink: ThreadedSink | null = data.clickhouse ? null : threadedSink({ kind: 'sqlite', file: data.eventsPath })
  let stopping = false
  let abandon = false
  let consumer: Consumer | null = null
  const sinkWriter = new SinkWriter({
    sink: () => sink,
    retryMaxMs: data.retryMaxMs,
    deadLetter: (entries) => {
      deadLetters.add(entries)
      if (consumer) consumer.stats.deadLettered += entries.length
    },
    onFailure: (error) => {
      if (!consumer) return
      if (consumer.stats.sinkUp) log('error', 'event store write failed; retrying with backoff', { error: error.message })
      consumer.stats.sinkUp = false
      consumer.stats.sinkErrors++
      consumer.stats.lastError = error.message
    },
    onSuccess: () => {
      if (consumer && !consumer.stats.sinkUp) log('info', 'event store writes recovered')
      if (consumer) {
        consumer.stats.sinkUp = true
        consumer.stats.lastError = null
      }
    },
    abandoned: () => abandon,
  })
  const stage = new PersonsStage(personsDb, { geoip, clock: systemClock })
  const managementDb = openDatabase(data.managementPath, { readonly: true })
  const projects = new ProjectDirectory(managementDb)
  const cookieless = new CookielessIngest(new CookielessState(personsDb), (teamId) => projects.current(teamId))
  const storedCursors = new StoredCursors(data.storedCursors)
  // The SQLite files the consumer syncs before deleting spool segments. On ClickHouse the events' durability
  // is ClickHouse's own (its settings decide whether a part is synced).
  const storeFiles = [data.personsPath, data.deadLettersPath, ...(data.clickhouse ? [] : [data.eventsPath])]
  // The definitions of events stored before they were recorded: read from the store once it is migrated.
  const scan = data.clickhouse ? new ClickHouseEventScan(data.clickhouse) : new SqliteEventScan(data.eventsPath)
  const backfill = new BackfillRunner({
    backfill: new DefinitionBackfill(personsDb),
    scan: () => (sink ? scan : null),
    clock: systemClock,
    log,
    wake: () => consumer?.wake(),
  })
  consumer = new Consumer({
    spoolDir: data.spoolDir,
    personsDb,
    stage,
    definitions: new DefinitionRecorder(personsDb),
    cookieless,
    backfill,
    sinkWriter,
    deadLetter: (entries) => deadLetters.add(entries),
    writeDirect: async (rows) => {
      if (!sink) throw new Error('the event store is not connected')
      await sink.write(rows)
    },
    activeSegments: data.activeSegments,
    batchRows: data.batchRows,
    flushIntervalMs: data.flushIntervalMs,
    stream:
      data.clickhouse && data.insertSpanMs > 0
        ? {
            spanMs: data.insertSpanMs,
            minSpanMs: data.insertMinSpanMs,
            maxRows: MAX_SPAN_ROWS,
            maxBytes: MAX_SPAN_BYTES,
            ready: () => sink !== null,
            append: (rows) => sink!.appendPacked(rows),
            commit: (rows) => sink!.commit(rows),
          }
        : null,
    clock: systemClock,
    log,
    onFreed: (bytes) => send({ type: 'freed', bytes }),
    syncStores: () => {
      for (const file of storeFiles) syncCommitted(file)
    },
    onStoredAt: (lane, at) => storedCursors.set(lane, at),
  })
  for (const [lane, offset] of Object.entries(data.durable) as Array<[Lane, number]>) {
    if (offset > 0) consumer.durable(lane, data.activeSegments[lane], offset)
  }

  if (data.clickhouse) {
    const options = data.clickhouse
    consumer.stats.sinkUp = false
    void (async () => {
      let delay = 200
      while (!stopping && !sink) {
        try {
          const features = await migrateClickHouse(options)
          sink = threadedSink({ kind: 'clickhouse', options, features })
          consumer!.stats.sinkUp = true
          log('info', 'connected to ClickHouse', { version: features.version, dateTime64: features.dateTime64 })
        } catch (error) {
          consumer!.stats.lastError = String(error)
          await new Promise((resolve) => setTimeout(resolve, delay))
          delay = Math.min(delay * 2, data.retryMaxMs)
        }
      }
    })()
  }

  port.on('message', (message: ToConsumer) => {
    if (message.type === 'durable') consumer!.durable(message.lane, message.segment, message.offset)
    else if (message.type === 'stop') {
      stopping = true
      consumer!.stop()
    } else if (message.type === 'abandon') {
      abandon = true
    }
  })
  const sendStats = statsWhenChanged((stats) => send({ type: 'stats', stats }))
  const statsTimer = setInterval(() => sendStats(consumer!.refreshStats()), 500)
  const replayTimer = setInterval(() => {
    void consumer!.replayDeadLetters(deadLetters).catch((error: unknown) => log('error', 'dead-letter replay failed', { error: String(error) }))
  }, 1000)
  // Each batch makes and expires cookieless salts first; this deletes a day's salt on time while no events come.
  const saltTimer = setInterval(() => {
    try {
      cookieless.prepare(systemClock.now())
    } catch (error) {
      log('warn', 'cookieless salts could not be renewed; retrying in a minute', { error: String(error) })
    }
  }, 60_000)
  send({ type: 'ready' })

  await consumer.run()
  clearInterval(statsTimer)
  clearInterval(replayTimer)
  clearInterval(saltTimer)
  send({ type: 'stats', stats: consumer.refreshStats() })
  await sink?.close()
  await scan.close()
  deadLetters.close()
  managementDb.close()
  personsDb.close()
  send({ type: 'stopped' })
  port.close()
}
