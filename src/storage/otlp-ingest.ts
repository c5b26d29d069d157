/**
 * The OTLP routes' writes, done on their store's thread: the route hands over the body as it came, and the
 * thread decodes it (Content-Encoding, then protobuf or JSON), makes the rows and commits them. On the main
 * thread a 16 MB export held the event loop for about a second, and every /capture/ and /decide with it
 * (docs/performance.md, "OTLP bodies off the main thread").
 */
import { decodeContentEncoding } from '../common/content-encoding.js'
import { AppError } from '../common/errors.js'
import { uuidv7 } from '../common/ids.js'
import type { ClickHouseConnection } from '../config/index.js'
import { GroupCommit } from './group-commit.js'

/** One OTLP request as the route passes it on. */
export interface OtlpRequest {
  body: Uint8Array
  /** Content-Encoding, lower-case, or null. */
  encoding: string | null
  /** The most bytes the decoded body may take. */
  maxBytes: number
  teamId: number
  /** The request's arrival (ms): rows' observed time, and the clamp of times far from it. */
  nowMs: number
}

/** Where an OTLP store's thread keeps its rows: ClickHouse when a connection is given, else the SQLite file. */
export interface OtlpStoreTarget {
  file: string
  clickhouse: ClickHouseConnection | null
}

export interface OtlpIngest {
  /** Stores the request's rows durably before resolving; a body that cannot be read is its AppError (400, 413, 415). */
  ingest(request: OtlpRequest): Promise<void>
}

export interface OtlpRowContext {
  teamId: number
  nowMs: number
  uuid: (nowMs: number) => string
}

/**
 * `ingest` for a store: `rows` reads a decoded body, `insert` stores rows. Requests whose rows are ready while
 * a write is in flight share the next one (group-commit.ts). A failed write is 503: the exporter sends again.
 */
export function otlpIngest<Row>(what: string, rows: (body: Buffer, ctx: OtlpRowContext) => Row[], insert: (rows: Row[]) => Promise<void>): OtlpIngest['ingest'] {
  const commit = new GroupCommit(insert)
  return async (request) => {
    const bytes = Buffer.from(request.body.buffer, request.body.byteOffset, request.body.byteLength)
    const made = rows(decodeContentEncoding(bytes, request.encoding, request.maxBytes), { teamId: request.teamId, nowMs: request.nowMs, uuid: uuidv7 })
    try {
      await commit.insert(made)
    } catch (error) {
      throw storeFailure(what, error)
    }
  }
}

/** The 503 of a write that failed, or of a store thread that stopped before answering. */
export function storeFailure(what: string, error: unknown): AppError {
  return new AppError('service_unavailable', { detail: `Unable to store ${what}: ${(error as Error).message}. Please try again.`, retryAfter: 1 })
}
