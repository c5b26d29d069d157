/**
 * The flag endpoints that evaluate: local-evaluation definitions (project-scoped, and the two forms
 * server SDKs poll with a personal key and `?token=`, answered with ETag / 304), evaluation reasons for a
 * user, the caller's own flags, and the blast radius of a release condition.
 *
 * Scopes: `local_evaluation` is `feature_flag:read` (the contract); `evaluation_reasons` and `my_flags`
 * are GETs the contract leaves open → `feature_flag:read`; `user_blast_radius` is a POST → `feature_flag:write`.
 */
import { createHash } from 'node:crypto'
import { AppError, ValidationError } from '../../common/errors.js'
import { isPlainObject } from '../../common/json.js'
import { blastRadius, personsWithFlag, type AudienceSource } from '../../flags/audience.js'
import type { FlagEvaluator } from '../../flags/evaluator.js'
import { evaluateFlag } from '../../flags/index.js'
import { localEvaluationBody, type LocalEvaluationFlag } from '../../flags/local-evaluation.js'
import type { ProjectFlags } from '../../flags/project-cache.js'
import { readDecideRequest } from '../../flags/request.js'
import { requireScope } from '../../management/index.js'
import type { StaticCohortWriter } from '../../persons/index.js'
import type { OperationDoc } from '../../schemas/openapi.js'
import { answer, apiRoute, intParam, orProjectSecretKey, projectRoute, tokenProject, TOKEN_DETAIL, type ApiContext, type ApiRequest, type ApiResult, type ProjectApiRequest } from '../api.js'
import type { Router } from '../router.js'
import type { RequestContext } from '../types.js'

const FLAGS = '/api/projects/:project_id/feature_flags'
const TAG = 'feature_flags'
const FREE_FORM = { type: 'object', additionalProperties: true } as const

export const FLAG_EVALUATION_OPERATIONS = [
  { operationId: 'feature_flags_local_evaluation', method: 'get', path: `${FLAGS}/local_evaluation/`, summary: 'Flag definitions for SDK local evaluation (ETag / If-None-Match answered 304).', tag: TAG, scope: 'feature_flag:read', query: [{ name: 'send_cohorts', description: 'Include the dynamic cohorts the flags use (bare, or any value but false/0/no/off); without it a flag reaching one plain person-property cohort gets that cohort inlined as conditions.', schema: { type: 'string' } }], responses: { 200: 'LocalEvaluation', 304: null } },
  { operationId: 'feature_flags_evaluation_reasons', method: 'get', path: `${FLAGS}/evaluation_reasons/`, summary: 'Each flag’s value for a user and why.', tag: TAG, scope: 'feature_flag:read', query: [{ name: 'distinct_id', description: 'The user.', schema: { type: 'string' } }, { name: 'groups', description: 'JSON object: group type → group key.', schema: { type: 'string' } }], responses: { 200: 'EvaluationReasons' } },
  { operationId: 'feature_flags_my_flags', method: 'get', path: `${FLAGS}/my_flags/`, summary: 'Every active flag evaluated for the calling user.', tag: TAG, scope: 'feature_flag:read', responses: { 200: 'MyFlags' } },
  { operationId: 'feature_flags_create_static_cohort_for_flag', method: 'post', path: `${FLAGS}/:id/create_static_cohort_for_flag/`, summary: 'A static cohort of every stored person the flag is on for (optionally: with `variant`).', tag: TAG, scope: 'feature_flag:write', requestBody: 'StaticCohortForFlagRequest', responses: { 200: 'StaticCohortForFlag' } },
  { operationId: 'feature_flags_user_blast_radius', method: 'post', path: `${FLAGS}/user_blast_radius/`, summary: 'How many stored persons (or groups) a release condition matches.', tag: TAG, scope: 'feature_flag:write', requestBody: 'BlastRadiusRequest', responses: { 200: 'BlastRadius' } },
] as const satisfies readonly OperationDoc[]

export const FLAG_EVALUATION_COMPONENTS = {
  LocalEvaluation: {
    type: 'object',
    properties: { flags: { type: 'array', items: FREE_FORM }, group_type_mapping: FREE_FORM, cohorts: FREE_FORM },
    required: ['flags', 'group_type_mapping', 'cohorts'],
  },
  EvaluationReasons: FREE_FORM,
  MyFlags: { type: 'array', items: { type: 'object', properties: { feature_flag: FREE_FORM, value: {} } } },
  BlastRadiusRequest: { type: 'object', properties: { condition: FREE_FORM, group_type_index: { type: ['integer', 'null'] } }, required: ['condition'] },
  BlastRadius: { type: 'object', properties: { users_affected: { type: 'integer' }, total_users: { type: 'integer' } } },
  StaticCohortForFlagRequest: { type: 'object', properties: { variant: { type: ['string', 'null'] } } },
  StaticCohortForFlag: { type: 'object', properties: { cohort: FREE_FORM }, required: ['cohort'] },
}

type OperationId = (typeof FLAG_EVALUATION_OPERATIONS)[number]['operationId']

export interface FlagEvaluationDeps {
  evaluator: FlagEvaluator
  audience: AudienceSource
  /** Writes static cohort membership into persons.db (a writable connection). */
  staticCohorts: StaticCohortWriter
  now: () => number
}

function minimalFlag(f: LocalEvaluationFlag) {
  return {
    id: f.id,
    team_id: f.team_id,
    name: f.name,
    key: f.key,
    filters: f.filters,
    deleted: f.deleted,
    active: f.active,
    ensure_experience_continuity: f.ensure_experience_continuity,
    has_encrypted_payloads: f.has_encrypted_payloads ?? false,
    version: f.version,
  }
}

/** `send_cohorts` as the SDKs send it (bare: `?token=…&send_cohorts`); an explicit false value turns it off. */
function sendCohorts(query: URLSearchParams): boolean {
  const value = query.get('send_cohorts')
  return value !== null && !/^(false|f|0|no|n|off)$/i.test(value)
}

interface DefinitionsText {
  body: string
  tag: string
  headers: Record<string, string>
}

/**
 * A project's definitions text and tag, built once per compiled project and cohort choice: SDKs poll every
 * few seconds, and the cache hands out a new ProjectFlags whenever flags, cohorts or group types change.
 */
const definitionsTexts = new WeakMap<ProjectFlags, Map<boolean, DefinitionsText>>()

function definitionsOf(project: ProjectFlags, sendCohorts: boolean): DefinitionsText {
  let byChoice = definitionsTexts.get(project)
  if (!byChoice) definitionsTexts.set(project, (byChoice = new Map()))
  let text = byChoice.get(sendCohorts)
  if (!text) {
    const body = JSON.stringify(localEvaluationBody(project.definitions as LocalEvaluationFlag[], project.cohorts, project.groupTypeMapping, sendCohorts))
    const tag = createHash('sha1').update(body).digest('hex').slice(0, 32)
    byChoice.set(sendCohorts, (text = { body, tag, headers: { ETag: `W/"${tag}"`, 'Cache-Control': 'private, must-revalidate' } }))
  }
  return text
}

export function registerFlagEvaluationRoutes(router: Router, api: ApiContext, deps: FlagEvaluationDeps, maxBodyBytes: number): void {
  const { evaluator } = deps

  /**
   * Serves definitions with a weak ETag so polling SDKs get 304 while nothing changed. As PostHog, the
   * client's tag is compared without `W/` and quotes, and both answers say `private, must-revalidate`.
   */
  const definitions = (req: { ctx: RequestContext }, teamId: number, sendCohorts: boolean): ApiResult => {
    const { body, tag, headers } = definitionsOf(evaluator.cache.get(teamId), sendCohorts)
    const match = req.ctx.headers['if-none-match']
    if (match?.split(',').some((m) => m.trim().replace(/^W\//, '').replace(/^"+|"+$/g, '') === tag)) return answer(304, null, headers)
    return answer(200, body, headers)
  }

  /**
   * `?token=<project key>` plus a personal key that can see that project (the SDKs' polling forms). Rust's
   * `/flags/definitions` always sends cohorts; Django's `local_evaluation` only when asked.
   */
  const byToken = (req: ApiRequest, alwaysCohorts: boolean): ApiResult => {
    requireScope(req.principal, 'feature_flag:read')
    const token = req.query.get('token') ?? req.query.get('api_key')
    const project = token ? tokenProject(api, req.principal, token) : null
    if (!project) throw new AppError('invalid_api_key', { detail: TOKEN_DETAIL })
    return definitions(req, project.id, alwaysCohorts || sendCohorts(req.query))
  }

  const handlers: Record<OperationId, (req: ProjectApiRequest) => ApiResult | Promise<ApiResult>> = {
    feature_flags_local_evaluation: (req) => definitions(req, req.project.id, sendCohorts(req.query)),

    feature_flags_evaluation_reasons: (req) => {
      const distinctId = req.query.get('distinct_id')
      if (!distinctId) throw new ValidationError('invalid_input', 'distinct_id is required', 'distinct_id')
      let groups: unknown = {}
      try {
        groups = JSON.parse(req.query.get('groups') ?? '{}')
      } catch {
        throw new ValidationError('invalid_input', 'groups must be a JSON object.', 'groups')
      }
      const request = readDecideRequest({ distinct_id: distinctId, groups: isPlainObject(groups) ? groups : {} })
      const { project, input } = evaluator.prepare(req.project.id, request, distinctId, null)
      const out: Record<string, unknown> = {}
      for (const flag of project.definitions) {
        if (!flag.active) {
          out[flag.key] = { value: false, evaluation: { reason: 'disabled', condition_index: null } }
          continue
        }
        const result = evaluateFlag(project.set, flag.key, input)
        if (!result) continue
        out[flag.key] = {
          value: result.variant ?? result.enabled,
          evaluation: { reason: result.reason.code, condition_index: result.reason.condition_index },
        }
      }
      return out
    },

    feature_flags_my_flags: async (req) => {
      const distinctId = req.principal.user.distinct_id
      const request = readDecideRequest({ distinct_id: distinctId })
      const result = await evaluator.evaluate(req.project.id, request, distinctId, null)
      const byKey = new Map(result.results.map((r) => [r.key, r]))
      const project = evaluator.cache.get(req.project.id)
      return answer(
        200,
        (project.definitions as LocalEvaluationFlag[])
          .filter((f) => f.active)
          .map((f) => {
            const r = byKey.get(f.key)
            return { feature_flag: minimalFlag(f), value: r ? (r.variant ?? r.enabled) : false }
          }),
      )
    },

    // PostHog answers 201 {cohort}; the contract says 200 for this action, and the contract wins on codes.
    feature_flags_create_static_cohort_for_flag: async (req) => {
      const id = intParam(req.params.id)
      const project = evaluator.cache.get(req.project.id)
      const flag = project.definitions.find((f) => f.id === id)
      if (!flag) throw new AppError('not_found')
      const body = req.body as { variant?: unknown }
      const variant = isPlainObject(body) && typeof body.variant === 'string' ? body.variant : null
      const cohort = api.management.cohorts.create(
        req.project.id,
        { name: `Users with feature flag ${flag.key} enabled at ${new Date(deps.now()).toISOString()}`, is_static: true },
        req.principal.user.id,
      )
      const members = await personsWithFlag(project, deps.audience, req.project.id, flag.key, variant, deps.now())
      api.management.cohorts.setCount(req.project.id, cohort.id, deps.staticCohorts.replaceMembers(req.project.id, cohort.id, members))
      return answer(200, { cohort: api.management.cohorts.get(req.project.id, cohort.id) })
    },

    feature_flags_user_blast_radius: async (req) => {
      const body = req.body as { condition?: unknown; group_type_index?: unknown }
      if (!isPlainObject(body) || !('condition' in body)) {
        throw new ValidationError('invalid_input', 'Missing condition for which to get blast radius')
      }
      const condition = isPlainObject(body.condition) ? body.condition : {}
      const index = body.group_type_index ?? null
      if (index !== null && !(Number.isInteger(index) && (index as number) >= 0 && (index as number) <= 4)) {
        throw new ValidationError('invalid_input', 'group_type_index must be an integer from 0 to 4.', 'group_type_index')
      }
      const project = evaluator.cache.get(req.project.id)
      return blastRadius(project, deps.audience, req.project.id, condition, index as number | null, deps.now())
    },
  }

  for (const op of FLAG_EVALUATION_OPERATIONS) {
    const route = projectRoute(api, { scope: op.scope }, handlers[op.operationId])
    const handler =
      op.operationId === 'feature_flags_local_evaluation'
        ? orProjectSecretKey(api, route, (req) => definitions(req, req.projectId, sendCohorts(req.query)))
        : route
    router.add(op.method, op.path, handler, { maxBodyBytes })
  }
  for (const [path, alwaysCohorts] of [
    ['/api/feature_flag/local_evaluation/', false],
    ['/flags/definitions/', true],
  ] as const) {
    const personal = apiRoute(api, { scope: null }, (req) => byToken(req, alwaysCohorts))
    const handler = orProjectSecretKey(api, personal, (req) => definitions(req, req.projectId, alwaysCohorts || sendCohorts(req.query)))
    router.add('get', path, handler, { maxBodyBytes: 0, label: path })
  }
}
