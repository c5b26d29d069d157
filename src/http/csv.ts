/**
 * The lists PostHog also renders as CSV (events, persons, a cohort's persons): asked by `?format=csv` or
 * `Accept: text/csv`, as DRF picks a renderer; another `format` is a 404, as DRF answers one it has no renderer
 * for. A CSV page is 10,000 rows unless `limit` asks fewer, as PostHog's exports read them, where a JSON page
 * is at most 1,000.
 */
import { csvOf } from '../common/csv.js'
import { AppError } from '../common/errors.js'
import { parsePage, type Page } from '../common/pagination.js'
import { answer, type Answer, type ApiRequest } from './api.js'
import type { ConditionalHeader } from './types.js'

/** What a list route reads of the request to choose CSV (RouteOptions' readsHeaders). */
export const CSV_HEADERS: readonly ConditionalHeader[] = ['accept']

const CSV_PAGE = 10_000

/** Whether the list is asked as CSV. */
export function asksCsv(req: ApiRequest): boolean {
  const format = req.query.get('format')
  if (format === 'csv') return true
  if (format !== null && format !== 'json') throw new AppError('not_found')
  return format === null && (req.ctx.headers.accept ?? '').split(',').some((type) => type.trim().toLowerCase().startsWith('text/csv'))
}

/** The list's page: parsePage's for JSON, up to 10,000 rows for CSV. */
export function listPage(req: ApiRequest, csv: boolean): Page {
  return csv ? parsePage(req.query, CSV_PAGE, CSV_PAGE) : parsePage(req.query)
}

/** The rows as one CSV answer. */
export function csvAnswer(rows: readonly unknown[]): Answer {
  return answer(200, csvOf(rows), { 'Content-Type': 'text/csv; charset=utf-8' })
}
