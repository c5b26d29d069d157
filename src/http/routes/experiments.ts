/**
 * /api/projects/:project_id/experiments/ — experiment CRUD (DELETE is a soft delete answering 204), PostHog's
 * lifecycle actions (launch, end, pause, resume, reset, archive, unarchive, ship_variant, duplicate), the
 * exposure cohort, primary and secondary results, and the flag-implementation check. The operation
 * table below is both what gets registered and what /api/schema/ publishes. Routes are registered even
 * without an event store (results then answer 503), so the document always matches the router.
 */
import { systemClock } from '../../common/clock.js'
import { pageEnvelope, parsePage } from '../../common/pagination.js'
import { drfBoolean, Experiments, StatsRunner, type CacheOutcome, type CohortMembers, type QueryCacheLimits, type StatsOffload, type StatsOutcome } from '../../experiments/index.js'
import {
  experimentArchiveSchema,
  experimentCreateSchema,
  experimentDuplicateSchema,
  experimentEndSchema,
  experimentShipVariantSchema,
  experimentPageSchema,
  experimentResultsSchema,
  experimentSchema,
  experimentsRequiringFlagSchema,
  experimentUpdateSchema,
  experimentWithCohortSchema,
} from '../../schemas/experiment.js'
import { isPlainObject } from '../../common/json.js'
import { requireScope } from '../../management/index.js'
import { compileSerializer } from '../../schemas/index.js'
import { PAGE_QUERY, type OperationDoc, type QueryParamDoc } from '../../schemas/openapi.js'
import type { EventStore } from '../../storage/events/index.js'
import type { PersonReader } from '../../persons/index.js'
import { answer, intParam, noContent, projectRoute, type ApiContext, type ApiResult, type ProjectApiRequest } from '../api.js'
import type { Router } from '../router.js'
import { registerQueryRoutes } from './query.js'

const EXPERIMENTS = '/api/projects/:project_id/experiments'
const TAG = 'experiments'

const LIST_QUERY: readonly QueryParamDoc[] = [
  ...PAGE_QUERY,
  {
    name: 'status',
    description: 'Drafts, running (flag on), paused (flag off), or stopped experiments; `complete` is `stopped`, `all` (or anything else) filters nothing.',
    schema: { type: 'string', enum: ['draft', 'running', 'paused', 'stopped', 'complete', 'all'] },
  },
  { name: 'archived', description: '`true`: only archived experiments; otherwise only experiments that are not archived.', schema: { type: 'string' } },
  { name: 'search', description: 'Case-insensitive match on the name.', schema: { type: 'string' } },
  { name: 'created_by_id', description: 'Creator ids: one, comma-separated, or a JSON list; what is not an id is skipped.', schema: { type: 'string' } },
  { name: 'feature_flag_id', description: 'Only experiments linked to this flag.', schema: { type: 'integer' } },
  { name: 'event', description: 'Only experiments with a metric (primary or secondary) on this event.', schema: { type: 'string' } },
  {
    name: 'order',
    description: 'One of `created_at`, `updated_at`, `name`, `start_date`, `end_date`, `duration`, `status`, `created_by`; `-` for descending (default `-created_at`).',
    schema: { type: 'string' },
  },
]

/** A POST action on one experiment (PostHog's `@action(detail=True)`), answering the experiment. */
function lifecycleOperation<A extends string, E extends Partial<OperationDoc> = Record<never, never>>(action: A, summary: string, extra?: E) {
  return {
    operationId: `experiments_${action}` as const,
    method: 'post' as const,
    path: `${EXPERIMENTS}/:id/${action}/` as const,
    summary,
    tag: TAG,
    scope: 'experiment:write' as const,
    responses: { 200: 'Experiment', 400: 'Error' },
    ...(extra as E),
  }
}

export const EXPERIMENT_OPERATIONS = [
  { operationId: 'experiments_list', method: 'get', path: `${EXPERIMENTS}/`, summary: 'List experiments (not deleted), newest first.', tag: TAG, scope: 'experiment:read', query: LIST_QUERY, responses: { 200: 'PaginatedExperimentList' } },
  { operationId: 'experiments_create', method: 'post', path: `${EXPERIMENTS}/`, summary: 'Create an experiment, linking an eligible flag with `feature_flag_key` or creating one.', tag: TAG, scope: 'experiment:write', requestBody: 'ExperimentCreate', responses: { 201: 'Experiment' } },
  { operationId: 'experiments_requires_flag_implementation', method: 'get', path: `${EXPERIMENTS}/requires_flag_implementation/`, summary: 'Running experiments whose flag no `$feature_flag_called` event has named yet.', tag: TAG, scope: 'experiment:read', responses: { 200: 'ExperimentsRequiringFlagImplementation' } },
  { operationId: 'experiments_retrieve', method: 'get', path: `${EXPERIMENTS}/:id/`, summary: 'An experiment.', tag: TAG, scope: 'experiment:read', responses: { 200: 'Experiment' } },
  { operationId: 'experiments_partial_update', method: 'patch', path: `${EXPERIMENTS}/:id/`, summary: 'Change an experiment: a `start_date` launches a draft (activates its flag), an `end_date` ends it.', tag: TAG, scope: 'experiment:write', requestBody: 'ExperimentUpdate', responses: { 200: 'Experiment' } },
  { operationId: 'experiments_destroy', method: 'delete', path: `${EXPERIMENTS}/:id/`, summary: 'Soft-delete an experiment (its flag stays).', tag: TAG, scope: 'experiment:write', responses: { 204: null } },
  { operationId: 'experiments_create_exposure_cohort_for_experiment', method: 'post', path: `${EXPERIMENTS}/:id/create_exposure_cohort_for_experiment/`, summary: 'Make a static cohort of the persons exposed since launch; answers the experiment with the new `cohort`.', tag: TAG, scope: 'experiment:write', responses: { 200: 'ExperimentWithExposureCohort', 400: 'Error' } },
  { operationId: 'experiments_results', method: 'get', path: `${EXPERIMENTS}/:id/results/`, summary: 'Results of the primary metric (`filters`).', tag: TAG, scope: 'experiment:read', responses: { 200: 'ExperimentResults', 400: 'Error' } },
  lifecycleOperation('launch', 'Launch a draft now: its flag (live, with a control variant) is switched on.'),
  lifecycleOperation('end', 'End a running experiment now; the flag keeps serving its variants.', { requestBody: 'ExperimentEnd' }),
  lifecycleOperation('pause', 'Switch the flag of a running experiment off (status `paused`).'),
  lifecycleOperation('resume', 'Switch the flag of a paused experiment back on.'),
  lifecycleOperation('reset', 'Back to draft: no dates, not archived; the flag is left as it is.'),
  lifecycleOperation('archive', 'Archive an ended experiment; `disable_feature_flag` also switches its flag off (needs `feature_flag:write`).', {
    requestBody: 'ExperimentArchive',
  }),
  lifecycleOperation('unarchive', 'Unarchive an archived experiment.'),
  lifecycleOperation('ship_variant', 'Roll one variant out to 100% of the split and end the experiment if it is running.', {
    requestBody: 'ExperimentShipVariant',
  }),
  lifecycleOperation('duplicate', 'Copy into a new draft (sharing the flag unless `feature_flag_key` names another).', {
    requestBody: 'ExperimentDuplicate',
    responses: { 201: 'Experiment', 400: 'Error' },
  }),
  {
    operationId: 'experiments_secondary_results',
    method: 'get',
    path: `${EXPERIMENTS}/:id/secondary_results/`,
    summary: 'Results of the secondary metrics: one with `id`, all of them (a list) without.',
    tag: TAG,
    scope: 'experiment:read',
    query: [{ name: 'id', description: 'Index of the secondary metric.', schema: { type: 'integer', minimum: 0 } }],
    responses: { 200: 'ExperimentResults' },
  },
] as const satisfies readonly OperationDoc[]

export const EXPERIMENT_COMPONENTS = {
  Experiment: experimentSchema,
  ExperimentCreate: experimentCreateSchema,
  ExperimentUpdate: experimentUpdateSchema,
  PaginatedExperimentList: experimentPageSchema,
  ExperimentWithExposureCohort: experimentWithCohortSchema,
  ExperimentResults: experimentResultsSchema,
  ExperimentsRequiringFlagImplementation: experimentsRequiringFlagSchema,
  ExperimentEnd: experimentEndSchema,
  ExperimentShipVariant: experimentShipVariantSchema,
  ExperimentArchive: experimentArchiveSchema,
  ExperimentDuplicate: experimentDuplicateSchema,
}

type OperationId = (typeof EXPERIMENT_OPERATIONS)[number]['operationId']

export interface ExperimentRouteDeps {
  events?: EventStore
  /** The worker pool; results with three or more variants are computed there. */
  pool?: { run<T>(name: string, task: unknown): Promise<T> } | null
  /** Writes exposure cohort members into persons.db. */
  staticCohorts?: CohortMembers
  /** The event definitions metrics are checked against. */
  persons?: PersonReader
  /** The bounds of the query API's answer cache. */
  config: { queryCache: QueryCacheLimits }
  /** Counts the query cache's outcomes. */
  metrics?: { queryCache: { inc(labels: { outcome: CacheOutcome }): void } }
}

export function registerExperimentRoutes(router: Router, api: ApiContext, deps: ExperimentRouteDeps, maxBodyBytes: number): void {
  const m = api.management
  const pool = deps.pool ?? null
  const offload: StatsOffload | null = pool ? (task) => pool.run<StatsOutcome>('experimentStats', task) : null
  const experiments = new Experiments({
    db: m.db,
    clock: systemClock,
    accounts: m.accounts,
    featureFlags: m.featureFlags,
    cohorts: m.cohorts,
    activity: m.activity,
    events: deps.events ?? null,
    stats: new StatsRunner(offload),
    cohortMembers: deps.staticCohorts ?? null,
    knownEvents: deps.persons ? (projectId, names) => deps.persons!.definitions.eventNamesSeen(projectId, names) : null,
    actions: m.actions,
  })
  const json = {
    experiment: compileSerializer(experimentSchema),
    page: compileSerializer(experimentPageSchema),
    withCohort: compileSerializer(experimentWithCohortSchema),
    requiringFlag: compileSerializer(experimentsRequiringFlagSchema),
  }
  const actions = experiments.actions
  const userId = (req: ProjectApiRequest) => req.principal.user.id
  const id = (req: ProjectApiRequest) => intParam(req.params.id)

  const handlers: Record<OperationId, (req: ProjectApiRequest) => ApiResult | Promise<ApiResult>> = {
    experiments_list: (req) => {
      const page = parsePage(req.query)
      const { count, results } = experiments.list(req.project, req.query, page)
      return answer(200, json.page(pageEnvelope(req.baseUrl, req.ctx.path, req.query, page, count, results)))
    },
    experiments_create: (req) => answer(201, json.experiment(experiments.create(req.project, req.body, userId(req)))),
    experiments_requires_flag_implementation: async (req) =>
      answer(200, json.requiringFlag({ result: await experiments.requiringFlagImplementation(req.project) })),
    experiments_retrieve: (req) => answer(200, json.experiment(experiments.get(req.project, id(req)))),
    experiments_partial_update: (req) => answer(200, json.experiment(experiments.update(req.project, id(req), req.body, userId(req)))),
    experiments_destroy: (req) => {
      experiments.delete(req.project, id(req), userId(req))
      return noContent()
    },
    experiments_create_exposure_cohort_for_experiment: async (req) => {
      const { experiment, cohort } = await experiments.createExposureCohort(req.project, id(req), userId(req))
      return answer(200, json.withCohort({ ...experiment, cohort }))
    },
    experiments_launch: (req) => answer(200, json.experiment(actions.launch(req.project, id(req), userId(req)))),
    experiments_end: (req) => answer(200, json.experiment(actions.end(req.project, id(req), req.body, userId(req)))),
    experiments_pause: (req) => answer(200, json.experiment(actions.setPaused(req.project, id(req), true, userId(req)))),
    experiments_resume: (req) => answer(200, json.experiment(actions.setPaused(req.project, id(req), false, userId(req)))),
    experiments_reset: (req) => answer(200, json.experiment(actions.reset(req.project, id(req), userId(req)))),
    experiments_archive: (req) => {
      // As PostHog, switching the flag off is a flag write: the key needs feature_flag:write as well.
      const body = req.body as { disable_feature_flag?: unknown } | null
      if (isPlainObject(body) && drfBoolean(body.disable_feature_flag, 'disable_feature_flag')) requireScope(req.principal, 'feature_flag:write')
      return answer(200, json.experiment(actions.archive(req.project, id(req), req.body, userId(req))))
    },
    experiments_unarchive: (req) => answer(200, json.experiment(actions.unarchive(req.project, id(req), userId(req)))),
    experiments_ship_variant: (req) => answer(200, json.experiment(actions.shipVariant(req.project, id(req), req.body, userId(req)))),
    experiments_duplicate: (req) => answer(201, json.experiment(actions.duplicate(req.project, id(req), req.body, userId(req)))),
    experiments_results: async (req) => answer(200, await experiments.results(req.project, id(req))),
    experiments_secondary_results: async (req) => answer(200, await experiments.secondaryResults(req.project, id(req), req.query.get('id'))),
  }

  for (const op of EXPERIMENT_OPERATIONS) {
    router.add(op.method, op.path, projectRoute(api, { scope: op.scope }, handlers[op.operationId]), { maxBodyBytes })
  }
  // The new engine's results (`POST …/query/`) read the same experiments.
  const queryCounter = deps.metrics?.queryCache
  const count = queryCounter ? (outcome: CacheOutcome) => queryCounter.inc({ outcome }) : undefined
  const persons = deps.persons?.scans.listing ?? null
  if (deps.events) registerQueryRoutes(router, api, { events: deps.events, experiments, persons }, deps.config.queryCache, maxBodyBytes, count)
}
