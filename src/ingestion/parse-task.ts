import type { EncodedPayload } from './frames.js'

/** The `parseBatch` pool task (workers/parse-batch.ts): what the main thread sends and gets back. */

export interface ParseTask {
  /** The request body, transferred (its own ArrayBuffer, not a pooled slice). */
  body: ArrayBuffer
  contentType: string | undefined
  contentEncoding: string | undefined
  compression: string | null
  maxBytes: number
  ip: string | null
  queryUnderscore: string | null
  queryToken: string | null
  engage: boolean
  now: number
}

/** AppError across the thread boundary (classes don't survive structured clone). */
export interface SerializedError {
  code: string
  detail: string
  attr: string | null
}

export type ParseTaskResult = ({ ok: true } & EncodedPayload) | { ok: false; error: SerializedError }

/** The `parseV1Batch` pool task: a capture v1 body, its project and headers already read on the main thread. */
export interface V1ParseTask {
  body: ArrayBuffer
  encoding: string | null
  maxBytes: number
  ip: string | null
  now: number
  project: { id: number; anonymizeIps: boolean }
  lib: { name: string; version: string } | null
  sentAt: number
}

export type V1ParseTaskResult = ({ ok: true; response: string } & EncodedPayload) | { ok: false; error: SerializedError }
