/** Pool tasks: decode, parse and frame a capture body (any capture route's, or capture v1's) off the main thread. */
import { Piscina } from 'piscina'
import { isAppError } from '../src/common/errors.js'
import { encodeV1Batch } from '../src/ingestion/capture-v1/batch.js'
import { decodeContentEncoding } from '../src/common/content-encoding.js'
import { decodeBody } from '../src/ingestion/decode.js'
import { encodePayload, type EncodedPayload } from '../src/ingestion/frames.js'
import { engageRule } from '../src/ingestion/engage.js'
import { parsePayload } from '../src/ingestion/parse.js'
import type { ParseTask, ParseTaskResult, SerializedError, V1ParseTask, V1ParseTaskResult } from '../src/ingestion/parse-task.js'
import { workerContext } from './context.js'

/** A typed array that owns its whole ArrayBuffer, so transferring it can't take other data along. */
function owned<T extends Uint8Array | Uint32Array>(view: T): T {
  if (view.byteOffset === 0 && view.byteLength === view.buffer.byteLength) return view
  return view.slice() as T
}

/** The frames handed back by transfer, not copied, with `extra` (what else the task answers) beside them. */
function moved<T extends object>(encoded: EncodedPayload, extra: T): ReturnType<typeof Piscina.move> {
  const result = {
    ok: true as const,
    ...extra,
    ...encoded,
    frames: owned(encoded.frames),
    offsets: owned(encoded.offsets),
    keyHashes: owned(encoded.keyHashes),
    warningFrames: owned(encoded.warningFrames),
  }
  return Piscina.move({
    get [Piscina.transferableSymbol]() {
      return [result.frames.buffer, result.offsets.buffer, result.keyHashes.buffer, result.warningFrames.buffer]
    },
    get [Piscina.valueSymbol]() {
      return result
    },
  } as never)
}

/** An AppError as the main thread rethrows it; anything else is a bug and fails the task. */
function refused(error: unknown): { ok: false; error: SerializedError } {
  if (isAppError(error)) return { ok: false, error: { code: error.code, detail: error.detail, attr: error.attr } }
  throw error
}

export function parseBatch(task: ParseTask): ParseTaskResult | ReturnType<typeof Piscina.move> {
  const ctx = workerContext()
  try {
    const text = decodeBody({
      body: Buffer.from(task.body),
      contentType: task.contentType,
      contentEncoding: task.contentEncoding,
      compression: task.compression,
      maxBytes: task.maxBytes,
    })
    const parsed = parsePayload(text, {
      now: task.now,
      ip: task.ip,
      queryUnderscore: task.queryUnderscore,
      queryToken: task.queryToken,
      engage: engageRule(task.engage),
      uuid: ctx.uuid,
      resolveProject: ctx.resolveProject,
    })
    return moved(encodePayload(parsed), {})
  } catch (error) {
    return refused(error)
  }
}

export function parseV1Batch(task: V1ParseTask): V1ParseTaskResult | ReturnType<typeof Piscina.move> {
  try {
    const text = decodeContentEncoding(Buffer.from(task.body), task.encoding, task.maxBytes).toString('utf8')
    const { encoded, response } = encodeV1Batch(text, { now: task.now, ip: task.ip, project: task.project, lib: task.lib, sentAt: task.sentAt })
    return moved(encoded, { response })
  } catch (error) {
    return refused(error)
  }
}
