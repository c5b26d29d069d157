/**
 * The capture use-case on the main thread: decode and parse small bodies inline (a worker hop costs
 * more than the work), hand large ones to the pool, route each event to its lane, and resolve only when
 * the spool has made every event durable. That resolution is what the 200 means.
 */
import { AppError, CATALOGUE, type CatalogueCode } from '../common/errors.js'
import { uuidv7 } from '../common/ids.js'
import type { Clock } from '../common/clock.js'
import type { Counter } from 'prom-client'
import type { ProjectResolver } from '../management/project-resolver.js'
import type { Metrics } from '../observability/metrics.js'
import type { WorkerPool } from '../pool/index.js'
import { encodeV1Batch, type V1ParseContext } from './capture-v1/batch.js'
import { readV1Envelope, type V1Headers } from './capture-v1/request.js'
import { decodeContentEncoding } from '../common/content-encoding.js'
import { decodeBodyBytes } from './decode.js'
import { encodeControl } from './control.js'
import { encodeCapture, encodePayload, type EncodedPayload } from './frames.js'
import { engageRule } from './engage.js'
import { parsePayload } from './parse.js'
import type { ParseTask, ParseTaskResult, SerializedError, V1ParseTask, V1ParseTaskResult } from './parse-task.js'
import type { SpikeDetector } from './spike.js'
import { encodeFrame, FrameKind } from './spool/format.js'
import type { SpoolWriter } from './spool/writer.js'
import type { CapturedEvent, Lane } from './types.js'

/**
 * Bodies whose decoded size is above this go to the pool when there is one. SDK batches (≤100 events,
 * ≈40 KB) parse inline in ≈100 µs; measured end to end, sending them to the pool made the worker compete
 * with the consumer thread for the 2 cores and stored fewer events per second. Migrations' big batches
 * still leave the main thread.
 */
export const INLINE_PARSE_MAX_BYTES = 256 * 1024

/** The decoded size of a body: gzip's trailer holds it (mod 2^32), so a small gzip of a big batch counts as big. */
function decodedSize(body: Buffer): number {
  if (body.length >= 18 && body[0] === 0x1f && body[1] === 0x8b) return Math.max(body.length, body.readUInt32LE(body.length - 4))
  return body.length
}

/**
 * `encode` run on this thread, or null when the pool is to take the body: its decoded size is over the inline
 * limit, or it inflated past that limit while decoded here. A gzip trailer can understate the size (nothing
 * checks it before the end), and a form's base64 gzip or lz64, or capture v1's deflate or brotli, tells none;
 * bounded only by the route's limit, such a bomb would inflate tens of MB on the request thread. The pool
 * decodes it again with the route's limit. Without a pool everything is encoded here, up to that limit.
 */
function encodeHere<T>(pool: WorkerPool | null, body: Buffer, maxBytes: number, encode: (maxBytes: number) => T): T | null {
  if (!pool) return encode(maxBytes)
  if (decodedSize(body) > INLINE_PARSE_MAX_BYTES) return null
  const bound = Math.min(maxBytes, INLINE_PARSE_MAX_BYTES)
  try {
    return encode(bound)
  } catch (error) {
    if (bound < maxBytes && error instanceof AppError && error.code === 'request_too_large') return null
    throw error
  }
}

/**
 * The body as an ArrayBuffer a worker may take over: its own when the body is all of it (a joined body, or one
 * chunk over 4 KB, is), else a copy (never a shared pool slab or uWS memory).
 */
function transferable(body: Buffer): ArrayBuffer {
  const whole = body.byteOffset === 0 && body.byteLength === body.buffer.byteLength
  return whole ? (body.buffer as ArrayBuffer) : new Uint8Array(body).buffer
}

export interface CaptureRequest {
  body: Buffer
  contentType: string | undefined
  contentEncoding: string | undefined
  query: URLSearchParams
  /** First X-Forwarded-For address, else the socket address. */
  ip: string | null
  /** Decoded size limit (the route's body limit). */
  maxBytes: number
  /** Sent to `/engage/`, where an event without a name is an engage update. */
  engage: boolean
}

/** A capture v1 request (`POST /i/v1/analytics/events`): its headers decide the project and the decoding. */
export interface CaptureV1Request {
  headers: V1Headers
  body: Buffer
  ip: string | null
  /** Decoded size limit (the route's body limit). */
  maxBytes: number
}

export interface IngestionDeps {
  spool: SpoolWriter
  spike: SpikeDetector
  pool: WorkerPool | null
  resolveProject: ProjectResolver
  metrics: Metrics
  clock: Clock
}

function rethrow(error: SerializedError): never {
  if (error.code in CATALOGUE) throw new AppError(error.code as CatalogueCode, { detail: error.detail, attr: error.attr })
  throw new AppError('invalid_payload', { detail: error.detail, attr: error.attr })
}

/** Decoded, parsed and framed on this thread; a function of its own for the reason #encodeInline is. */
function encodeV1Inline(req: CaptureV1Request, encoding: string | null, ctx: V1ParseContext, maxBytes: number): { encoded: EncodedPayload; response: string } {
  return encodeV1Batch(decodeContentEncoding(req.body, encoding, maxBytes).toString('utf8'), ctx)
}

export class IngestionService {
  readonly #d: IngestionDeps
  /** Bound per lane once: prom-client hashes the label set on every `inc({...})`. */
  readonly #received: Record<Lane, Counter.Internal>

  constructor(deps: IngestionDeps) {
    this.#d = deps
    const received = deps.metrics.eventsReceived
    this.#received = { main: received.labels('main'), historical: received.labels('historical'), overflow: received.labels('overflow') }
  }

  /** Resolves when every accepted event is durable; throws AppError for a request that is refused. */
  async capture(req: CaptureRequest): Promise<{ accepted: number }> {
    const now = this.#d.clock.now()
    const compression = req.query.get('compression')
    const queryUnderscore = req.query.get('_')
    const queryToken = req.query.get('token') ?? req.query.get('api_key')
    const encoded =
      encodeHere(this.#d.pool, req.body, req.maxBytes, (maxBytes) => this.#encodeInline(req, now, compression, queryUnderscore, queryToken, maxBytes)) ??
      (await this.#encodeInPool(req, now, compression, queryUnderscore, queryToken))
    for (const reason of encoded.dropReasons) this.#d.metrics.eventsDropped.inc({ reason })
    await this.#append(encoded, now)
    return { accepted: encoded.offsets.length - 1 }
  }

  /**
   * Capture v1: the same spool, lanes and consumer as /batch/, after v1's own checks of headers and body.
   * Resolves with the answer's text (per-event results) once every kept event is durable; v1's per-event
   * `retry` is never needed, as a spool that can't take the batch refuses all of it (503).
   */
  async captureV1(req: CaptureV1Request): Promise<string> {
    const envelope = readV1Envelope(req.headers)
    const project = this.#d.resolveProject(envelope.token, undefined)
    const now = this.#d.clock.now()
    const ctx = { now, ip: req.ip, project: { id: project.id, anonymizeIps: project.anonymizeIps }, lib: envelope.lib, sentAt: envelope.sentAt }
    const { encoded, response } =
      encodeHere(this.#d.pool, req.body, req.maxBytes, (maxBytes) => encodeV1Inline(req, envelope.encoding, ctx, maxBytes)) ??
      (await this.#encodeV1InPool(req, envelope.encoding, ctx))
    for (const reason of encoded.dropReasons) this.#d.metrics.eventsDropped.inc({ reason })
    await this.#append(encoded, now)
    return response
  }

  /** The pool's parse of a body encodeHere left to it (so there is a pool). */
  async #encodeInPool(req: CaptureRequest, now: number, compression: string | null, queryUnderscore: string | null, queryToken: string | null): Promise<EncodedPayload> {
    const body = transferable(req.body)
    const task: ParseTask = {
      body,
      contentType: req.contentType,
      contentEncoding: req.contentEncoding,
      compression,
      maxBytes: req.maxBytes,
      ip: req.ip,
      queryUnderscore,
      queryToken,
      engage: req.engage,
      now,
    }
    const result = await this.#d.pool!.run<ParseTaskResult>('parseBatch', task, [body])
    if (!result.ok) rethrow(result.error)
    return result
  }

  async #encodeV1InPool(req: CaptureV1Request, encoding: string | null, ctx: V1ParseContext): Promise<{ encoded: EncodedPayload; response: string }> {
    const body = transferable(req.body)
    const task: V1ParseTask = { body, encoding, maxBytes: req.maxBytes, ...ctx }
    const done = await this.#d.pool!.run<V1ParseTaskResult>('parseV1Batch', task, [body])
    if (!done.ok) rethrow(done.error)
    return { encoded: done, response: done.response }
  }

  /**
   * Decodes, parses and frames a body on this thread. A function of its own, not inline in capture(): there,
   * the body's text and parsed events stayed reachable from the suspended capture() while the spool made the
   * frames durable, so they outlived two scavenges and were promoted (≈70 KB an /batch/ request).
   */
  #encodeInline(req: CaptureRequest, now: number, compression: string | null, queryUnderscore: string | null, queryToken: string | null, maxBytes: number): EncodedPayload {
    const decoded = decodeBodyBytes({ body: req.body, contentType: req.contentType, contentEncoding: req.contentEncoding, compression, maxBytes })
    // What the parse resolved, for a body spooled as it came (encodeCapture).
    let project = { id: 0, anonymizeIps: false }
    let uuid: string | null = null
    const parsed = parsePayload(decoded.text, {
      now,
      ip: req.ip,
      queryUnderscore,
      queryToken,
      engage: engageRule(req.engage),
      uuid: () => (uuid = uuidv7(now)),
      resolveProject: (token, hint) => (project = this.#d.resolveProject(token, hint)),
    })
    return parsed.events.length === 1
      ? encodeCapture(
          parsed,
          { teamId: project.id, anonymizeIps: project.anonymizeIps, now, ip: req.ip, queryUnderscore, uuid, engage: req.engage },
          decoded.bytes ?? Buffer.from(decoded.text, 'utf8'),
        )
      : encodePayload(parsed)
  }

  /**
   * An event the service itself sends (the persons API's `$set` and `$delete_person_property`, the groups API's
   * `$groupidentify` and `$delete_group_property`, as PostHog's capture_internal): spooled on the main lane like a
   * captured one, so it is ordered with the events acknowledged before it; resolves once durable, with the
   * event's timestamp (ms).
   */
  async captureInternal(teamId: number, distinctId: string, event: string, properties: Record<string, unknown>): Promise<number> {
    const now = this.#d.clock.now()
    const captured: CapturedEvent = { uuid: uuidv7(now), event, distinct_id: distinctId, properties, timestamp: now, team_id: teamId, now, internal: true }
    await this.#appendOne(encodeFrame(FrameKind.event, JSON.stringify(captured)))
    this.#received.main.inc()
    return now
  }

  /**
   * Deletes persons through the consumer (control.ts): resolves once the deletion is durable in the spool,
   * which, as for events, is what the answer acknowledges. It carries the other lanes' durable ends, so the
   * consumer first processes every event acknowledged before it.
   */
  async deletePersons(teamId: number, persons: { uuids: string[]; distinctIds: string[]; deleteEvents: boolean }): Promise<void> {
    await this.#appendOne(
      encodeControl({ op: 'delete_persons', team_id: teamId, uuids: persons.uuids, distinct_ids: persons.distinctIds, delete_events: persons.deleteEvents, after: this.#otherLanesEnd() }),
    )
  }

  /**
   * Splits a person through the consumer (control.ts), as deletePersons: durable when it resolves, applied after
   * every event acknowledged before it and before every event acknowledged after it.
   */
  async splitPerson(teamId: number, split: { uuid: string; mainDistinctId: string | null; distinctIdsToSplit: string[] | null }): Promise<void> {
    await this.#appendOne(
      encodeControl({
        op: 'split_person',
        team_id: teamId,
        uuid: split.uuid,
        main_distinct_id: split.mainDistinctId,
        distinct_ids_to_split: split.distinctIdsToSplit,
        after: this.#otherLanesEnd(),
      }),
    )
  }

  /** The durable ends of the lanes other than main, where a control record is written. */
  #otherLanesEnd() {
    const { segments, sizes } = this.#d.spool.currentState()
    return {
      historical: { segment: segments.historical, offset: sizes.historical },
      overflow: { segment: segments.overflow, offset: sizes.overflow },
    }
  }

  #appendOne(frame: Buffer): Promise<void> {
    if (!this.#d.spool.hasRoom(frame.length)) {
      throw new AppError('service_unavailable', { detail: 'The event spool is full; the event store is behind.', retryAfter: 5 })
    }
    return this.#d.spool.append('main', [frame], frame.length)
  }

  #append(encoded: EncodedPayload, now: number): Promise<void> {
    const { frames, offsets, keyHashes } = encoded
    const count = offsets.length - 1
    const warnings = encoded.warningFrames
    // All or nothing: a request split over lanes must not be half accepted when the spool is nearly full.
    if (!this.#d.spool.hasRoom(frames.byteLength + warnings.byteLength)) {
      throw new AppError('service_unavailable', { detail: 'The event spool is full; the event store is behind.', retryAfter: 5 })
    }
    const buf = Buffer.from(frames.buffer, frames.byteOffset, frames.byteLength)
    const writes: Promise<void>[] = []
    if (warnings.byteLength > 0) {
      const w = Buffer.from(warnings.buffer, warnings.byteOffset, warnings.byteLength)
      writes.push(this.#d.spool.append('main', [w], w.length))
    }
    if (encoded.historical) {
      this.#appendLane(writes, 'historical', [buf], buf.length, count)
    } else {
      // Contiguous runs of the same lane stay one buffer, so the common case (no spike) is one write.
      const main: Buffer[] = []
      const overflow: Buffer[] = []
      let mainBytes = 0
      let mainEvents = 0
      let runStart = 0
      let runOverflow = false
      for (let i = 0; i <= count; i++) {
        const toOverflow = i < count && !this.#d.spike.allow(keyHashes[i], now)
        if (i < count && toOverflow === runOverflow) continue
        if (i > runStart) {
          const piece = buf.subarray(offsets[runStart], offsets[i])
          ;(runOverflow ? overflow : main).push(piece)
          if (!runOverflow) {
            mainBytes += piece.length
            mainEvents += i - runStart
          }
        }
        runStart = i
        runOverflow = toOverflow
      }
      this.#appendLane(writes, 'main', main, mainBytes, mainEvents)
      this.#appendLane(writes, 'overflow', overflow, buf.length - mainBytes, count - mainEvents)
    }
    // One write (the common case) is awaited as it is; Promise.all would add a promise per request.
    return writes.length === 1 ? writes[0] : Promise.all(writes).then(() => undefined)
  }

  #appendLane(writes: Promise<void>[], lane: Lane, pieces: Buffer[], bytes: number, events: number): void {
    if (bytes === 0) return
    writes.push(this.#d.spool.append(lane, pieces, bytes))
    this.#received[lane].inc(events)
  }
}
