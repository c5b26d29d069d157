/**
 * The one error catalogue. Every error a client can see is an AppError whose `code` is a key of
 * CATALOGUE (or, for field validation, any snake_case code with status 400). The HTTP layer turns it
 * into the contract's envelope `{type, code, detail, attr}` (without `attr` where the contract's table says
 * "absent"); nothing else builds error bodies.
 */

export type ErrorType =
  | 'validation_error'
  | 'authentication_error'
  | 'invalid_request'
  | 'client_error'
  | 'throttled_error'
  | 'server_error'

interface CatalogueEntry {
  status: number
  type: ErrorType
  detail: string
  /** The contract's error table marks `attr` "absent" for this code: its body has no `attr` at all. */
  attrAbsent?: true
}

export const CATALOGUE = {
  // 400 — the request itself is wrong
  invalid_payload: { status: 400, type: 'validation_error', detail: 'Malformed request data.' },
  invalid_project: {
    status: 400,
    type: 'validation_error',
    detail: 'The project for the events could not be determined.',
  },
  missing_distinct_id: { status: 400, type: 'validation_error', detail: 'Decide requires a distinct_id.' },
  cookieless_missing_property: { status: 400, type: 'validation_error', detail: 'Missing required property.' },
  invalid_input: { status: 400, type: 'validation_error', detail: 'Invalid input.' },
  // 401 / 403 — who is asking
  invalid_api_key: {
    status: 401,
    type: 'authentication_error',
    detail: 'Project API key invalid. You can find your project API key in your project settings.',
    attrAbsent: true,
  },
  invalid_personal_api_key: {
    status: 401,
    type: 'authentication_error',
    detail: 'Personal API key found in request Authorization header is invalid.',
    attrAbsent: true,
  },
  not_authenticated: {
    status: 401,
    type: 'authentication_error',
    detail: 'Authentication credentials were not provided.',
  },
  permission_denied: {
    status: 403,
    type: 'authentication_error',
    detail: 'You do not have permission to perform this action.',
  },
  // 404 / 405 / 409 / 413 / 415 — the resource
  not_found: { status: 404, type: 'invalid_request', detail: 'Not found.' },
  method_not_allowed: { status: 405, type: 'invalid_request', detail: 'Method not allowed.' },
  conflict: { status: 409, type: 'invalid_request', detail: 'The resource was changed by someone else.' },
  request_too_large: { status: 413, type: 'client_error', detail: 'Request too large.' },
  // capture v1 (/i/v1/analytics/events) takes JSON only, in the encodings it names
  unsupported_media_type: { status: 415, type: 'invalid_request', detail: 'Unsupported media type in request.' },
  // 429 / 5xx — the service
  throttled: { status: 429, type: 'throttled_error', detail: 'Request was throttled.' },
  internal_error: { status: 500, type: 'server_error', detail: 'Internal server error.' },
  service_unavailable: {
    status: 503,
    type: 'server_error',
    detail: 'Unable to store event. Please try again.',
  },
} as const satisfies Record<string, CatalogueEntry>

export type CatalogueCode = keyof typeof CATALOGUE

export interface ErrorEnvelope {
  type: ErrorType
  code: string
  detail: string
  attr?: string | null
}

export interface AppErrorOptions {
  detail?: string
  attr?: string | null
  /** Seconds; sent as Retry-After on 429/503. */
  retryAfter?: number
  /** Extra top-level fields merged into the envelope (e.g. 409's current object). */
  extra?: Record<string, unknown>
}

export class AppError extends Error {
  readonly status: number
  readonly type: ErrorType
  readonly code: string
  readonly detail: string
  readonly attr: string | null
  readonly #attrAbsent: boolean
  readonly retryAfter: number | undefined
  readonly extra: Record<string, unknown> | undefined

  constructor(code: CatalogueCode, options: AppErrorOptions = {}) {
    const entry: CatalogueEntry = CATALOGUE[code]
    const detail = options.detail ?? entry.detail
    super(detail)
    this.name = 'AppError'
    this.status = entry.status
    this.type = entry.type
    this.code = code
    this.detail = detail
    this.attr = options.attr ?? null
    this.#attrAbsent = entry.attrAbsent === true && this.attr === null
    this.retryAfter = options.retryAfter
    this.extra = options.extra
  }

  envelope(): ErrorEnvelope & Record<string, unknown> {
    if (this.#attrAbsent) return { type: this.type, code: this.code, detail: this.detail, ...this.extra }
    return { type: this.type, code: this.code, detail: this.detail, attr: this.attr, ...this.extra }
  }
}

/**
 * A 400 `validation_error` whose code names the broken rule (PostHog's serializer codes: `invalid_key`,
 * `unique`, `invalid_input`, `required`, …) and whose attr names the field.
 */
export class ValidationError extends AppError {
  override readonly code: string

  constructor(code: string, detail: string, attr: string | null = null) {
    super('invalid_input', { detail, attr })
    this.name = 'ValidationError'
    this.code = code
  }
}

export function isAppError(value: unknown): value is AppError {
  return value instanceof AppError
}
