/**
 * PostHog's capture-logs routes (/i/v1/logs, /i/v1/metrics), where its SDKs and OpenTelemetry's exporters send:
 * the project API key as `?token=` or `Authorization: Bearer`, a body of OTLP protobuf or JSON (gzip or not),
 * 200 `{}` once the rows are stored (those of concurrent requests in one commit), 503 (the exporter sends again)
 * when the store failed.
 */
import { AppError } from '../../common/errors.js'
import { uuidv7 } from '../../common/ids.js'
import { decodeContentEncoding } from '../../ingestion/decode.js'
import type { ProjectResolver } from '../../management/index.js'
import { GroupCommit } from '../../storage/group-commit.js'
import { rawJson } from '../reply.js'
import type { Router } from '../router.js'
import { preflightReply } from '../server.js'

export interface OtlpSignal<Row> {
  /** The route, e.g. /i/v1/logs. */
  path: string
  /** What is stored, for the 503's detail ("logs"). */
  what: string
  rows: (body: Buffer, ctx: { teamId: number; nowMs: number; uuid: (nowMs: number) => string }) => Row[]
  insert: (rows: Row[]) => Promise<void>
}

export function registerOtlpIngest<Row>(router: Router, signal: OtlpSignal<Row>, deps: { resolveProject: ProjectResolver; maxBytes: number; now?: () => number }): void {
  const now = deps.now ?? Date.now
  // Concurrent requests' rows share a commit (src/storage/group-commit.ts).
  const commit = new GroupCommit(signal.insert)
  router.add(
    'post',
    signal.path,
    async (ctx) => {
      const token = new URLSearchParams(ctx.query).get('token') ?? /^Bearer\s+(\S+)\s*$/i.exec(ctx.headers.authorization ?? '')?.[1] ?? null
      const project = deps.resolveProject(token, null)
      const encoding = ctx.headers['content-encoding']?.trim().toLowerCase() || null
      const body = decodeContentEncoding(ctx.body ?? Buffer.alloc(0), encoding, deps.maxBytes)
      const rows = signal.rows(body, { teamId: project.id, nowMs: now(), uuid: uuidv7 })
      try {
        await commit.insert(rows)
      } catch (error) {
        throw new AppError('service_unavailable', { detail: `Unable to store ${signal.what}: ${(error as Error).message}. Please try again.`, retryAfter: 1 })
      }
      return rawJson(200, '{}')
    },
    { maxBodyBytes: deps.maxBytes, cors: true },
  )
  router.add('options', signal.path, preflightReply, { maxBodyBytes: 0, cors: true })
}
