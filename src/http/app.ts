/** The route table: every path the service answers, registered in one place. */
import type { Config } from '../config/index.js'
import type { Management } from '../management/index.js'
import type { Metrics } from '../observability/metrics.js'
import type { ApiContext } from './api.js'
import type { Router } from './router.js'
import { registerHealthRoutes, type ReadinessCheck } from './routes/health.js'
import { registerProjectRoutes } from './routes/projects.js'
import { registerRoleRoutes } from './routes/roles.js'

export interface AppDeps {
  config: Config
  management: Management
  metrics: Metrics
  baseUrl: () => string
  readiness: ReadinessCheck[]
}

export function registerRoutes(router: Router, deps: AppDeps): void {
  const api: ApiContext = { management: deps.management, baseUrl: deps.baseUrl }
  const apiMax = deps.config.http.apiMaxBytes
  registerHealthRoutes(router, deps.readiness, deps.metrics.registry)
  registerProjectRoutes(router, api, apiMax)
  registerRoleRoutes(router, api, apiMax)
}
