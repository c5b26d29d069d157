/** Pool task: decode, parse and frame a capture body off the main thread. */
import { Piscina } from 'piscina'
import { isAppError } from '../src/common/errors.js'
import { decodeBody } from '../src/ingestion/decode.js'
import { encodePayload } from '../src/ingestion/frames.js'
import { engageRule } from '../src/ingestion/engage.js'
import { parsePayload } from '../src/ingestion/parse.js'
import type { ParseTask, ParseTaskResult } from '../src/ingestion/parse-task.js'
import { workerContext } from './context.js'

/** A typed array that owns its whole ArrayBuffer, so transferring it can't take other data along. */
function owned<T extends Uint8Array | Uint32Array>(view: T): T {
  if (view.byteOffset === 0 && view.byteLength === view.buffer.byteLength) return view
  return view.slice() as T
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
    const encoded = encodePayload(parsed)
    const result = {
      ok: true as const,
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
  } catch (error) {
    if (isAppError(error)) return { ok: false, error: { code: error.code, detail: error.detail, attr: error.attr } }
    throw error
  }
}
