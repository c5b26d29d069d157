/**
 * PostHog's capture-logs routes (/i/v1/logs, /i/v1/metrics), where its SDKs and OpenTelemetry's exporters send:
 * the project API key as `?token=` or `Authorization: Bearer`, a body of OTLP protobuf or JSON (gzip or not),
 * 200 `{}` once the rows are stored (those of concurrent requests in one commit), 503 (the exporter sends again)
 * when the store failed. The body goes to the store's thread undecoded (src/storage/otlp-ingest.ts).
 */
import { AppError } from '../../common/errors.js'
import type { ProjectResolver } from '../../management/index.js'
import { storeFailure, type OtlpIngest } from '../../storage/otlp-ingest.js'
import { rawJson } from '../reply.js'
import type { Router } from '../router.js'
import { preflightReply } from '../server.js'

export interface OtlpSignal {
  /** The route, e.g. /i/v1/logs. */
  path: string
  /** What is stored, for the 503's detail ("logs"). */
  what: string
  store: OtlpIngest
}

export function registerOtlpIngest(router: Router, signal: OtlpSignal, deps: { resolveProject: ProjectResolver; maxBytes: number; now?: () => number }): void {
  const now = deps.now ?? Date.now
  router.add(
    'post',
    signal.path,
    async (ctx) => {
      const token = new URLSearchParams(ctx.query).get('token') ?? /^Bearer\s+(\S+)\s*$/i.exec(ctx.headers.authorization ?? '')?.[1] ?? null
      const project = deps.resolveProject(token, null)
      const encoding = ctx.headers['content-encoding']?.trim().toLowerCase() || null
      try {
        await signal.store.ingest({ body: ctx.body ?? Buffer.alloc(0), encoding, maxBytes: deps.maxBytes, teamId: project.id, nowMs: now() })
      } catch (error) {
        // The thread's own refusals (an unreadable body, a failed write) come back as they were made; a thread
        // that stopped is a failed write.
        throw error instanceof AppError ? error : storeFailure(signal.what, error)
      }
      return rawJson(200, '{}')
    },
    { maxBodyBytes: deps.maxBytes, cors: true },
  )
  router.add('options', signal.path, preflightReply, { maxBodyBytes: 0, cors: true })
}
