/**
 * Request bodies by their Content-Encoding: gzip, deflate (raw or zlib-wrapped), brotli and, where this Node has
 * it, zstd, each bounded by `maxBytes` so a small bomb can't grow past the body limit (over it: 413; broken
 * data: 400). The capture routes (src/ingestion/decode.ts) and the OTLP stores' threads read bodies with these.
 */
import * as zlib from 'node:zlib'
import { brotliDecompressSync, gunzipSync, inflateRawSync, inflateSync } from 'node:zlib'
import { AppError } from './errors.js'

export function malformed(detail: string): AppError {
  return new AppError('invalid_payload', { detail: `Malformed request data: ${detail}` })
}

export function tooLarge(): AppError {
  return new AppError('request_too_large', { detail: 'Request too large: the decoded body is over the limit.' })
}

export function isGzip(buf: Buffer): boolean {
  return buf.length >= 2 && buf[0] === 0x1f && buf[1] === 0x8b
}

type Inflate = (buf: Buffer, options: { maxOutputLength: number }) => Buffer

/** One of zlib's decompressors, bounded by `maxBytes`: over it is 413, broken data 400. */
function inflateBounded(inflate: Inflate, buf: Buffer, maxBytes: number, what: string): Buffer {
  try {
    return inflate(buf, { maxOutputLength: maxBytes })
  } catch (error) {
    if ((error as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') throw tooLarge()
    throw malformed(`invalid ${what} data`)
  }
}

export function gunzip(buf: Buffer, maxBytes: number): Buffer {
  return inflateBounded(gunzipSync, buf, maxBytes, 'gzip')
}

/** zstd's decompressor where this Node has one (22.15 and later); Node 20 has none. */
const zstdDecompressSync = (zlib as unknown as { zstdDecompressSync?: Inflate }).zstdDecompressSync

/** The Content-Encodings capture v1 names (rust/capture/src/v1/constants.rs SUPPORTED_ENCODINGS) that this Node can read. */
export const CONTENT_ENCODINGS: readonly string[] = zstdDecompressSync ? ['gzip', 'deflate', 'br', 'zstd'] : ['gzip', 'deflate', 'br']

/** A zlib-wrapped stream (RFC 1950): method 8 and a header whose check bits make it a multiple of 31. */
function isZlib(buf: Buffer): boolean {
  return buf.length >= 2 && (buf[0] & 0x0f) === 8 && ((buf[0] << 8) | buf[1]) % 31 === 0
}

/**
 * A body decoded by its Content-Encoding alone, as capture v1 does (no form, no query hint, no base64).
 * `encoding` is lower-case and one of CONTENT_ENCODINGS, or null; a gzip body without the header is still
 * gzip (its magic bytes), as on every other capture route. `deflate` is raw DEFLATE as Rust capture's
 * decoder reads it, or zlib-wrapped as HTTP defines it: the two are told apart by zlib's header.
 */
export function decodeContentEncoding(body: Buffer, encoding: string | null, maxBytes: number): Buffer {
  if (body.length === 0) throw malformed('the body is empty.')
  if (encoding === 'gzip' || (encoding === null && isGzip(body))) return gunzip(body, maxBytes)
  if (encoding === 'deflate') return inflateBounded(isZlib(body) ? inflateSync : inflateRawSync, body, maxBytes, 'deflate')
  if (encoding === 'br') return inflateBounded(brotliDecompressSync, body, maxBytes, 'brotli')
  if (encoding === 'zstd' && zstdDecompressSync) return inflateBounded(zstdDecompressSync, body, maxBytes, 'zstd')
  if (encoding !== null) throw new AppError('unsupported_media_type', { detail: `Unsupported Content-Encoding: ${encoding}.` })
  if (body.length > maxBytes) throw tooLarge()
  return body
}
