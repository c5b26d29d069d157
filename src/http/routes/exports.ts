/**
 * /api/projects/:project_id/exports/ — PostHog's exports API for CSV: create (rendered before the answer, as
 * PostHog's create does unless forced to queue, so the answer already says `has_content` or `exception`), list
 * the caller's own, read one, and download its `content/`. The rendering is export-runner.ts; the record is the
 * domain's (src/management/exports/). The operation table is also published by /api/schema/.
 */
import { isAppError } from '../../common/errors.js'
import type { JsonObject } from '../../common/json.js'
import { pageEnvelope, parsePage } from '../../common/pagination.js'
import { hogqlCohorts, hogqlExportRows, type PersonMatcher } from '../../experiments/index.js'
import { filenameOf, toExportObject, type ExportedAsset, type Project } from '../../management/index.js'
import { exportPageSchema, exportSchema, exportWriteSchema } from '../../schemas/export.js'
import { compileSerializer } from '../../schemas/index.js'
import { PAGE_QUERY, type OperationDoc } from '../../schemas/openapi.js'
import type { EventStore } from '../../storage/events/index.js'
import { answer, definitionLookups, intParam, projectRoute, type ApiContext, type ApiResult, type ProjectApiRequest } from '../api.js'
import { renderExport, renderRows, type ExportCaller, type ExportLimits, EXPORT_LIMITS } from '../export-runner.js'
import type { Router } from '../router.js'

const EXPORTS = '/api/projects/:project_id/exports'
const TAG = 'exports'
/** PostHog's content answers may be cached for a day (MAX_AGE_CONTENT). */
const CONTENT_MAX_AGE = 'max-age=86400'

const text = (name: string, description: string) => ({ name, description, schema: { type: 'string' } })

export const EXPORT_OPERATIONS = [
  {
    operationId: 'exports_list',
    method: 'get',
    path: `${EXPORTS}/`,
    summary: "The exports the key's user made in the project, newest first; none past `expires_after`.",
    tag: TAG,
    scope: 'export:read',
    query: [...PAGE_QUERY, text('context_path', 'Only exports whose `export_context.path` holds this, case-insensitively.'), text('export_format', 'Only this format.')],
    responses: { 200: 'PaginatedExportedAssetList' },
  },
  {
    operationId: 'exports_create',
    method: 'post',
    path: `${EXPORTS}/`,
    summary:
      'Export an API list as CSV: `{"export_format": "text/csv", "export_context": {"path": "/api/projects/1/events/?event=$pageview"}}`. The list is read with the same key (its scope is needed too), ' +
      'page after page, up to 300,000 rows or 32 MiB, and the answer comes once it is rendered: `has_content` true, or `exception` saying why not (such as the list refusing the key). ' +
      'Or a HogQL query\'s rows: `{"export_context": {"source": {"kind": "HogQLQuery", "query": "SELECT …"}}}`, 50,000 rows without LIMIT (PostHog\'s export limit), a query the endpoint would refuse recorded as the `exception`.',
    tag: TAG,
    scope: 'export:write',
    requestBody: 'ExportedAssetWrite',
    responses: { 201: 'ExportedAsset' },
  },
  { operationId: 'exports_retrieve', method: 'get', path: `${EXPORTS}/:id/`, summary: 'An export of the project.', tag: TAG, scope: 'export:read', responses: { 200: 'ExportedAsset' } },
  {
    operationId: 'exports_content_retrieve',
    method: 'get',
    path: `${EXPORTS}/:id/content/`,
    summary: 'The CSV of an export (404 when it has none); `download=true` names its file in Content-Disposition.',
    tag: TAG,
    scope: 'export:read',
    query: [text('download', '`true`: sent as an attachment named by `filename`.')],
    responses: { 200: 'ExportContent' },
    responseType: 'text/csv',
  },
] as const satisfies readonly OperationDoc[]

export const EXPORT_COMPONENTS = {
  ExportedAsset: exportSchema,
  ExportedAssetWrite: exportWriteSchema,
  PaginatedExportedAssetList: exportPageSchema,
  ExportContent: { type: 'string', description: 'CSV: a header of column names, then a line a row, CRLF after each.' },
}

type OperationId = (typeof EXPORT_OPERATIONS)[number]['operationId']

export function registerExportRoutes(router: Router, api: ApiContext, maxBodyBytes: number, events: EventStore | null, persons: PersonMatcher | null, limits: ExportLimits = EXPORT_LIMITS): void {
  const exports = api.management.exports
  const { actionById, cohortById, cohortIdsNamed } = definitionLookups(api)
  const json = { asset: compileSerializer(exportSchema), page: compileSerializer(exportPageSchema) }
  const object = (asset: ExportedAsset) => json.asset(toExportObject(asset))
  // One export renders at a time, the others wait their turn: each may hold 32 MiB of CSV, and its peak (the
  // text, and the copies SQLite makes to store it) is ≈170 MB more RSS at that size.
  let turn: Promise<unknown> = Promise.resolve()
  /** A list through its route, as the caller; a HogQL query's rows as PostHog's exporter reads them, a refusal its exception. */
  const render = async (project: Project, context: JsonObject, caller: ExportCaller) => {
    if (!context.source) return renderExport(router, context, caller, limits)
    if (events === null) return { exception: 'This server has no event store to query.' }
    try {
      const now = Date.now()
      const cohorts = hogqlCohorts(events, actionById, cohortById, cohortIdsNamed, now)
      return renderRows(await hogqlExportRows({ events, persons, cohorts }, project, context.source as JsonObject, now), context, limits)
    } catch (error) {
      if (isAppError(error) && error.status < 500) return { exception: error.detail }
      throw error
    }
  }
  const inTurn = <T>(render: () => Promise<T>): Promise<T> => {
    const run = turn.then(render)
    turn = run.catch(() => undefined)
    return run
  }
  const handlers: Record<OperationId, (req: ProjectApiRequest) => ApiResult | Promise<ApiResult>> = {
    exports_list: (req) => {
      const page = parsePage(req.query)
      const query = { contextPath: req.query.get('context_path'), exportFormat: req.query.get('export_format') }
      const { count, results } = exports.list(req.project, req.principal.user.id, query, page)
      return answer(200, json.page(pageEnvelope(req.baseUrl, req.ctx.path, req.query, page, count, results.map(toExportObject))))
    },
    exports_create: async (req) => {
      const asset = exports.create(req.project, req.body, req.principal.user.id)
      const { ctx } = req
      const caller = { authorization: ctx.headers.authorization, remoteAddress: ctx.remoteAddress, requestId: ctx.requestId }
      let outcome: Awaited<ReturnType<typeof render>>
      try {
        outcome = await inTurn(() => render(req.project, asset.export_context!, caller))
      } catch (error) {
        // A fault of the list, not a refusal: the asset says it failed, and the server logs the error with the 500.
        exports.finish(req.project, asset.id, { exception: 'The export failed with an internal error.' })
        throw error
      }
      return answer(201, object(exports.finish(req.project, asset.id, outcome)))
    },
    exports_retrieve: (req) => answer(200, object(exports.get(req.project, intParam(req.params.id)))),
    exports_content_retrieve: (req) => {
      const { asset, content } = exports.content(req.project, intParam(req.params.id))
      const headers: Record<string, string> = { 'Content-Type': asset.export_format, 'Cache-Control': CONTENT_MAX_AGE }
      if (req.query.get('download') === 'true') headers['Content-Disposition'] = `attachment; filename="${filenameOf(asset)}"`
      return answer(200, content, headers)
    },
  }
  for (const op of EXPORT_OPERATIONS) {
    router.add(op.method, op.path, projectRoute(api, { scope: op.scope }, handlers[op.operationId]), { maxBodyBytes })
  }
}
