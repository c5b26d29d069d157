/**
 * The lists posthog-js asks the API host for by project key (`?token=`), public and with CORS as PostHog serves
 * them. Without an answer its callbacks never run: `getSurveys` reports a load error and
 * `getActiveMatchingSurveys` and `getEarlyAccessFeatures` never call back.
 *
 * - `GET /api/surveys/`: skylark has no surveys, so `{"surveys": [], "survey_config": null}`.
 * - `GET /api/web_experiments/`: none either, `{"experiments": []}`.
 * - `GET /api/early_access_features/`: the project's early-access flags as features (src/flags/early-access.ts),
 *   filtered by `stage` (repeatable; `beta` when absent), as PostHog's `early_access_features` view.
 *
 * A missing or unknown token is the 401 `invalid_api_key` of the other public routes.
 */
import { AppError } from '../../common/errors.js'
import { earlyAccessFeatures } from '../../flags/early-access.js'
import type { FlagEvaluator } from '../../flags/evaluator.js'
import type { LocalEvaluationFlag } from '../../flags/local-evaluation.js'
import type { ApiContext } from '../api.js'
import { json } from '../reply.js'
import type { Router } from '../router.js'
import type { Handler, RequestContext } from '../types.js'

export function registerPublicListRoutes(router: Router, api: ApiContext, evaluator: FlagEvaluator): void {
  /** The id of the project `?token=` names (PostHog's get_token also reads `api_key`). */
  const projectOf = (query: URLSearchParams): number => {
    const token = query.get('token') ?? query.get('api_key')
    const project = token ? api.management.projects.byToken(token) : undefined
    if (!project) throw new AppError('invalid_api_key')
    return project.id
  }
  const listed = (answer: (projectId: number, query: URLSearchParams) => unknown): Handler => (ctx: RequestContext) => {
    const query = new URLSearchParams(ctx.query)
    return json(200, answer(projectOf(query), query))
  }

  const routes: [string, Handler][] = [
    ['/api/surveys/', listed(() => ({ surveys: [], survey_config: null }))],
    ['/api/web_experiments/', listed(() => ({ experiments: [] }))],
    [
      '/api/early_access_features/',
      listed((projectId, query) => {
        const stages = query.getAll('stage')
        const flags = evaluator.cache.get(projectId).definitions as LocalEvaluationFlag[]
        // Every feature skylark knows is in "beta".
        const features = stages.length === 0 || stages.includes('beta') ? earlyAccessFeatures(projectId, flags) : []
        return { earlyAccessFeatures: features }
      }),
    ],
  ]
  for (const [path, handler] of routes) router.addBrowserGet(path, handler)
}
