/**
 * PostHog's query endpoint, `POST /api/projects/:id/query/` (and `/api/environments/:id/query/`, scope
 * `query:read`), for the one kind skylark computes: `ExperimentQuery`, the new experiment engine's results
 * that PostHog's UI and MCP tools ask for (src/experiments/query). Any other kind is a 400 naming the kinds
 * served. Answers go through the query cache and its `refresh` modes (cached-runner.ts); asynchronous modes
 * are polled at `GET …/query/:query_id/`, answered as PostHog's `retrieve`: 202 while running, 200 when done,
 * 400 with the refusal's message, 500 for an internal failure (those two in the error envelope), and
 * cancelled at `DELETE …/query/:query_id/`, answered as PostHog's `destroy`: 200 and a message in every case.
 */
import { AppError } from '../../common/errors.js'
import type { OperationDoc } from '../../schemas/openapi.js'
import { freeFormObject, nullable } from '../../schemas/shared.js'
import {
  CachedExperimentQueries,
  cancelMessage,
  ExperimentQueryRunner,
  MAX_CLIENT_QUERY_ID_LENGTH,
  REFRESH_MODES,
  SERVED_QUERY_KINDS,
  type CacheOutcome,
  type ExperimentSource,
  type PersonMatcher,
  type QueryCacheLimits,
} from '../../experiments/index.js'
import type { EventStore } from '../../storage/events/index.js'
import { answer, definitionLookups, projectRoute, type ApiContext } from '../api.js'
import type { Router } from '../router.js'

export const QUERY_OPERATIONS = [
  {
    operationId: 'query_create',
    method: 'post',
    path: '/api/projects/:project_id/query/',
    summary:
      `Runs a query: \`{"query": {"kind": "ExperimentQuery", "experiment_id", "metric"}}\` (served kinds: ${SERVED_QUERY_KINDS.join(', ')}), answered as PostHog's ExperimentQueryResponse for mean metrics (math \`total\`, \`sum\`/\`avg\`/\`min\`/\`max\` of a property, \`unique_session\`, \`dau\`, \`unique_group\`, \`hogql\` (an outer sum, avg, min, max or count of arithmetic, comparisons and nine functions on event properties); a \`threshold\` makes it the proportion who reached it), ordered funnels, ratios and retention metrics (of the entities whose \`start_event\` followed their first exposure — the first or last per \`start_handling\`, within the conversion window —, or of every exposed entity from its first exposure with an \`ExperimentExposureNode\` start, those with another \`completion_event\` \`retention_window_start\`–\`retention_window_end\` \`retention_window_unit\`s later, days and hours the project's; PostHog's ratio statistics); with the experiment's \`stats_config.cuped.enabled\` (means and funnels) each variant's pre-exposure covariate sums (\`covariate_sum\`, \`covariate_sum_squares\`, \`covariate_sum_product\`, over \`lookback_days\` before each first exposure, 14 by default) and CUPED-adjusted statistics; a metric's \`breakdownFilter.breakdowns\` (up to 3 event properties, read at each entity's first exposure, or person properties, their persons' values now) add \`breakdown_results\`. \`{"query": {"kind": "ExperimentExposureQuery", "experiment_id"}}\` answers the exposures tab (PostHog's ExperimentExposureQueryResponse: cumulative \`timeseries\` per variant and day, \`total_exposures\`, \`sample_ratio_mismatch\`, \`bias_risk\`). ` +
      '`{"query": {"kind": "HogQLQuery", "query": "SELECT event, count() FROM events WHERE timestamp > now() - interval 7 day GROUP BY event ORDER BY count() DESC"}}` runs a SELECT over the project\'s events, answered as PostHog\'s HogQLQueryResponse (`results`, `columns`, `types`; without LIMIT 100 rows and `hasMore`): ' +
      'columns of HogQL expressions (properties.<key> and paths within them, properties whole, event, distinct_id, uuid, timestamp, the functions HogQL filters take) or one aggregation each (count, countIf, sum, avg, min, max and their -If, uniq, count(distinct …)), WHERE, GROUP BY, ORDER BY and LIMIT (at most 50,000); ' +
      'timestamps compared with texts of the project\'s zone, now(), today(), yesterday() and toDateTime(…) plus or minus intervals, toStartOfMinute/Hour/Day/Week/Month and toDate on the project\'s wall clock. Joins, subqueries, HAVING, OFFSET (PostHog refuses it to personal API keys), person properties and placeholders are a 400 naming them; HogQL answers are computed at each request. ' +
      'Answers are cached in memory for 24 hours (`is_cached`, `last_refresh`: when it was computed); `refresh` `true` or `force_blocking` computes again, ' +
      '`blocking` (the default; `false` and `force_cache` too) computes when nothing fresh is cached, and `async`, `lazy_async`, `async_except_on_cache_miss` and `force_async` ' +
      'answer 202 with a running `query_status` (polled at …/query/:query_id/; `client_query_id` names it) instead of waiting.',
    tag: 'query',
    scope: 'query:read',
    requestBody: 'QueryRequest',
    responses: { 200: 'QueryResponse', 202: 'QueryStatusResponse', 400: 'Error' },
  },
  {
    operationId: 'query_retrieve',
    method: 'get',
    path: '/api/projects/:project_id/query/:query_id/',
    stringParams: ['query_id'],
    summary:
      "The status of an asynchronous query of the project, as PostHog's QueryStatusResponse: 202 while it runs, 200 when complete (its answer in `results`), " +
      '400 when the query was refused and 500 when it failed otherwise (the error envelope, its `detail` the status\'s `error_message`, with `query_status` beside it); 404 once it is unknown, cancelled or 20 minutes past its end.',
    tag: 'query',
    scope: 'query:read',
    responses: { 200: 'QueryStatusResponse', 202: 'QueryStatusResponse', 400: 'Error', 404: 'Error' },
  },
  {
    operationId: 'query_destroy',
    method: 'delete',
    path: '/api/projects/:project_id/query/:query_id/',
    stringParams: ['query_id'],
    summary:
      "Cancels an asynchronous query of the project, as PostHog's: 200 with a `message` whatever the id. A running query's status is deleted at once (a later GET is a 404); " +
      'a scan already under way runs to its end, and its answer is not cached unless an identical request or another status still wants it. A complete query is left as it is ' +
      '(`Query already complete`); an unknown id changes nothing. `dequeue_only` is accepted and changes nothing, as skylark sends ClickHouse no `KILL QUERY` either way.',
    tag: 'query',
    scope: 'query:read',
    responses: { 200: 'QueryCancelResponse' },
  },
] as const satisfies readonly OperationDoc[]

/** PostHog's QueryStatus (its fields that skylark sets; the rest are null). */
const queryStatus = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    team_id: { type: 'integer' },
    query_async: { type: 'boolean' },
    complete: { type: 'boolean' },
    error: { type: 'boolean' },
    error_message: nullable({ type: 'string' }),
    results: { oneOf: [freeFormObject, { type: 'null' }] },
    start_time: { type: 'string', format: 'date-time' },
    end_time: nullable({ type: 'string', format: 'date-time' }),
    expiration_time: nullable({ type: 'string', format: 'date-time' }),
  },
  required: ['id', 'team_id', 'complete', 'error'],
}

const experimentQueryResponse = {
  type: 'object',
  properties: {
    baseline: freeFormObject,
    variant_results: { type: 'array', items: freeFormObject },
    breakdown_results: nullable({
      type: 'array',
      description: "Null without breakdowns; else one entry per group of breakdown values (missing or null: '$$_posthog_breakdown_null_$$'), in value order.",
      items: {
        type: 'object',
        properties: { breakdown_value: { type: 'array', items: { type: 'string' } }, baseline: freeFormObject, variants: { type: 'array', items: freeFormObject } },
        required: ['breakdown_value', 'baseline', 'variants'],
      },
    }),
    cache_key: { type: 'string' },
    is_cached: { type: 'boolean' },
    last_refresh: { type: 'string', format: 'date-time' },
    next_allowed_client_refresh: { type: 'string', format: 'date-time' },
    cache_target_age: { type: 'string', format: 'date-time' },
    query_status: { oneOf: [queryStatus, { type: 'null' }] },
  },
  required: ['baseline', 'variant_results', 'cache_key', 'is_cached', 'last_refresh'],
}

const hogQLQueryResponse = {
  type: 'object',
  properties: {
    results: { type: 'array', items: { type: 'array', items: {} } },
    columns: { type: 'array', items: { type: 'string' } },
    types: { type: 'array', items: { type: 'array', items: { type: 'string' } }, description: "Each column's name and ClickHouse type, as PostHog names it." },
    hogql: { type: 'string' },
    hasMore: { type: 'boolean', description: 'Only without LIMIT in the query: whether rows beyond the first 100 were left out.' },
    limit: { type: 'integer' },
    offset: { type: 'integer' },
    timezone: { type: 'string' },
    is_cached: { type: 'boolean' },
    last_refresh: { type: 'string', format: 'date-time' },
    query_status: { type: 'null' },
    error: { type: 'null' },
    timings: { type: 'array', items: freeFormObject },
  },
  required: ['results', 'columns', 'types', 'hogql', 'is_cached', 'last_refresh'],
}

export const QUERY_COMPONENTS = {
  QueryRequest: {
    type: 'object',
    properties: {
      query: freeFormObject,
      refresh: {
        oneOf: [{ type: 'boolean' }, { type: 'string', enum: [...REFRESH_MODES] }],
      },
      client_query_id: { type: 'string', maxLength: MAX_CLIENT_QUERY_ID_LENGTH },
      async: { type: 'boolean', description: 'Legacy: `true` is `refresh: "async"`.' },
    },
    required: ['query'],
  },
  ExperimentQueryResponse: experimentQueryResponse,
  HogQLQueryResponse: hogQLQueryResponse,
  QueryResponse: { oneOf: [experimentQueryResponse, hogQLQueryResponse] },
  QueryCancelResponse: {
    type: 'object',
    properties: { message: { type: 'string' } },
    required: ['message'],
  },
  QueryStatusResponse: {
    type: 'object',
    description: 'A running or finished asynchronous query; a cache miss of an asynchronous mode also carries `cache_key`.',
    properties: { query_status: queryStatus, cache_key: { type: 'string' } },
    required: ['query_status'],
  },
}

export function registerQueryRoutes(
  router: Router,
  api: ApiContext,
  sources: { events: EventStore; experiments: ExperimentSource; persons: PersonMatcher | null },
  limits: QueryCacheLimits,
  maxBodyBytes: number,
  count?: (outcome: CacheOutcome) => void,
): void {
  const { experiments } = sources
  const { actionById, cohortById, cohortIdsNamed } = definitionLookups(api)
  const queries = new CachedExperimentQueries({ runner: new ExperimentQueryRunner({ ...sources, actionById, cohortById, cohortIdsNamed }), experiments, actionById, cohortById, limits, count })
  const [create, retrieve, destroy] = QUERY_OPERATIONS
  router.add(
    create.method,
    create.path,
    projectRoute(api, { scope: create.scope }, async (req) => {
      const { status, body } = await queries.run(req.project, req.body)
      return answer(status, body)
    }),
    { maxBodyBytes },
  )
  router.add(
    retrieve.method,
    retrieve.path,
    projectRoute(api, { scope: retrieve.scope }, (req) => {
      const status = queries.status(req.project, req.params.query_id)
      if (!status.error) return answer(status.complete ? 200 : 202, { query_status: status })
      // PostHog answers the status alone; here it rides on the error envelope, as 409's current object does.
      const extra = { query_status: status }
      throw status.error_message === null ? new AppError('internal_error', { extra }) : new AppError('invalid_input', { detail: status.error_message, extra })
    }),
    { maxBodyBytes },
  )
  router.add(
    destroy.method,
    destroy.path,
    projectRoute(api, { scope: destroy.scope }, (req) => {
      const outcome = queries.cancel(req.project, req.params.query_id)
      return answer(200, { message: cancelMessage(outcome, req.project.id, req.params.query_id) })
    }),
    { maxBodyBytes },
  )
}
