/**
 * Capture v1's request envelope, as PostHog's Rust capture checks it (rust/capture/src/v1/context.rs) before
 * reading the body: the project key in `Authorization: Bearer`, the four PostHog-* headers every v1 SDK sends
 * (its identity, the attempt, a request id and its clock), JSON only, and a Content-Encoding it can read.
 * The checks run in Rust capture's order, so a client hears the same first complaint, in the contract's
 * envelope: a missing key is 401, a missing or unreadable header 400, another media type or encoding 415.
 */
import { AppError } from '../../common/errors.js'
import { normaliseUuid } from '../../common/ids.js'
import { PERSONAL_KEY_PREFIX } from '../../management/api-keys.js'
import { CONTENT_ENCODINGS } from '../../common/content-encoding.js'
import { parseRfc3339 } from '../timestamps.js'

/** The request headers v1 reads, as the HTTP front found them (absent or empty: undefined). */
export interface V1Headers {
  authorization?: string
  contentType?: string
  contentEncoding?: string
  userAgent?: string
  sdkInfo?: string
  attempt?: string
  requestId?: string
  requestTimestamp?: string
}

export interface V1Envelope {
  token: string
  /** `$lib` / `$lib_version` read from PostHog-Sdk-Info; null when it can't be read (then neither is set). */
  lib: { name: string; version: string } | null
  /** PostHog-Request-Timestamp in ms: the client's clock when it sent, which event times are corrected by. */
  sentAt: number
  /** Lower-case Content-Encoding (one of CONTENT_ENCODINGS), or null. */
  encoding: string | null
}

/** Rust capture's REQUIRED_HEADERS, in its order and spelling. */
const REQUIRED: ReadonlyArray<[keyof V1Headers, string]> = [
  ['sdkInfo', 'PostHog-Sdk-Info'],
  ['attempt', 'PostHog-Attempt'],
  ['requestId', 'PostHog-Request-Id'],
  ['requestTimestamp', 'PostHog-Request-Timestamp'],
  ['contentType', 'content-type'],
  ['userAgent', 'user-agent'],
]

/** Longer PostHog-Sdk-Info values set no `$lib`, so one header can't be copied into every event of a batch. */
const MAX_SDK_INFO = 200

function badHeader(detail: string): AppError {
  return new AppError('invalid_payload', { detail: `Invalid header: ${detail}` })
}

/** `<lib>/<version>`, split at the last `/` (`posthog/sub-sdk/2.3.4` is lib `posthog/sub-sdk`). */
export function sdkLib(sdkInfo: string): V1Envelope['lib'] {
  if (sdkInfo.length > MAX_SDK_INFO) return null
  const at = sdkInfo.lastIndexOf('/')
  if (at < 0) return null
  const name = sdkInfo.slice(0, at).trim()
  const version = sdkInfo.slice(at + 1).trim()
  return name === '' || version === '' ? null : { name, version }
}

/** A u32 of at least 1, as Rust's `parse::<u32>()` reads it. */
function isAttempt(text: string): boolean {
  if (!/^\+?[0-9]{1,10}$/.test(text)) return false
  const n = Number(text)
  return n >= 1 && n <= 0xffffffff
}

export function readV1Envelope(h: V1Headers): V1Envelope {
  if (h.authorization === undefined) {
    throw new AppError('invalid_api_key', { detail: 'API key not provided: send the project API key as `Authorization: Bearer <key>`.' })
  }
  const missing = REQUIRED.filter(([field]) => h[field] === undefined).map(([, name]) => name)
  if (missing.length > 0) throw new AppError('invalid_payload', { detail: `Missing required headers: ${missing.join(', ')}.` })

  const auth = h.authorization
  if (auth.length <= 7 || auth.slice(0, 7).toLowerCase() !== 'bearer ') throw badHeader('Authorization must use the Bearer scheme.')
  const token = auth.slice(7).trim()
  // A personal key is no project key here (Rust capture's validate_token refuses `phx_` outright).
  if (token === '' || token.startsWith(PERSONAL_KEY_PREFIX)) throw new AppError('invalid_api_key')

  const contentType = h.contentType as string
  if (contentType.split(';')[0].trim().toLowerCase() !== 'application/json') {
    throw new AppError('unsupported_media_type', { detail: `Unsupported Content-Type: ${contentType.slice(0, 100)}; capture v1 takes application/json.` })
  }
  let encoding: string | null = null
  if (h.contentEncoding !== undefined) {
    encoding = h.contentEncoding.trim().toLowerCase()
    if (!CONTENT_ENCODINGS.includes(encoding)) {
      throw new AppError('unsupported_media_type', {
        detail: `Unsupported Content-Encoding: ${h.contentEncoding.slice(0, 100)}; supported: ${CONTENT_ENCODINGS.join(', ')}.`,
      })
    }
  }
  if (normaliseUuid(h.requestId as string) === null) throw badHeader('PostHog-Request-Id is not a UUID.')
  if (!isAttempt(h.attempt as string)) throw badHeader('PostHog-Attempt must be a positive integer.')
  const sentAt = parseRfc3339(h.requestTimestamp as string)
  if (sentAt === null) throw badHeader('PostHog-Request-Timestamp is not an RFC 3339 time.')
  return { token, lib: sdkLib(h.sdkInfo as string), sentAt, encoding }
}
