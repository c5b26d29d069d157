/**
 * The lists posthog-js asks the API host for by project key (`?token=`), public and with CORS as PostHog serves
 * them. Without an answer its callbacks never run: `getSurveys` reports a load error and
 * `getActiveMatchingSurveys` and `getEarlyAccessFeatures` never call back.
 *
 * - `GET /api/surveys/`: skylark has no surveys, so `{"surveys": [], "survey_config": null}`.
 * - `GET /api/web_experiments/`: none either, `{"experiments": []}`.
 * - `GET /api/early_access_features/`: the project's early access features in the stages `stage` names
 *   (repeatable; `beta` when absent), in PostHog's public shape, as its `early_access_features` view.
 *
 * A missing or unknown token is the 401 `invalid_api_key` of the other public routes.
 */
import { AppError } from '../../common/errors.js'
import { publicEarlyAccessFeatureListSchema } from '../../schemas/early-access-feature.js'
import { compileSerializer } from '../../schemas/index.js'
import type { ApiContext } from '../api.js'
import { json, rawJson } from '../reply.js'
import type { Router } from '../router.js'
import type { Handler, Reply, RequestContext } from '../types.js'

export function registerPublicListRoutes(router: Router, api: ApiContext): void {
  /** The id of the project `?token=` names (PostHog's get_token also reads `api_key`). */
  const projectOf = (query: URLSearchParams): number => {
    const token = query.get('token') ?? query.get('api_key')
    const project = token ? api.management.projects.byToken(token) : undefined
    if (!project) throw new AppError('invalid_api_key')
    return project.id
  }
  const listed = (answer: (projectId: number, query: URLSearchParams) => Reply): Handler => (ctx: RequestContext) => {
    const query = new URLSearchParams(ctx.query)
    return answer(projectOf(query), query)
  }
  const features = compileSerializer(publicEarlyAccessFeatureListSchema)

  const routes: [string, Handler][] = [
    ['/api/surveys/', listed(() => json(200, { surveys: [], survey_config: null }))],
    ['/api/web_experiments/', listed(() => json(200, { experiments: [] }))],
    [
      '/api/early_access_features/',
      listed((projectId, query) => {
        const stages = query.getAll('stage')
        const earlyAccessFeatures = api.management.earlyAccess.publicList(projectId, stages.length > 0 ? stages : ['beta'])
        return rawJson(200, features({ earlyAccessFeatures }))
      }),
    ],
  ]
  for (const [path, handler] of routes) router.addBrowserGet(path, handler)
}
