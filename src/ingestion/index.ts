/**
 * Ingestion: capture parsing (core, also run by pool workers), the durable spool, spike detection and
 * the consumer thread that feeds persons and the event store. `startIngestion` wires them for main.ts.
 * Imports: common, config, schemas, storage, observability, persons, geoip, management (project keys), pool.
 */
import type { Clock } from '../common/clock.js'
import { clickhouseConnection, type Config } from '../config/index.js'
import type { ProjectResolver } from '../management/index.js'
import { logThreadStart, type Logger } from '../observability/logger.js'
import type { Metrics } from '../observability/metrics.js'
import type { WorkerPool } from '../pool/index.js'
import type { DataPaths } from '../storage/index.js'
import { ConsumerHandle } from './consumer/handle.js'
import { IngestionService } from './service.js'
import { SpikeDetector } from './spike.js'
import { DurableNotifier } from './spool/durable-notifier.js'
import { FillThread } from './spool/filler.js'
import { SpoolWriter } from './spool/writer.js'

/** Longest the consumer may learn of durable events late (spool/durable-notifier.ts). */
const DURABLE_NOTIFY_MS = 10

export { IngestionService, type CaptureRequest } from './service.js'
export type { ConsumerStats } from './consumer/messages.js'
export type { CapturedEvent, IngestionWarning, Lane } from './types.js'

export interface Ingestion {
  readonly service: IngestionService
  readonly spool: SpoolWriter
  readonly consumer: ConsumerHandle
  /** Waits for pending appends, lets the consumer store what it can in `timeoutMs`, closes the spool. */
  stop(timeoutMs: number): Promise<void>
}

export interface IngestionDeps {
  config: Config
  paths: DataPaths
  logger: Logger
  metrics: Metrics
  clock: Clock
  pool: WorkerPool | null
  resolveProject: ProjectResolver
}

/** Starts the spool and the consumer thread; `consumer.ready` settles when the thread is ready. */
export function startIngestion(deps: IngestionDeps): Ingestion {
  const { config, paths, logger } = deps
  let consumer: ConsumerHandle | null = null
  const notifier = new DurableNotifier((lane, segment, offset) => consumer?.durable(lane, segment, offset), DURABLE_NOTIFY_MS)
  const filler = new FillThread(logThreadStart(logger, 'fill'))
  const spool = new SpoolWriter({
    dir: paths.spool,
    segmentBytes: config.spool.segmentBytes,
    maxBytes: config.spool.maxBytes,
    fsyncIntervalMs: config.spool.fsyncIntervalMs,
    fill: filler.fill,
    onDurable: notifier.report,
    onError: (error) => logger.error({ err: error }, 'spool write failed; answering 503 until the disk recovers'),
  })
  consumer = ConsumerHandle.start(
    {
      spoolDir: paths.spool,
      personsPath: paths.persons,
      managementPath: paths.management,
      eventsPath: paths.events,
      deadLettersPath: paths.deadLetters,
      clickhouse: clickhouseConnection(config),
      geoipPath: config.geoip.mmdbPath,
      batchRows: config.sink.batchRows,
      flushIntervalMs: config.sink.flushIntervalMs,
      retryMaxMs: config.sink.retryMaxMs,
      insertSpanMs: config.sink.insertSpanMs,
      insertMinSpanMs: config.sink.insertMinSpanMs,
      policy: config.sink.threadPolicy,
      nice: config.sink.threadNice,
    },
    spool,
    logger,
  )
  const service = new IngestionService({
    spool,
    spike: new SpikeDetector({ burst: config.spike.burst, ratePerSec: config.spike.ratePerSec }),
    pool: deps.pool,
    resolveProject: deps.resolveProject,
    metrics: deps.metrics,
    clock: deps.clock,
  })
  const handle = consumer
  return {
    service,
    spool,
    consumer: handle,
    stop: async (timeoutMs) => {
      await spool.close()
      await filler.close()
      notifier.flush()
      await handle.stop(timeoutMs)
    },
  }
}
