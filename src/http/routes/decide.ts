/**
 * Flag evaluation for SDKs: `/decide` (`v=1..4`, the contract uses 3) and `/flags` (`v=2`, what current
 * SDKs call). Bodies are decoded like capture bodies (JSON, gzip, base64 or lz64 forms). The version
 * picks the answer's shape as PostHog's flag service does (posthog-semantics §1.3).
 */
import { AppError } from '../../common/errors.js'
import { normaliseUuid, uuidv4 } from '../../common/ids.js'
import type { CookielessFlagIds } from '../../flags/cookieless.js'
import type { FlagEvaluator } from '../../flags/evaluator.js'
import { readDecideRequest, requestRuntime } from '../../flags/request.js'
import { flagsJson, minimalFlagsJson, type ResponseShape } from '../../flags/response.js'
import type { EvaluationList } from '../../flags/types.js'
import { decodeBody } from '../../ingestion/decode.js'
import { hasRoundedId, parseJson, parseJsonWithExactIds } from '../../ingestion/parse.js'
import type { ProjectResolver } from '../../management/index.js'
import { clientIp } from '../client-ip.js'
import { rawJson } from '../reply.js'
import type { Router } from '../router.js'
import type { Handler, Reply, RequestContext } from '../types.js'

const DECIDE_COMPRESSION = ['gzip', 'lz64']
const FLAGS_COMPRESSION = ['gzip', 'gzip-js']
/** What `requestRuntime` reads beside Origin, which every route reads. */
const RUNTIME_HEADERS = ['user-agent', 'referer', 'sec-fetch-mode', 'sec-fetch-site'] as const

const NO_FLAGS: EvaluationList = { results: [], errorsWhileComputingFlags: false }

interface Endpoint {
  via: 'decide' | 'flags'
}

/**
 * A boolean query parameter as PostHog's flag service reads one (`config`, `only_evaluate_survey_feature_flags`):
 * present means true (`?config`, `?config=`, any other word) unless it says false, 0, no or off.
 */
function queryFlag(query: URLSearchParams, name: string): boolean | undefined {
  const value = query.get(name)
  return value === null ? undefined : !FALSE_WORDS.has(value.toLowerCase())
}
const FALSE_WORDS = new Set(['false', '0', 'no', 'off'])

/** `v` (or `version`), an empty one missing; what isn't a 32-bit integer reads as 1, as Rust's `parse::<i32>` fails. */
function queryVersion(query: URLSearchParams): number | undefined {
  const raw = query.get('v') || query.get('version')
  if (!raw) return undefined
  const v = /^[+-]?\d+$/.test(raw) ? Number(raw) : Number.NaN
  return Number.isInteger(v) && v >= -(2 ** 31) && v < 2 ** 31 ? v : 1
}

function version(query: URLSearchParams, endpoint: Endpoint): { shape: ResponseShape; withConfig: boolean } {
  const v = queryVersion(query)
  if (endpoint.via === 'flags') {
    const config = queryFlag(query, 'config')
    // PostHog's defaults when both are missing: the newest shape, with the config
    if (v === undefined && config === undefined) return { shape: 'v4', withConfig: true }
    return { shape: v === undefined || v < 2 ? 'v3' : v === 2 ? 'v4' : 'typed', withConfig: config === true }
  }
  const shape: ResponseShape = v === undefined || v <= 1 ? 'v1' : v === 2 ? 'v2' : v === 3 ? 'v3' : 'v4'
  return { shape, withConfig: true }
}

function readBody(ctx: RequestContext, query: URLSearchParams, maxBytes: number): unknown {
  const body = ctx.body && ctx.body.length > 0 ? ctx.body : query.get('data') !== null ? Buffer.from(query.get('data')!, 'utf8') : null
  if (!body) throw new AppError('invalid_payload', { detail: 'Malformed request data: the body is empty.' })
  const text = decodeBody({
    body,
    contentType: ctx.headers['content-type'],
    contentEncoding: ctx.headers['content-encoding'],
    compression: query.get('compression'),
    maxBytes,
  })
  const parsed = parseJson(text)
  // An integer id past 2^53 was rounded: read again, keeping its literal (PostHog hashes the literal).
  return hasRoundedId(parsed) ? parseJsonWithExactIds(text) : parsed
}

export function decideHandler(evaluator: FlagEvaluator, resolve: ProjectResolver, maxBytes: number, endpoint: Endpoint, cookieless?: CookielessFlagIds): Handler {
  const compression = endpoint.via === 'decide' ? DECIDE_COMPRESSION : FLAGS_COMPRESSION
  return (ctx) => {
    const query = new URLSearchParams(ctx.query)
    const { shape, withConfig } = version(query, endpoint)
    // PostHog's flag service answers with the caller's X-Request-Id when it is a UUID.
    const requestId = normaliseUuid(ctx.headers['x-request-id'] ?? '') ?? uuidv4()
    const options = { shape, withConfig, supportedCompression: compression, requestId, evaluatedAt: Date.now() }
    if (ctx.method === 'get' || ctx.method === 'head') {
      // PostHog's flag service answers any GET /flags with no flags and the compression list alone, its shape
      // by `v` without the POST defaults; HEAD with 200 (the server drops the body).
      if (endpoint.via === 'flags') return rawJson(200, minimalFlagsJson((queryVersion(query) ?? 1) >= 2 ? 'v4' : 'v3', options))
      // Legacy /decide evaluates a GET's `data` and answers a bare GET with the config and no flags.
      if (!query.get('data')) return rawJson(200, flagsJson(NO_FLAGS, options))
    }
    const request = readDecideRequest(readBody(ctx, query, maxBytes))
    const project = resolve(request.token ?? query.get('token') ?? query.get('api_key'), request.projectIdHint)
    if (request.disableFlags) return rawJson(200, flagsJson(NO_FLAGS, options))
    if (request.distinctId === null) throw new AppError('missing_distinct_id')
    const distinctId = cookieless
      ? cookieless.distinctId(project, request.distinctId, {
          ip: clientIp(ctx),
          origin: ctx.headers.origin,
          userAgent: ctx.headers['user-agent'],
          sentAt: query.get('_'),
          timezone: request.timezone,
          hashExtra: request.cookielessHashExtra,
        })
      : request.distinctId
    const scope = {
      runtime: requestRuntime(request.evaluationRuntime, ctx.headers),
      surveyOnly: queryFlag(query, 'only_evaluate_survey_feature_flags') === true,
      environments: request.evaluationEnvironments,
    }
    const result = evaluator.evaluate(project.id, request, distinctId, clientIp(ctx), scope)
    const answer = (r: EvaluationList): Reply => rawJson(200, flagsJson(r, options))
    return result instanceof Promise ? result.then(answer) : answer(result)
  }
}

export function registerDecideRoutes(router: Router, evaluator: FlagEvaluator, resolve: ProjectResolver, maxBytes: number, cookieless?: CookielessFlagIds): void {
  for (const [path, endpoint] of [
    ['/decide/', { via: 'decide' }],
    ['/flags/', { via: 'flags' }],
  ] as const) {
    const options = { maxBodyBytes: maxBytes, cors: true, label: path, batchPostAnswers: true, readsHeaders: RUNTIME_HEADERS }
    router.add(['post', 'get'], path, decideHandler(evaluator, resolve, maxBytes, endpoint, cookieless), options)
    router.add('options', path, () => ({ status: 204, headers: { Allow: 'GET, POST, OPTIONS, HEAD' } }), options)
  }
}
