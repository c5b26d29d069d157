/** Building replies: JSON bodies, empty answers and the error envelope. */
import { AppError } from '../common/errors.js'
import type { Reply } from './types.js'

export const JSON_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'Content-Type': 'application/json',
})

export function json(status: number, body: unknown, headers?: Record<string, string>): Reply {
  return { status, headers: headers ? { ...JSON_HEADERS, ...headers } : JSON_HEADERS, body: JSON.stringify(body) }
}

/** A body that is already serialized JSON (fast-json-stringify output). */
export function rawJson(status: number, body: string, headers?: Record<string, string>): Reply {
  return { status, headers: headers ? { ...JSON_HEADERS, ...headers } : JSON_HEADERS, body }
}

export function empty(status: number, headers?: Record<string, string>): Reply {
  return { status, headers, body: null }
}

export function errorReply(error: AppError): Reply {
  const headers: Record<string, string> = { ...JSON_HEADERS }
  if (error.retryAfter !== undefined) headers['Retry-After'] = String(error.retryAfter)
  return { status: error.status, headers, body: JSON.stringify(error.envelope()) }
}
