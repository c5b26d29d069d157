/** The route table: every path the service answers, registered in one place. */
import type { Config } from '../config/index.js'
import type { Management } from '../management/index.js'
import type { Metrics } from '../observability/metrics.js'
import type { IngestionService } from '../ingestion/index.js'
import type { PersonReader } from '../persons/index.js'
import type { EventStore } from '../storage/events/index.js'
import type { ApiContext } from './api.js'
import type { Router } from './router.js'
import { registerCaptureRoutes } from './routes/capture.js'
import { registerCohortRoutes } from './routes/cohorts.js'
import { registerEventRoutes } from './routes/events.js'
import { registerFeatureFlagRoutes } from './routes/feature-flags.js'
import { registerHealthRoutes, type ReadinessCheck } from './routes/health.js'
import { registerPersonRoutes } from './routes/persons.js'
import { registerProjectRoutes } from './routes/projects.js'
import { registerRoleRoutes } from './routes/roles.js'
import { registerSchemaRoutes } from './routes/schema.js'

export interface AppDeps {
  config: Config
  management: Management
  metrics: Metrics
  baseUrl: () => string
  readiness: ReadinessCheck[]
  /** Reader over persons.db for the persons and groups API (absent: those routes are not served). */
  persons?: PersonReader
  ingestion?: IngestionService
  events?: EventStore
  /** Refreshes gauges right before /metrics renders. */
  beforeMetrics?: () => void
}

export function registerRoutes(router: Router, deps: AppDeps): void {
  const api: ApiContext = { management: deps.management, baseUrl: deps.baseUrl }
  const apiMax = deps.config.http.apiMaxBytes
  registerHealthRoutes(router, deps.readiness, deps.metrics.registry, deps.beforeMetrics)
  if (deps.ingestion) registerCaptureRoutes(router, deps.ingestion, deps.config.http)
  if (deps.events) registerEventRoutes(router, api, deps.events, deps.persons, apiMax)
  registerProjectRoutes(router, api, apiMax)
  registerRoleRoutes(router, api, apiMax)
  if (deps.persons) registerPersonRoutes(router, api, deps.persons, apiMax)
  registerFeatureFlagRoutes(router, api, apiMax)
  registerCohortRoutes(router, api, apiMax)
  registerSchemaRoutes(router)
}
