/**
 * Turns a request body into JSON text the way PostHog capture does (Rust v0_request.rs / Python
 * load_data_from_request): form bodies with `data=`, a compression hint from the form, the query or
 * Content-Encoding (`gzip`, `gzip-js`, `lz64`, `base64`), gzip sniffed from its magic bytes whatever the
 * hint says, and base64/gzip fallbacks when the text is not JSON. Every decompression is bounded by
 * `maxBytes` so a small bomb can't grow past the body limit.
 */
import { gunzip, isGzip, malformed, tooLarge } from '../common/content-encoding.js'
import { DecompressedTooLarge, decompressLz64 } from './lz64.js'

export interface DecodeInput {
  body: Buffer
  contentType: string | undefined
  contentEncoding: string | undefined
  /** `compression` query parameter, if any. */
  compression: string | null
  /** Largest decoded size accepted. */
  maxBytes: number
}

function base64ToBuffer(text: string): Buffer | null {
  const cleaned = text.trim().replace(/ /g, '+').replace(/-/g, '+').replace(/_/g, '/')
  if (cleaned.length === 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(cleaned)) return null
  return Buffer.from(cleaned, 'base64')
}

function lz64(text: string, maxBytes: number): string {
  try {
    const out = decompressLz64(text.replace(/ /g, '+'), maxBytes)
    if (out === null || out === '') throw malformed('invalid lz64 data')
    return out
  } catch (error) {
    if (error instanceof DecompressedTooLarge) throw tooLarge()
    throw error
  }
}

/** Reads `data` and `compression` out of an urlencoded form without allocating the whole map. */
function parseForm(text: string): { data: string | null; compression: string | null } {
  const form = new URLSearchParams(text)
  return { data: form.get('data'), compression: form.get('compression') }
}

/** JSON's whitespace, which may come before its first `{` or `[`. */
function isBlank(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09
}

function opensJson(c: number): boolean {
  return c === 0x7b || c === 0x5b // { or [
}

function looksLikeJson(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (isBlank(c) || c === 0xfeff) continue
    return opensJson(c)
  }
  return false
}

/**
 * `looksLikeJson` over the first `limit` bytes, and a prefix test, on the bytes themselves, without the
 * `subarray` and latin1 string each: every /capture/ and /decide body passes here.
 */
function bytesLookLikeJson(buf: Buffer, limit: number): boolean {
  const end = Math.min(buf.length, limit)
  for (let i = 0; i < end; i++) {
    if (isBlank(buf[i])) continue
    return opensJson(buf[i])
  }
  return false
}

const DATA_FIELD = Buffer.from('data=', 'latin1')
const FORM_TYPE = 'application/x-www-form-urlencoded'

/** Whether a Content-Type is a form's, parameters aside. Shorter types (JSON's, text's) are told at once. */
function isFormType(contentType: string | undefined): boolean {
  if (contentType === undefined || contentType.length < FORM_TYPE.length) return false
  return contentType.split(';')[0].trim().toLowerCase() === FORM_TYPE
}

function startsWith(buf: Buffer, prefix: Buffer): boolean {
  if (buf.length < prefix.length) return false
  for (let i = 0; i < prefix.length; i++) if (buf[i] !== prefix[i]) return false
  return true
}

/** The decoded JSON text, and its UTF-8 bytes when decoding had them at hand (plain, gzip and base64 bodies). */
export interface DecodedBody {
  text: string
  bytes: Buffer | null
}

export function decodeBody(input: DecodeInput): string {
  return decodeBodyBytes(input).text
}

export function decodeBodyBytes(input: DecodeInput): DecodedBody {
  const { maxBytes } = input
  let body = input.body
  if (body.length === 0) throw malformed('the body is empty.')
  let hint = (input.compression ?? '').toLowerCase()

  // Form bodies: the payload is the `data` field; its compression may be a form field too.
  // (A JSON body mislabelled as a form, as `curl -d` sends it, is read as JSON.)
  const formLike = isFormType(input.contentType) && !bytesLookLikeJson(body, 64)
  if (!isGzip(body) && (formLike || startsWith(body, DATA_FIELD))) {
    const form = parseForm(body.toString('utf8'))
    if (form.data === null) throw malformed('form body without a data field')
    hint ||= (form.compression ?? '').toLowerCase()
    body = Buffer.from(form.data, 'utf8')
  }
  hint ||= (input.contentEncoding ?? '').toLowerCase().trim()

  if (isGzip(body)) return utf8(gunzip(body, maxBytes))
  if (hint === 'gzip' || hint === 'gzip-js') {
    // A gzip hint on a body that is not gzip: PostHog SDKs sometimes send plain JSON with the hint.
    const text = body.toString('utf8')
    if (looksLikeJson(text)) return { text, bytes: body }
    throw malformed('invalid gzip data')
  }
  if (hint === 'lz64' || hint === 'lz-string') return { text: lz64(body.toString('utf8'), maxBytes), bytes: null }
  if (hint === 'base64' || hint === 'b64') {
    const decoded = base64ToBuffer(body.toString('utf8'))
    if (!decoded) throw malformed('invalid base64 data')
    return utf8(isGzip(decoded) ? gunzip(decoded, maxBytes) : decoded)
  }
  const text = body.toString('utf8')
  if (looksLikeJson(text)) return { text, bytes: body }
  // Python capture's fallbacks: a base64 body without a hint (posthog-js sendBeacon), possibly of gzip.
  const decoded = base64ToBuffer(text)
  if (decoded) {
    if (isGzip(decoded)) return utf8(gunzip(decoded, maxBytes))
    const inner = decoded.toString('utf8')
    if (looksLikeJson(inner)) return { text: inner, bytes: decoded }
  }
  return { text, bytes: body }
}

function utf8(bytes: Buffer): DecodedBody {
  return { text: bytes.toString('utf8'), bytes }
}
