/** Plain request and reply shapes: what the rest of the service sees instead of uWS objects. */

/**
 * The request headers the service reads. The front asks uWS for each by name (`getHeader`, ≈0.25 µs) instead of
 * visiting every header the client sent (`forEach`, a call into JS per header): a browser's /capture/ or
 * /decide carries ≈16 headers, which took ≈7.5 µs a request that way against ≈2 µs for these. A header
 * not listed here is not seen: add its name to read it.
 */
export const REQUEST_HEADERS = [
  'content-type',
  'content-encoding',
  'content-length',
  'origin',
  'authorization',
  'x-request-id',
  'x-forwarded-for',
] as const

/**
 * Headers asked for only where they mean something, saving a call into uWS each elsewhere: Transfer-Encoding
 * when there is no Content-Length, If-None-Match on GET and HEAD, Access-Control-Request-Headers on OPTIONS,
 * and those a route lists in `readsHeaders` (the ones /decide judges the caller's runtime by, capture v1's
 * PostHog-* request headers, and Accept where a list may be asked as CSV).
 */
export type ConditionalHeader =
  | 'accept'
  | 'transfer-encoding'
  | 'if-none-match'
  | 'access-control-request-headers'
  | 'user-agent'
  | 'referer'
  | 'sec-fetch-mode'
  | 'sec-fetch-site'
  | 'posthog-sdk-info'
  | 'posthog-attempt'
  | 'posthog-request-id'
  | 'posthog-request-timestamp'

/** Lower-case names; a header sent more than once has its first value, one absent or empty is left out. */
export type RequestHeaders = Partial<Record<(typeof REQUEST_HEADERS)[number] | ConditionalHeader, string>>

export interface RequestContext {
  /** Lower-case method. */
  readonly method: string
  /** Path without the query string. */
  readonly path: string
  /** Raw query string (no leading `?`). */
  readonly query: string
  readonly headers: Readonly<RequestHeaders>
  /** Socket address of the client (not X-Forwarded-For). */
  readonly remoteAddress: string
  readonly requestId: string
  params: Record<string, string>
  body: Buffer | null
  aborted: boolean
  /** performance.now() at arrival (ms). */
  readonly startedAt: number
}

export interface Reply {
  status: number
  headers?: Record<string, string>
  /** A string is sent as UTF-8; null or undefined sends no body. */
  body?: string | Buffer | null
}

export type Handler = (ctx: RequestContext) => Reply | Promise<Reply>

export interface RouteOptions {
  /** Largest body accepted; larger gets 413 before the body is read. 0 = no body expected. */
  maxBodyBytes: number
  /** Label used in metrics (defaults to the pattern). */
  label?: string
  /** Answer CORS preflight and add CORS headers for browser origins. */
  cors?: boolean
  /** A liveness/readiness/metrics probe: never refused by admission control (src/http/admission.ts). */
  probe?: boolean
  /**
   * Answers to POSTs are written together once the event loop has read what arrived, not one by one
   * (HttpServer.#send says why). Only for routes whose POSTs a client never pipelines behind.
   */
  batchPostAnswers?: boolean
  /** Headers this route reads beyond REQUEST_HEADERS (read only for it, never for every request). */
  readsHeaders?: readonly ConditionalHeader[]
}
