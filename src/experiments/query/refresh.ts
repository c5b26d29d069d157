/**
 * The request fields of PostHog's QueryRequest that decide how `POST …/query/` uses its cache: `refresh`
 * (PostHog's RefreshType, or a boolean), the legacy `async`, and `client_query_id`, the id an asynchronous
 * computation is polled by. The mapping is posthog/api/query.py's `_process_query_request` over
 * posthog/hogql_queries/query_runner.py's `execution_mode_from_refresh`.
 */
import { ValidationError } from '../../common/errors.js'
import { isPlainObject } from '../../common/json.js'

/** PostHog's ExecutionMode values, as `refresh` names them. */
export const REFRESH_MODES = ['async', 'async_except_on_cache_miss', 'blocking', 'force_async', 'force_blocking', 'force_cache', 'lazy_async'] as const
export type RefreshMode = (typeof REFRESH_MODES)[number]
/** What the query endpoint runs: `force_cache` never, as PostHog's endpoint makes it `blocking`. */
export type ExecutionMode = Exclude<RefreshMode, 'force_cache'>

/** A polled id is kept in memory with its answer; longer ids are refused rather than stored. */
export const MAX_CLIENT_QUERY_ID_LENGTH = 200

export interface QueryRequestOptions {
  mode: ExecutionMode
  clientQueryId: string | null
}

function modeOf(refresh: unknown): RefreshMode {
  if (refresh === undefined || refresh === null || refresh === false) return 'force_cache'
  if (refresh === true) return 'force_blocking'
  if (typeof refresh === 'string' && (REFRESH_MODES as readonly string[]).includes(refresh)) return refresh as RefreshMode
  throw new ValidationError('invalid_input', `refresh must be a boolean or one of ${REFRESH_MODES.map((m) => `'${m}'`).join(', ')}.`, 'refresh')
}

/** The request's execution mode and polling id; 400 for values PostHog's QueryRequest does not take. */
export function queryRequestOptions(body: unknown): QueryRequestOptions {
  const request = isPlainObject(body) ? body : {}
  let mode = modeOf(request.refresh)
  // The legacy flag wins over `refresh`, as in PostHog ("use refresh=async instead").
  if (request.async === true) mode = 'async'
  const id = request.client_query_id
  if (id !== undefined && id !== null && (typeof id !== 'string' || id.length > MAX_CLIENT_QUERY_ID_LENGTH)) {
    throw new ValidationError('invalid_input', `client_query_id must be a string of at most ${MAX_CLIENT_QUERY_ID_LENGTH} characters.`, 'client_query_id')
  }
  return {
    // "Here in query endpoint we always want to calculate if the cache is stale": no cache-only answers.
    mode: mode === 'force_cache' ? 'blocking' : mode,
    clientQueryId: typeof id === 'string' && id !== '' ? id : null,
  }
}
