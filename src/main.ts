/**
 * Composition root: builds everything in order (config → observability → storage → domain → http),
 * starts listening, and tears down in reverse on SIGTERM/SIGINT. Nothing imports this file but the CLI.
 */
import { systemClock } from './common/clock.js'
import { clickhouseConnection, siteUrl, type Config } from './config/index.js'
import { Admission } from './http/admission.js'
import { registerRoutes } from './http/app.js'
import { Router } from './http/router.js'
import { HttpServer } from './http/server.js'
import { startIngestion } from './ingestion/index.js'
import { CohortCalculator, ManagementFlagSource, ScheduledChangeApplier, bootstrap, cohortCount, performedReader, createManagement, createProjectResolver, type BootstrapResult } from './management/index.js'
import { createLogger, logThreadStart, type Logger } from './observability/logger.js'
import { createMetrics } from './observability/metrics.js'
import { CookielessFlagIds } from './flags/cookieless.js'
import { FlagEvaluator } from './flags/evaluator.js'
import { ProjectFlagCache } from './flags/project-cache.js'
import type { EvaluationResponse } from './flags/types.js'
import { openGeoIp } from './geoip/index.js'
import { openLogStore } from './logs/index.js'
import { openMetricStore } from './metrics/index.js'
import { CookielessState, HashKeyOverrideWriter, PersonReader, StaticCohortWriter, personScanThread } from './persons/index.js'
import { WorkerPool } from './pool/index.js'
import { openEventStore, type PropertyNode } from './storage/events/index.js'
import { openDatabase, openManagementDb, prepareDataDir } from './storage/index.js'

export interface Service {
  readonly port: number
  readonly baseUrl: string
  /** Graceful stop: refuse new connections, drain requests, flush, close stores. Idempotent. */
  stop(reason?: string): Promise<void>
}

export interface StartOptions {
  logger?: Logger
  /** Where the first-run banner goes (stderr by default). */
  banner?: (text: string) => void
}

export async function startService(config: Config, options: StartOptions = {}): Promise<Service> {
  const logger = options.logger ?? createLogger(config.logLevel)
  const metrics = createMetrics()
  const paths = prepareDataDir(config.dataDir)
  const managementDb = openManagementDb(paths)
  const management = createManagement(managementDb, systemClock)
  const personsDb = openDatabase(paths.persons, { readonly: true })

  const firstRun: BootstrapResult | null =
    management.accounts.projects().length === 0 ? bootstrap(management.accounts, management.keys, { createKey: true }) : null
  if (firstRun) management.projects.reload()

  const pool =
    config.pool.size > 0
      ? new WorkerPool({
          size: config.pool.size,
          maxQueue: config.pool.maxQueue,
          workerData: { dataDir: config.dataDir },
          onThreadStart: logThreadStart(logger, 'pool'),
        })
      : null
  const resolveProject = createProjectResolver(management.projects, management.keys, management.accounts)
  const ingestion = startIngestion({ config, paths, logger, metrics, clock: systemClock, pool, resolveProject })
  const clickhouse = clickhouseConnection(config)
  const events = openEventStore({ sqlitePath: paths.events, clickhouse, onThreadStart: logThreadStart(logger, 'query'), readThreadNice: config.readThreadNice })
  const logs = openLogStore({ sqlitePath: paths.logs, clickhouse, onThreadStart: logThreadStart(logger, 'logs') })
  const metricStore = openMetricStore({ sqlitePath: paths.metrics, clickhouse, onThreadStart: logThreadStart(logger, 'metrics') })
  // The persons API's lists, searches and counts scan persons.db: a thread of their own, as the events API's reads.
  const personScans = personScanThread({ file: paths.persons, onThreadStart: logThreadStart(logger, 'person-query'), nice: config.readThreadNice })
  const personReader = new PersonReader(personsDb, personScans)
  const personsWriteDb = openDatabase(paths.persons)
  const geoip = await openGeoIp({ mmdbPath: config.geoip.mmdbPath }).catch((error: unknown) => {
    logger.warn({ err: error }, 'GeoIP database unavailable; flags get no $geoip_* properties')
    return null
  })
  const flags = new FlagEvaluator({
    cache: new ProjectFlagCache(new ManagementFlagSource(managementDb, management), personReader),
    persons: personReader,
    hashKeys: new HashKeyOverrideWriter(personsWriteDb),
    geoip,
    now: () => systemClock.now(),
    offload: pool ? (teamId, revision, scope, input) => pool.run<EvaluationResponse>('evaluateFlags', { teamId, revision, scope, input }) : null,
    inlineMax: config.flags.inlineMax,
  })

  let baseUrl = ''
  const admission = new Admission({
    maxInflight: config.http.maxInflight,
    maxInflightPerClient: config.http.maxInflightPerClient,
    maxBodyBytes: config.http.maxBodyMemoryBytes,
  })
  const router = new Router()
  registerRoutes(router, {
    config,
    management,
    metrics,
    baseUrl: () => baseUrl,
    persons: personReader,
    flags,
    cookielessIds: new CookielessFlagIds(new CookielessState(personsWriteDb), () => systemClock.now()),
    resolveProject,
    ingestion: ingestion.service,
    events,
    logs,
    metricStore,
    pool,
    staticCohorts: new StaticCohortWriter(personsWriteDb),
    beforeMetrics: () => {
      const stats = ingestion.consumer.stats
      metrics.queueDepth.set({ queue: 'spool_bytes' }, ingestion.spool.usedBytes)
      metrics.queueDepth.set({ queue: 'pool_tasks' }, pool?.queued ?? 0)
      metrics.queueDepth.set({ queue: 'http_inflight' }, admission.inflight)
      metrics.queueDepth.set({ queue: 'http_body_bytes' }, admission.bodyBytes)
      metrics.eventLoopActive.set(performance.eventLoopUtilization().active / 1000)
      metrics.ingestionLag.set(ingestion.consumer.lagSeconds())
      if (stats) {
        metrics.queueDepth.set({ queue: 'sink_backlog_bytes' }, stats.backlogBytes)
        metrics.queueDepth.set({ queue: 'sink_queued_rows' }, stats.queuedRows)
        metrics.consumerTotals.set({ kind: 'stored' }, stats.stored)
        metrics.consumerTotals.set({ kind: 'persons_processed' }, stats.personsProcessed)
        metrics.consumerTotals.set({ kind: 'dead_lettered' }, stats.deadLettered)
        metrics.consumerTotals.set({ kind: 'cookieless_dropped' }, stats.cookielessDropped)
        metrics.consumerTotals.set({ kind: 'sink_errors' }, stats.sinkErrors)
        metrics.sinkUp.set(stats.sinkUp ? 1 : 0)
      }
    },
    readiness: [
      {
        name: 'management_db',
        check: async () => {
          managementDb.prepare('SELECT 1').get()
          return { ok: true }
        },
      },
      {
        name: 'spool',
        check: async () => {
          const error = ingestion.spool.lastError
          if (error) return { ok: false, detail: `spool write failed: ${error.message}` }
          if (!ingestion.spool.hasRoom(1)) return { ok: false, detail: 'spool is full' }
          return { ok: true }
        },
      },
      {
        name: 'event_store',
        check: async () => {
          const stats = ingestion.consumer.stats
          if (!ingestion.consumer.running) return { ok: false, detail: 'the ingest consumer is not running' }
          if (stats && !stats.sinkUp) return { ok: false, detail: `event store unavailable: ${stats.lastError ?? 'connecting'}` }
          return { ok: true }
        },
      },
    ],
  })

  const server = new HttpServer({ router, logger, metrics, admission, batchAnswers: config.http.batchAnswers })
  await ingestion.consumer.ready
  const port = await server.listen(config.http.host, config.http.port)
  baseUrl = siteUrl(config, port)
  // Here, on the thread that writes management.db, so applied changes take the same path as a user's PATCH.
  const applier = new ScheduledChangeApplier({ db: managementDb, clock: systemClock, accounts: management.accounts, featureFlags: management.featureFlags, changes: management.scheduledChanges, logger })
  applier.start()
  // Also here: it writes the cohorts' counts to management.db. The counts scan persons.db on its read thread.
  const countPersons = (teamId: number, condition: PropertyNode) => personReader.scans.listing.countPersons(teamId, { properties: [condition] })
  const cohortCalculator = new CohortCalculator({
    cohorts: management.cohorts,
    count: cohortCount(management.cohorts, countPersons, performedReader(events, management.actions)),
    clock: systemClock,
    logger,
  })
  cohortCalculator.start()
  if (firstRun?.created && firstRun.personal_api_key) {
    ;(options.banner ?? ((text) => process.stderr.write(text)))(firstRunBanner(baseUrl, firstRun))
  }
  logger.info({ port, host: config.http.host, dataDir: config.dataDir, eventStore: config.clickhouse.url ? 'clickhouse' : 'sqlite' }, 'listening')

  let stopping: Promise<void> | null = null
  const stop = (reason = 'stop'): Promise<void> => {
    stopping ??= (async () => {
      logger.info({ reason, inflight: server.inflight }, 'shutting down')
      server.stopAccepting()
      applier.stop()
      // Before the read threads and databases close: a count under way ends first.
      await cohortCalculator.stop()
      const drained = await server.drain(config.shutdownTimeoutMs)
      if (!drained) logger.warn({ inflight: server.inflight }, 'shutdown timeout: requests still in flight')
      await ingestion.stop(config.shutdownTimeoutMs)
      await pool?.close()
      await events.close()
      await logs.close()
      await metricStore.close()
      await personScans.close()
      managementDb.close()
      personsDb.close()
      personsWriteDb.close()
      logger.info('stopped')
      logger.flush()
    })()
    return stopping
  }
  return { port, baseUrl, stop }
}

function firstRunBanner(baseUrl: string, boot: BootstrapResult): string {
  const key = boot.personal_api_key ?? ''
  return [
    '',
    '┌─ skylark first run ─────────────────────────────────────────────────────',
    `│ Serving on        ${baseUrl}`,
    `│ Project id        ${boot.project_id}`,
    `│ Project API key   ${boot.project_api_key}   (public: put it in your SDKs)`,
    `│ Personal API key  ${key}   (secret: shown only now)`,
    `│ Secret API key    ${boot.project_secret_api_key}   (server SDKs' secretKey for local evaluation)`,
    '│',
    '│ Capture an event:',
    `│   curl -X POST ${baseUrl}/capture/ -H 'Content-Type: application/json' \\`,
    `│     -d '{"api_key":"${boot.project_api_key}","event":"hello","distinct_id":"user-1"}'`,
    '│ List feature flags:',
    `│   curl -H 'Authorization: Bearer ${key}' ${baseUrl}/api/projects/${boot.project_id}/feature_flags/`,
    '└──────────────────────────────────────────────────────────────────────────',
    '',
  ].join('\n')
}

/** Runs the service until a signal; a second signal exits at once. */
export async function runUntilSignalled(config: Config): Promise<void> {
  const logger = createLogger(config.logLevel)
  const service = await startService(config, { logger })
  let signalled = false
  const onSignal = (signal: NodeJS.Signals) => {
    if (signalled) process.exit(130)
    signalled = true
    service.stop(signal).then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error({ err: error }, 'error during shutdown')
        process.exit(1)
      },
    )
  }
  process.on('SIGTERM', onSignal)
  process.on('SIGINT', onSignal)
}
