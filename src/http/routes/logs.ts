/**
 * OTLP logs. POST /i/v1/logs is PostHog's capture-logs route, where posthog-node's and posthog-js's logs APIs
 * and OpenTelemetry's exporters send: the project API key as `?token=` or `Authorization: Bearer`, a body of
 * OTLP protobuf or JSON (gzip or not), 200 `{}` once the logs are stored. The management API reads them as
 * PostHog's LogsViewSet does, under /api/projects/:id/logs/ (and /api/environments/:id/logs/): `query`,
 * `sparkline`, `attributes`, `values`.
 */
import { AppError } from '../../common/errors.js'
import { decodeContentEncoding } from '../../ingestion/decode.js'
import type { ProjectResolver } from '../../management/index.js'
import { decodeLogsRequest, logRows, type LogStore } from '../../logs/index.js'
import { apiTime, dateRange, encodeCursor, filterGroup, logJson, parseLogsQuery, sparklineInterval, textList } from '../../logs/input.js'
import { uuidv7 } from '../../common/ids.js'
import type { OperationDoc } from '../../schemas/openapi.js'
import { projectRoute, type ApiContext } from '../api.js'
import { rawJson } from '../reply.js'
import type { Router } from '../router.js'
import { preflightReply } from '../server.js'
import type { Handler } from '../types.js'

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
  store: LogStore
  resolveProject: ProjectResolver
  maxBytes: number
  now?: () => number
}

function ingest(deps: LogRouteDeps): Handler {
  const now = deps.now ?? Date.now
  return async (ctx) => {
    const token = new URLSearchParams(ctx.query).get('token') ?? /^Bearer\s+(\S+)\s*$/i.exec(ctx.headers.authorization ?? '')?.[1] ?? null
    const project = deps.resolveProject(token, null)
    const encoding = ctx.headers['content-encoding']?.trim().toLowerCase() || null
    const body = decodeContentEncoding(ctx.body ?? Buffer.alloc(0), encoding, deps.maxBytes)
    const rows = logRows(decodeLogsRequest(body), { teamId: project.id, nowMs: now(), uuid: uuidv7 })
    try {
      await deps.store.insert(rows)
    } catch (error) {
      throw new AppError('service_unavailable', { detail: `Unable to store logs: ${(error as Error).message}. Please try again.`, retryAfter: 1 })
    }
    return rawJson(200, '{}')
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v)

/** The `query` of a body (a body that is no object has none). */
const queryOf = (body: unknown): unknown => (isObject(body) ? body.query : undefined)

/** A GET parameter holding JSON; PostHog reads a malformed one as absent. */
function jsonParam(query: URLSearchParams, name: string): unknown {
  const raw = query.get(name)
  if (raw === null) return undefined
  try {
    return JSON.parse(raw)
  } catch {
    return undefined
  }
}

function intParam(raw: string | null, fallback: number): number {
  const n = raw === null ? NaN : Number(raw)
  return Number.isInteger(n) && n >= 0 ? n : fallback
}

export function registerLogRoutes(router: Router, api: ApiContext, deps: LogRouteDeps, apiMax: number): void {
  const now = deps.now ?? Date.now
  const v1 = { maxBodyBytes: deps.maxBytes, cors: true }
  router.add('post', '/i/v1/logs', ingest(deps), v1)
  router.add('options', '/i/v1/logs', preflightReply, { maxBodyBytes: 0, cors: true })

  const store = deps.store
  const read = { scope: 'logs:read' } as const
  router.add(
    'post',
    `${LOGS}/query/`,
    projectRoute(api, read, async (req) => {
      const raw = queryOf(req.body)
      const { query, requested } = parseLogsQuery(raw, req.project.id, now())
      const rows = await store.query(query)
      const hasMore = rows.length > requested
      const page = rows.slice(0, requested)
      return {
        query: { ...(raw as object), limit: requested + 1 },
        results: page.map(logJson),
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
      const raw = queryOf(req.body) ?? {}
      const { query } = parseLogsQuery(isObject(raw) ? { ...raw, limit: undefined, after: undefined } : raw, req.project.id, now())
      const interval = sparklineInterval(query.from, query.to)
      const buckets = await store.sparkline({ ...query, interval })
      // Every bucket of the range is listed, an empty one as PostHog's outer join leaves it: no level, 0.
      const seen = new Set(buckets.map((b) => b.time))
      const out = [...buckets]
      // Only the first 1,000 entries are answered, as PostHog's LIMIT: a range of years asks no more buckets.
      const start = Math.floor(query.from / interval) * interval
      const last = Math.min(query.to, start + 999 * interval)
      for (let t = start; t <= last; t += interval) if (!seen.has(t)) out.push({ time: t, level: '', count: 0 })
      out.sort((a, b) => a.time - b.time || (a.level < b.level ? -1 : a.level > b.level ? 1 : 0))
      return out.slice(0, 1000).map((b) => ({ time: apiTime(b.time), level: b.level, count: b.count }))
    }),
    { maxBodyBytes: apiMax },
  )
  router.add(
    'get',
    `${LOGS}/attributes/`,
    projectRoute(api, read, async (req) => {
      const q = req.query
      const type = q.get('attribute_type') === 'resource' ? 'resource' : 'log'
      let range
      try {
        range = dateRange(jsonParam(q, 'dateRange') ?? { date_from: '-1h' }, now())
      } catch {
        range = dateRange({ date_from: '-1h' }, now())
      }
      let serviceNames: string[]
      try {
        serviceNames = textList(jsonParam(q, 'serviceNames'), 'serviceNames')
      } catch {
        serviceNames = []
      }
      let filters
      try {
        filters = filterGroup(jsonParam(q, 'filterGroup'))
      } catch {
        filters = undefined
      }
      const { keys, count } = await store.attributes({
        teamId: req.project.id,
        ...range,
        type,
        search: q.get('search') ?? '',
        serviceNames,
        filters,
        limit: intParam(q.get('limit'), 100),
        offset: intParam(q.get('offset'), 0),
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
