/** Every route the server registers, discovered the way the server builds its table (nothing is served). */
import type { LogService } from '../../src/logs/index.js'
import type { MetricService } from '../../src/metrics/index.js'
import { systemClock } from '../../src/common/clock.js'
import { loadConfig } from '../../src/config/index.js'
import { registerRoutes } from '../../src/http/app.js'
import { Router, type Route } from '../../src/http/router.js'
import type { IngestionService } from '../../src/ingestion/index.js'
import { FlagEvaluator } from '../../src/flags/evaluator.js'
import { ProjectFlagCache } from '../../src/flags/project-cache.js'
import { ManagementFlagSource, createManagement } from '../../src/management/index.js'
import { createMetrics } from '../../src/observability/metrics.js'
import { PersonReader, StaticCohortWriter } from '../../src/persons/index.js'
import type { EventStore } from '../../src/storage/events/index.js'
import { migrate, openDatabase } from '../../src/storage/index.js'
import { MANAGEMENT_MIGRATIONS } from '../../src/storage/sqlite/migrations/management.js'
import { PERSONS_MIGRATIONS } from '../../src/storage/sqlite/migrations/persons.js'

export function registeredRoutes(): Route[] {
  const db = openDatabase(':memory:')
  migrate(db, MANAGEMENT_MIGRATIONS)
  const personsDb = openDatabase(':memory:')
  migrate(personsDb, PERSONS_MIGRATIONS)
  const persons = new PersonReader(personsDb)
  const management = createManagement(db, systemClock)
  const router = new Router()
  registerRoutes(router, {
    config: loadConfig({}),
    management,
    metrics: createMetrics(),
    baseUrl: () => '',
    readiness: [],
    persons,
    staticCohorts: new StaticCohortWriter(personsDb),
    // Registration only keeps references; nothing is called on these.
    ingestion: {} as IngestionService,
    events: {} as EventStore,
    logs: {} as LogService,
    metricStore: {} as MetricService,
    resolveProject: () => ({ id: 0, anonymizeIps: false, timezone: 'UTC', cookielessMode: 0 }),
    flags: new FlagEvaluator({
      cache: new ProjectFlagCache(new ManagementFlagSource(db, management), persons),
      persons,
      hashKeys: null,
      geoip: null,
      now: Date.now,
      offload: null,
      inlineMax: 200,
    }),
  })
  return router.routes()
}
