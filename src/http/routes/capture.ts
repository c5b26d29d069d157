/**
 * Public capture routes. /capture/ and /batch/ are the contract's; /e/, /i/v0/e/, /track/, /engage/ and
 * /i/v0/ai/batch/ are the paths PostHog's SDKs use for the same thing. Every one accepts every payload shape (one event,
 * an array, a batch object), as PostHog capture does. 200 `{"status": 1}` is sent only once the events
 * are durable in the spool; `beacon=1` (sendBeacon) gets 204.
 *
 * /i/v1/analytics/events is PostHog's capture v1 (posthog-node with POSTHOG_CAPTURE_MODE=v1): its own body
 * and headers, the key in `Authorization: Bearer`, and a 200 naming each event's outcome by uuid, which the
 * SDK reads to decide what to resend. Its events go to the same spool as /batch/'s.
 */
import { AppError } from '../../common/errors.js'
import type { IngestionService } from '../../ingestion/service.js'
import { clientIp } from '../client-ip.js'
import { empty, json, JSON_HEADERS, rawJson } from '../reply.js'
import type { Router } from '../router.js'
import { preflightReply } from '../server.js'
import type { ConditionalHeader, Handler, Reply } from '../types.js'

export interface CaptureLimits {
  captureMaxBytes: number
  batchMaxBytes: number
}

/** The answer to every accepted capture: one shared object, nothing built per request. */
const OK: Reply = Object.freeze({ status: 200, headers: JSON_HEADERS, body: JSON.stringify({ status: 1 }) })
/** Most SDK requests carry no query string; they share this (nothing writes to it). */
const NO_QUERY = new URLSearchParams()

function captureHandler(ingestion: IngestionService, maxBytes: number, engage: boolean): Handler {
  return async (ctx) => {
    const query = ctx.query === '' ? NO_QUERY : new URLSearchParams(ctx.query)
    let body = ctx.body
    if (!body || body.length === 0) {
      const data = query.get('data')
      if (data === null) {
        throw new AppError('invalid_payload', {
          detail: 'No data found. Make sure to use a POST request when sending the payload in the body of the request.',
        })
      }
      body = Buffer.from(data, 'utf8')
    }
    await ingestion.capture({
      body,
      contentType: ctx.headers['content-type'],
      contentEncoding: ctx.headers['content-encoding'],
      query,
      ip: clientIp(ctx),
      maxBytes,
      engage,
    })
    if (query.get('beacon') === '1') return empty(204)
    return OK
  }
}

/** Capture v1's headers beyond the ones every request has read (REQUEST_HEADERS). */
const V1_HEADERS: readonly ConditionalHeader[] = ['user-agent', 'posthog-sdk-info', 'posthog-attempt', 'posthog-request-id', 'posthog-request-timestamp']
const NO_BODY = Buffer.alloc(0)

function captureV1Handler(ingestion: IngestionService, maxBytes: number): Handler {
  return async (ctx) => {
    const h = ctx.headers
    const response = await ingestion.captureV1({
      headers: {
        authorization: h.authorization,
        contentType: h['content-type'],
        contentEncoding: h['content-encoding'],
        userAgent: h['user-agent'],
        sdkInfo: h['posthog-sdk-info'],
        attempt: h['posthog-attempt'],
        requestId: h['posthog-request-id'],
        requestTimestamp: h['posthog-request-timestamp'],
      },
      body: ctx.body ?? NO_BODY,
      ip: clientIp(ctx),
      maxBytes,
    })
    return rawJson(200, response)
  }
}

export function registerCaptureRoutes(router: Router, ingestion: IngestionService, limits: CaptureLimits): void {
  const routes: Array<[string, number]> = [
    ['/capture/', limits.captureMaxBytes],
    ['/e/', limits.captureMaxBytes],
    ['/i/v0/e/', limits.captureMaxBytes],
    ['/track/', limits.captureMaxBytes],
    ['/engage/', limits.captureMaxBytes],
    ['/batch/', limits.batchMaxBytes],
    // posthog-node's captureAi: $ai_* events in a /batch/ body, sent apart so PostHog can take large traces
    ['/i/v0/ai/batch/', limits.batchMaxBytes],
  ]
  for (const [path, maxBytes] of routes) {
    const options = { maxBodyBytes: maxBytes, cors: true }
    router.add(['post', 'get'], path, captureHandler(ingestion, maxBytes, path === '/engage/'), options)
    router.add('options', path, preflightReply, options)
  }
  // POST only, as Rust capture's v1 router (OPTIONS answers browsers' preflight)
  const v1 = { maxBodyBytes: limits.batchMaxBytes, cors: true, readsHeaders: V1_HEADERS }
  router.add('post', '/i/v1/analytics/events', captureV1Handler(ingestion, limits.batchMaxBytes), v1)
  router.add('options', '/i/v1/analytics/events', preflightReply, { maxBodyBytes: 0, cors: true })
  router.add('get', '/', () => json(200, { status: 1, service: 'skylark' }), { maxBodyBytes: 0 })
}
