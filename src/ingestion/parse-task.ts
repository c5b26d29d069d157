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
