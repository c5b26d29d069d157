/** The route table: every path the service answers, registered in one place. */
import type { Config } from '../config/index.js'
import type { Management } from '../management/index.js'
import type { Metrics } from '../observability/metrics.js'
import type { CookielessFlagIds } from '../flags/cookieless.js'
import type { FlagEvaluator } from '../flags/evaluator.js'
import type { IngestionService } from '../ingestion/index.js'
import type { ProjectResolver } from '../management/index.js'
import type { PersonReader } from '../persons/index.js'
import type { EventStore } from '../storage/events/index.js'
import type { LogService } from '../logs/index.js'
import type { MetricService } from '../metrics/index.js'
import type { WorkerPool } from '../pool/index.js'
import type { StaticCohortWriter } from '../persons/index.js'
import type { ApiContext } from './api.js'
import type { Router } from './router.js'
import { registerActionRoutes } from './routes/actions.js'
import { registerAnnotationRoutes } from './routes/annotations.js'
import { registerCaptureRoutes } from './routes/capture.js'
import { registerCohortPersonRoutes } from './routes/cohort-persons.js'
import { registerCohortRoutes } from './routes/cohorts.js'
import { registerEarlyAccessFeatureRoutes } from './routes/early-access-features.js'
import { registerDashboardRoutes } from './routes/dashboards.js'
import { registerDecideRoutes } from './routes/decide.js'
import { registerDefinitionRoutes } from './routes/definitions.js'
import { registerEventRoutes } from './routes/events.js'
import { registerExportRoutes } from './routes/exports.js'
import { registerEnvironmentAliases } from './routes/environments.js'
import { registerExperimentHoldoutRoutes } from './routes/experiment-holdouts.js'
import { registerExperimentRoutes } from './routes/experiments.js'
import { registerSavedMetricRoutes } from './routes/experiment-saved-metrics.js'
import { registerFlagEvaluationRoutes } from './routes/flag-evaluation.js'
import { registerGroupRoutes } from './routes/groups.js'
import { registerLogRoutes } from './routes/logs.js'
import { registerMetricRoutes } from './routes/metrics.js'
import { registerFeatureFlagRoutes } from './routes/feature-flags.js'
import { registerHealthRoutes, type ReadinessCheck } from './routes/health.js'
import { registerPersonRoutes } from './routes/persons.js'
import { registerOrganizationRoutes } from './routes/organizations.js'
import { registerProjectRoutes } from './routes/projects.js'
import { registerPublicListRoutes } from './routes/public-lists.js'
import { registerRemoteConfigRoutes } from './routes/remote-config.js'
import { registerRoleRoutes } from './routes/roles.js'
import { registerScheduledChangeRoutes } from './routes/scheduled-changes.js'
import { registerSchemaRoutes } from './routes/schema.js'
import { registerStaticAssetRoutes } from './routes/static-assets.js'
import { registerUserRoutes } from './routes/users.js'

export interface AppDeps {
  config: Config
  management: Management
  metrics: Metrics
  baseUrl: () => string
  readiness: ReadinessCheck[]
  /** Reader over persons.db for the persons and groups API (absent: those routes are not served). */
  persons?: PersonReader
  ingestion?: IngestionService
  flags?: FlagEvaluator
  /** The ids /flags evaluates a cookieless browser for (absent: `$posthog_cookieless` is evaluated as it is). */
  cookielessIds?: CookielessFlagIds
  resolveProject?: ProjectResolver
  events?: EventStore
  /** Where /i/v1/logs keeps OTLP logs and the logs API reads them (absent: neither is served). */
  logs?: LogService
  /** Where /i/v1/metrics keeps OTLP metrics and the metrics API reads them (absent: neither is served). */
  metricStore?: MetricService
  /** The worker pool (experiment statistics with three or more variants run there). */
  pool?: WorkerPool | null
  /** Writes static cohort members (experiment exposure cohorts) to persons.db. */
  staticCohorts?: StaticCohortWriter
  /** Refreshes gauges right before /metrics renders. */
  beforeMetrics?: () => void
}

export function registerRoutes(router: Router, deps: AppDeps): void {
  const api: ApiContext = { management: deps.management, baseUrl: deps.baseUrl }
  const apiMax = deps.config.http.apiMaxBytes
  registerHealthRoutes(router, deps.readiness, deps.metrics.registry, deps.beforeMetrics)
  if (deps.ingestion) registerCaptureRoutes(router, deps.ingestion, deps.config.http)
  if (deps.flags && deps.resolveProject) registerDecideRoutes(router, deps.flags, deps.resolveProject, deps.config.http.decideMaxBytes, deps.cookielessIds)
  if (deps.flags && deps.persons && deps.staticCohorts) {
    registerFlagEvaluationRoutes(router, api, { evaluator: deps.flags, audience: deps.persons, staticCohorts: deps.staticCohorts, now: Date.now }, apiMax)
  }
  if (deps.flags) registerRemoteConfigRoutes(router, api, deps.flags)
  registerPublicListRoutes(router, api)
  registerStaticAssetRoutes(router)
  if (deps.events) registerEventRoutes(router, api, deps.events, deps.persons, apiMax)
  if (deps.events) registerDashboardRoutes(router, api, deps.events, apiMax)
  registerProjectRoutes(router, api, deps.persons, apiMax)
  registerOrganizationRoutes(router, api, deps.persons, apiMax)
  registerUserRoutes(router, api, deps.persons, apiMax)
  registerRoleRoutes(router, api, apiMax)
  if (deps.persons) registerPersonRoutes(router, api, deps.persons, deps.ingestion ?? null, deps.events ?? null, apiMax)
  if (deps.persons) registerGroupRoutes(router, api, deps.persons, deps.events, deps.ingestion ?? null, apiMax)
  if (deps.persons) registerDefinitionRoutes(router, api, deps.persons, apiMax)
  registerFeatureFlagRoutes(router, api, apiMax)
  registerCohortRoutes(router, api, apiMax, deps.staticCohorts ?? null)
  if (deps.persons) registerCohortPersonRoutes(router, api, deps.persons, deps.staticCohorts ?? null, deps.events ?? null, apiMax)
  registerEarlyAccessFeatureRoutes(router, api, apiMax)
  registerScheduledChangeRoutes(router, api, apiMax)
  registerAnnotationRoutes(router, api, apiMax)
  registerExportRoutes(router, api, apiMax, deps.events ?? null, deps.persons?.scans.listing ?? null)
  registerActionRoutes(router, api, apiMax)
  registerExperimentRoutes(router, api, deps, apiMax)
  registerExperimentHoldoutRoutes(router, api, apiMax)
  registerSavedMetricRoutes(router, api, apiMax)
  if (deps.logs && deps.resolveProject) registerLogRoutes(router, api, { store: deps.logs, resolveProject: deps.resolveProject, maxBytes: deps.config.http.batchMaxBytes }, apiMax)
  if (deps.metricStore && deps.resolveProject) registerMetricRoutes(router, api, { store: deps.metricStore, resolveProject: deps.resolveProject, maxBytes: deps.config.http.batchMaxBytes }, apiMax)
  registerEnvironmentAliases(router)
  registerSchemaRoutes(router)
}
