/**
 * Remote config, the two forms PostHog serves it in:
 *
 * - `GET /array/:token/config` (JSON) and `/array/:token/config.js` (a script that sets
 *   `window._POSTHOG_REMOTE_CONFIG[token]`): public, what posthog-js ≥ 1.26x loads at start instead of
 *   reading config from /flags. The script is served, not a 404: posthog-js would fall back to the JSON
 *   form, but the browser logs the failed script load as a console error first. Unknown tokens are 404,
 *   malformed ones 400, as PostHog's remote-config service answers; `OPTIONS` is 204 with `Allow`.
 * - `GET /api/projects/:project_id/feature_flags/:id/remote_config/` (personal key with `feature_flag:read`,
 *   or the project's secret key):
 *   posthog-node's `getRemoteConfigPayload`. As PostHog's `remote_config` action: the flag by id (digits)
 *   or key, 404 unless it is a remote-configuration flag, else its `"true"` payload (`null` when unset).
 *   posthog-node sends `?token=<project key>` with `@current`; a token names the project on every
 *   project route (api.ts, requestProject).
 */
import { AppError } from '../../common/errors.js'
import { isPlainObject } from '../../common/json.js'
import type { FlagEvaluator } from '../../flags/evaluator.js'
import type { LocalEvaluationFlag } from '../../flags/local-evaluation.js'
import { remoteConfigBody } from '../../flags/response.js'
import { requireScope } from '../../management/index.js'
import type { OperationDoc } from '../../schemas/openapi.js'
import { answer, apiRoute, orProjectSecretKey, requestProject, type ApiContext, type ApiRequest, type ApiResult } from '../api.js'
import { json } from '../reply.js'
import type { Router } from '../router.js'
import type { Handler, RequestContext } from '../types.js'

export const REMOTE_CONFIG_OPERATIONS = [
  {
    operationId: 'feature_flags_remote_config',
    method: 'get',
    path: '/api/projects/:project_id/feature_flags/:id/remote_config/',
    summary: 'The "true" payload of a remote-configuration flag, by id or key (404 for other flags).',
    tag: 'feature_flags',
    scope: 'feature_flag:read',
    query: [{ name: 'token', description: 'Project API key: names the project over the path (401 when unknown or not visible to the key).', schema: { type: 'string' } }],
    responses: { 200: 'RemoteConfigPayload' },
  },
] as const satisfies readonly OperationDoc[]

export const REMOTE_CONFIG_COMPONENTS = {
  RemoteConfigPayload: { description: 'The payload as stored (PostHog stores JSON text), or null.' },
}

/** PostHog's remote-config token check: 1–200 characters of `[A-Za-z0-9_-]`. */
const TOKEN = /^[A-Za-z0-9_-]{1,200}$/
const CACHE_HEADERS = { 'Cache-Control': 'public, max-age=300', Vary: 'Origin, Referer' }

export function registerRemoteConfigRoutes(router: Router, api: ApiContext, evaluator: FlagEvaluator): void {
  const configFor = (ctx: RequestContext): Record<string, unknown> => {
    const token = ctx.params.token
    if (!TOKEN.test(token)) throw new AppError('invalid_input', { detail: 'Invalid token.', attr: 'token' })
    const project = api.management.projects.byToken(token)
    if (!project) throw new AppError('not_found', { detail: 'No project has this API key.' })
    return remoteConfigBody(token, evaluator.cache.get(project.id).activeCount > 0)
  }

  const configJson: Handler = (ctx) => json(200, configFor(ctx), CACHE_HEADERS)
  const configJs: Handler = (ctx) => {
    const config = configFor(ctx)
    // The token passed TOKEN, so it can't break out of the string; JSON.stringify quotes it anyway.
    const key = JSON.stringify(ctx.params.token)
    const body =
      '(function() {\n' +
      '  window._POSTHOG_REMOTE_CONFIG = window._POSTHOG_REMOTE_CONFIG || {};\n' +
      `  window._POSTHOG_REMOTE_CONFIG[${key}] = {\n` +
      `    config: ${JSON.stringify(config)},\n` +
      '    siteApps: []\n' +
      '  }\n' +
      '})();'
    return { status: 200, headers: { 'Content-Type': 'application/javascript', ...CACHE_HEADERS }, body }
  }
  router.addBrowserGet('/array/:token/config', configJson).addBrowserGet('/array/:token/config.js', configJs)

  const payload = (projectId: number, ref: string): ApiResult => {
    const flags = evaluator.cache.get(projectId).definitions as LocalEvaluationFlag[]
    const flag = /^\d+$/.test(ref) ? flags.find((f) => f.id === Number(ref)) : flags.find((f) => f.key === ref)
    if (!flag || flag.deleted || !flag.is_remote_configuration) throw new AppError('not_found')
    const payloads = isPlainObject(flag.filters.payloads) ? flag.filters.payloads : {}
    // Python's `payloads.get("true") or None`: a falsy payload is answered as null.
    const value = payloads.true || null
    return answer(200, JSON.stringify(value))
  }
  const personal = apiRoute(api, { scope: null }, (req: ApiRequest) => {
    requireScope(req.principal, 'feature_flag:read')
    return payload(requestProject(api, req).id, req.params.id)
  })
  for (const op of REMOTE_CONFIG_OPERATIONS) {
    router.add(op.method, op.path, orProjectSecretKey(api, personal, (req) => payload(req.projectId, req.params.id)), { maxBodyBytes: 0 })
  }
}
