/**
 * Experiments: CRUD over management.db with PostHog's rules, the linked feature flag (through the
 * FeatureFlags service), holdouts (`holdouts/`), exposure cohorts, and results computed from stored events with the statistics
 * module (`stats/`, pure). Imports: common, config, storage, observability, flags, management, schemas.
 * Persons and the worker pool are reached through interfaces the composition root fills
 * (`CohortMembers`, `StatsOffload`).
 */
export { ExperimentHoldouts, holdoutFiltersForFlag, holdoutVariant, type HoldoutObject } from './holdouts/index.js'
export { Experiments, EXPERIMENT_SCOPE, type CohortMembers, type ExperimentDeps } from './service.js'
export { parseMetric, metricInsight, DEFAULT_FUNNEL_WINDOW_MS, type Metric, type MetricStep } from './metrics.js'
export type { ExperimentRecord } from './record.js'
export type { KnownEvents } from './settings-validation.js'
export { parseExperimentListQuery, type ExperimentListFilter } from './repository.js'
export { ExperimentResults, type ResultPackage } from './results.js'
export { toExperimentObject, type ExperimentObject } from './serialize.js'
export { OFFLOAD_FROM_VARIANTS, StatsRunner, type StatsOffload } from './stats-runner.js'
export { computeStats, runStatsTask, unwrapOutcome, type StatsOutcome, type StatsResult, type StatsTask } from './stats-task.js'
export { DEFAULT_VARIANTS, drfBoolean, flagVariants, parseDateField } from './validation.js'
export { SavedMetrics, type SavedMetricObject } from './saved-metrics/service.js'
export { ExperimentQueryRunner, SERVED_QUERY_KINDS, type ExperimentSource } from './query/runner.js'
export { CachedExperimentQueries, type CacheOutcome, type QueryCacheLimits } from './query/cached-runner.js'
export { MAX_CLIENT_QUERY_ID_LENGTH, REFRESH_MODES } from './query/refresh.js'
export { cancelMessage } from './query/query-status.js'
export { hogqlCohorts, hogqlExportRows } from './query/hogql.js'
export type { PersonMatcher } from './query/person-filters.js'
