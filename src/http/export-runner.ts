/**
 * Renders an export (management/exports) as PostHog's csv_exporter does: it reads the list at the export's
 * `path` through the API itself, as the caller (same key, so the same scopes and projects), follows each
 * page's `next`, and writes the rows as CSV. Calling the route in process keeps every list's filters, checks
 * and pagination in one place; nothing goes over the network. The rows stop at PostHog's CSV_EXPORT_LIMIT,
 * and at a size cap of skylark's own: the content is kept in management.db and built in memory.
 */
import { CsvTable } from '../common/csv.js'
import { isAppError } from '../common/errors.js'
import type { JsonObject } from '../common/json.js'
import type { Router } from './router.js'
import type { Reply, RequestContext } from './types.js'

export interface ExportLimits {
  /** PostHog's CSV_EXPORT_LIMIT. */
  rows: number
  /** Characters of CSV: an events export reaches PostHog's row limit at hundreds of megabytes. */
  chars: number
}

export const EXPORT_LIMITS: ExportLimits = Object.freeze({ rows: 300_000, chars: 32 * 1024 * 1024 })

/** Rows a page asks for: the most a JSON list gives. */
const PAGE_LIMIT = '1000'

/** What PostHog writes when there was nothing to export. */
const NO_DATA = { error: 'No data available or unable to format for export.' }

/** The request the export is made for: its key reads the list. */
export interface ExportCaller {
  authorization: string | undefined
  remoteAddress: string
  requestId: string
}

class ExportFailure extends Error {}

/** The CSV, or why there is none (the asset's `exception`). */
export async function renderExport(router: Router, context: JsonObject, caller: ExportCaller, limits = EXPORT_LIMITS): Promise<{ content: string } | { exception: string }> {
  const columns = Array.isArray(context.columns) ? (context.columns as string[]) : undefined
  const table = new CsvTable(columns)
  const first = new URL(String(context.path), 'http://skylark.internal')
  first.searchParams.delete('format')
  first.searchParams.set('limit', PAGE_LIMIT)
  let next: string | null = first.pathname + first.search
  try {
    while (next !== null && table.rows < limits.rows && table.chars < limits.chars) {
      next = addPage(table, await readPage(router, next, caller), limits)
    }
  } catch (error) {
    if (error instanceof ExportFailure) return { exception: error.message }
    throw error
  }
  return contentOf(table)
}

/** A query's rows (column → value) as an export's CSV, under the same limits. */
export function renderRows(rows: readonly JsonObject[], context: JsonObject, limits = EXPORT_LIMITS): { content: string } {
  const table = new CsvTable(Array.isArray(context.columns) ? (context.columns as string[]) : undefined)
  for (const row of rows) {
    if (table.rows >= limits.rows || table.chars >= limits.chars) break
    table.add(row)
  }
  return contentOf(table)
}

function contentOf(table: CsvTable): { content: string } {
  if (table.rows > 0) return { content: table.text() }
  const empty = new CsvTable()
  empty.add(NO_DATA)
  return { content: empty.text() }
}

/**
 * Adds a page's rows; returns the next page's URL. A function of its own: a page held in renderExport's
 * frame stays reachable while it awaits the next one, and pages (≈1 MB of events each) were promoted.
 */
function addPage(table: CsvTable, page: JsonObject, limits: ExportLimits): string | null {
  const rows = rowsOf(page)
  for (const row of rows) {
    if (table.rows >= limits.rows || table.chars >= limits.chars) return null
    table.add(row)
  }
  return rows.length > 0 && typeof page.next === 'string' ? page.next : null
}

async function readPage(router: Router, url: string, caller: ExportCaller): Promise<JsonObject> {
  const { pathname, search } = new URL(url, 'http://skylark.internal')
  const match = router.match('get', pathname)
  if (match.kind !== 'route') throw new ExportFailure(`No list is served at ${pathname}.`)
  const ctx: RequestContext = {
    method: 'get',
    path: pathname,
    query: search.slice(1),
    headers: caller.authorization === undefined ? {} : { authorization: caller.authorization },
    remoteAddress: caller.remoteAddress,
    requestId: caller.requestId,
    params: match.params,
    body: null,
    aborted: false,
    startedAt: performance.now(),
  }
  let reply: Reply
  try {
    reply = await match.route.handler(ctx)
  } catch (error) {
    if (!isAppError(error)) throw error
    throw new ExportFailure(`${pathname} answered ${error.status}: ${error.detail}`)
  }
  const body = jsonOf(reply)
  if (reply.status !== 200) throw new ExportFailure(`${pathname} answered ${reply.status}${detailOf(body)}`)
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new ExportFailure(`${pathname} is not a list.`)
  return body as JsonObject
}

/** The answer's JSON; undefined for an answer that is not JSON (an export's own CSV, a static file). */
function jsonOf(reply: Reply): unknown {
  const type = reply.headers?.['Content-Type'] ?? 'application/json'
  if (!reply.body || !type.startsWith('application/json')) return undefined
  try {
    return JSON.parse(reply.body.toString())
  } catch {
    return undefined
  }
}

const detailOf = (body: unknown): string => {
  const detail = typeof body === 'object' && body !== null ? (body as { detail?: unknown }).detail : undefined
  return typeof detail === 'string' ? `: ${detail}` : ''
}

/** A page's rows: a list's `results`, or `result` (requires_flag_implementation), as PostHog's _convert_response_to_csv_data reads them. */
function rowsOf(page: JsonObject): unknown[] {
  return Array.isArray(page.results) ? page.results : Array.isArray(page.result) ? page.result : []
}
