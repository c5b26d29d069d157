/**
 * The lists PostHog also renders as CSV (events, persons, a cohort's persons): asked by `?format=csv` or
 * `Accept: text/csv`, as DRF picks a renderer; another `format` is a 404, as DRF answers one it has no renderer
 * for. A CSV page is 10,000 rows unless `limit` asks fewer, as PostHog's exports read them, where a JSON page
 * is at most 1,000.
 */
import { csvOf } from '../common/csv.js'
import { AppError } from '../common/errors.js'
import { parsePage, type Page } from '../common/pagination.js'
import { CSV_QUERY, type OperationDoc } from '../schemas/openapi.js'
import { answer, type Answer, type ApiRequest } from './api.js'
import type { ConditionalHeader } from './types.js'

const CSV_PAGE = 10_000

/** The headers a route reads to choose CSV: Accept where its operation documents `format` (CSV_QUERY), else none. */
export const csvHeaders = (op: OperationDoc): readonly ConditionalHeader[] => (op.query?.includes(CSV_QUERY[0]!) ? ['accept'] : [])

/** Whether the list is asked as CSV, and its page: parsePage's for JSON, up to 10,000 rows for CSV. */
export function listRead(req: ApiRequest): { csv: boolean; page: Page } {
  const format = req.query.get('format')
  if (format !== null && format !== 'json' && format !== 'csv') throw new AppError('not_found')
  const csv = format === 'csv' || (format === null && (req.ctx.headers.accept ?? '').split(',').some((type) => type.trim().toLowerCase().startsWith('text/csv')))
  return { csv, page: csv ? parsePage(req.query, CSV_PAGE, CSV_PAGE) : parsePage(req.query) }
}

/** The rows as one CSV answer. */
export function csvAnswer(rows: readonly unknown[]): Answer {
  return answer(200, csvOf(rows), { 'Content-Type': 'text/csv; charset=utf-8' })
}
