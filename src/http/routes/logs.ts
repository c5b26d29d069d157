/**
 * OTLP logs. POST /i/v1/logs is PostHog's capture-logs route (./otlp.ts), where posthog-node's and posthog-js's
 * logs APIs and OpenTelemetry's exporters send. The management API reads them as
 * PostHog's LogsViewSet does, under /api/projects/:id/logs/ (and /api/environments/:id/logs/): `query`,
 * `sparkline`, `attributes`, `values`.
 */
import { drfDict } from '../../common/drf-fields.js'
import { isPlainObject, tryParseJson } from '../../common/json.js'
import type { ProjectResolver } from '../../management/index.js'
import type { LogService } from '../../logs/index.js'
import { dateRange, encodeCursor, filterGroup, logJson, parseLogsQuery, sparklineInterval, sparklineJson, textList } from '../../logs/input.js'
import type { OperationDoc } from '../../schemas/openapi.js'
import { projectRoute, type ApiContext } from '../api.js'
import type { Router } from '../router.js'
import { registerOtlpIngest } from './otlp.js'

const LOGS = '/api/projects/:project_id/logs'
const TAG = 'logs'
const text = (name: string, description: string) => ({ name, description, schema: { type: 'string' } })

export const LOG_OPERATIONS = [
  {
    operationId: 'logs_query_create',
    method: 'post',
    path: `${LOGS}/query/`,
    summary: 'Logs in a time range, newest first (or `orderBy: earliest`), filtered by severity, service, text in the body and attributes; a page of `limit` (at most 2,000) and the cursor of the next.',
    tag: TAG,
    scope: 'logs:read',
    requestBody: 'LogsQueryRequest',
    responses: { 200: 'LogsQueryResponse' },
  },
  {
    operationId: 'logs_sparkline_create',
    method: 'post',
    path: `${LOGS}/sparkline/`,
    summary: 'How many logs each severity has in each bucket of the range (about fifty buckets).',
    tag: TAG,
    scope: 'logs:read',
    requestBody: 'LogsQueryRequest',
    responses: { 200: null },
  },
  {
    operationId: 'logs_attributes_retrieve',
    method: 'get',
    path: `${LOGS}/attributes/`,
    summary: 'Attribute keys of the logs in a range (the last hour by default), the one named by `search` first, then the most used.',
    tag: TAG,
    scope: 'logs:read',
    query: [
      text('search', 'Only keys holding this, case aside.'),
      text('attribute_type', '`log` (default) or `resource`.'),
      text('limit', 'Keys to return (default 100).'),
      text('offset', 'Keys to skip.'),
      text('dateRange', 'JSON `{"date_from", "date_to"}`.'),
      text('serviceNames', 'JSON list of service names.'),
      text('filterGroup', 'JSON filter group, as the query takes.'),
    ],
    responses: { 200: null },
  },
  {
    operationId: 'logs_values_retrieve',
    method: 'get',
    path: `${LOGS}/values/`,
    summary: "An attribute's values in the last hour, most used first (at most 50).",
    tag: TAG,
    scope: 'logs:read',
    query: [text('key', 'The attribute.'), text('value', 'Only values holding this (case counts).'), text('attribute_type', '`log` (default) or `resource`.')],
    responses: { 200: null },
  },
] as const satisfies readonly OperationDoc[]

const freeForm = { type: 'object', additionalProperties: true }
export const LOG_COMPONENTS = {
  LogsQueryRequest: { type: 'object', properties: { query: freeForm }, required: ['query'] },
  LogsQueryResponse: {
    type: 'object',
    properties: { query: freeForm, results: { type: 'array', items: freeForm }, hasMore: { type: 'boolean' }, nextCursor: { type: ['string', 'null'] } },
  },
}

export interface LogRouteDeps {
  store: LogService
  resolveProject: ProjectResolver
  maxBytes: number
  now?: () => number
}

/** A GET parameter holding JSON; PostHog reads a malformed one as absent. */
function jsonParam(query: URLSearchParams, name: string): unknown {
  const raw = query.get(name)
  return raw === null ? undefined : tryParseJson(raw)
}

/** What `read` gives, or `fallback` where it refuses: PostHog reads a malformed attributes parameter as its default. */
function lenient<T>(read: () => T, fallback: T): T {
  try {
    return read()
  } catch {
    return fallback
  }
}

function countParam(raw: string | null, fallback: number): number {
  const n = raw === null ? NaN : Number(raw)
  return Number.isInteger(n) && n >= 0 ? n : fallback
}

export function registerLogRoutes(router: Router, api: ApiContext, deps: LogRouteDeps, apiMax: number): void {
  const now = deps.now ?? Date.now
  registerOtlpIngest(router, { path: '/i/v1/logs', what: 'logs', store: deps.store }, deps)

  const store = deps.store
  const read = { scope: 'logs:read' } as const
  router.add(
    'post',
    `${LOGS}/query/`,
    projectRoute(api, read, async (req) => {
      const raw = drfDict(req.body).query
      const { query, requested } = parseLogsQuery(raw, req.project.id, now())
      // Read first: a log stored between the two reads is then in the next live tail's answer too, never in neither.
      const checkpoint = await store.checkpoint(req.project.id)
      const rows = await store.query(query)
      const hasMore = rows.length > requested
      const page = rows.slice(0, requested)
      return {
        query: { ...(raw as object), limit: requested + 1 },
        results: page.map((row) => logJson(row, checkpoint)),
        hasMore,
        nextCursor: hasMore && page.length > 0 ? encodeCursor(page[page.length - 1]!) : null,
      }
    }),
    { maxBodyBytes: apiMax },
  )
  router.add(
    'post',
    `${LOGS}/sparkline/`,
    projectRoute(api, read, async (req) => {
      const raw = drfDict(req.body).query ?? {}
      const { query } = parseLogsQuery(isPlainObject(raw) ? { ...raw, limit: undefined, after: undefined } : raw, req.project.id, now())
      const interval = sparklineInterval(query.from, query.to)
      return sparklineJson(await store.sparkline({ ...query, interval }), query.from, query.to, interval)
    }),
    { maxBodyBytes: apiMax },
  )
  router.add(
    'get',
    `${LOGS}/attributes/`,
    projectRoute(api, read, async (req) => {
      const q = req.query
      const type = q.get('attribute_type') === 'resource' ? 'resource' : 'log'
      const { keys, count } = await store.attributes({
        teamId: req.project.id,
        ...lenient(() => dateRange(jsonParam(q, 'dateRange') ?? { date_from: '-1h' }, now()), dateRange({ date_from: '-1h' }, now())),
        type,
        search: q.get('search') ?? '',
        serviceNames: lenient(() => textList(jsonParam(q, 'serviceNames'), 'serviceNames'), []),
        filters: lenient(() => filterGroup(jsonParam(q, 'filterGroup')), undefined),
        limit: countParam(q.get('limit'), 100),
        offset: countParam(q.get('offset'), 0),
      })
      const propertyFilterType = type === 'resource' ? 'log_resource_attribute' : 'log_attribute'
      return { results: keys.map((name) => ({ name, propertyFilterType, matchedOn: 'key' })), count }
    }),
    { maxBodyBytes: 0 },
  )
  router.add(
    'get',
    `${LOGS}/values/`,
    projectRoute(api, read, async (req) => {
      const q = req.query
      // PostHog reads the last hour, from the start of its ten minutes.
      const tenMinutes = 600_000_000
      const from = Math.floor((now() * 1000 - 3_600_000_000) / tenMinutes) * tenMinutes
      const values = await store.values({
        teamId: req.project.id,
        from,
        type: q.get('attribute_type') === 'resource' ? 'resource' : 'log',
        key: q.get('key') ?? '',
        search: q.get('value') ?? '',
      })
      return values.map((v) => ({ id: v, name: v }))
    }),
    { maxBodyBytes: 0 },
  )
}
