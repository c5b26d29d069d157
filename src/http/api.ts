/**
 * The management API's request pipeline: authenticate the personal key, check the scope, resolve the
 * project, parse the JSON body, call the use-case, serialise the answer. Route files declare only what is
 * specific to them.
 */
import { AppError, ValidationError } from '../common/errors.js'
import { MAX_NESTING, nestingExceeds } from '../common/json.js'
import type { Management, Principal, Project, Scope } from '../management/index.js'
import { requireScope } from '../management/index.js'
import { isForm } from './forms.js'
import { rawJson, empty } from './reply.js'
import type { Handler, Reply, RequestContext } from './types.js'

export interface ApiRequest {
  readonly ctx: RequestContext
  readonly principal: Principal
  readonly params: Record<string, string>
  readonly query: URLSearchParams
  /** Parsed JSON body; `{}` when the request had none. */
  readonly body: unknown
  /** Base URL for absolute links (pagination). */
  readonly baseUrl: string
}

export interface ProjectApiRequest extends ApiRequest {
  readonly project: Project
}

/** A result with an explicit status (and optional headers); plain values are sent with the route's status. */
export class Answer {
  constructor(
    readonly status: number,
    readonly body: unknown,
    readonly headers?: Record<string, string>,
  ) {}
}

export type ApiResult = Answer | object

export function answer(status: number, body: unknown = null, headers?: Record<string, string>): Answer {
  return new Answer(status, body, headers)
}

export interface ApiContext {
  management: Management
  baseUrl: () => string
}

/** What HogQL queries read of a project's actions and cohorts, by id or name (the query and export routes). */
export function definitionLookups({ management }: ApiContext) {
  return {
    actionById: (teamId: number, id: number) => management.actions.byId(teamId, id),
    cohortById: (teamId: number, id: number) => management.cohorts.record(teamId, id),
    cohortIdsNamed: (teamId: number, name: string) => management.cohorts.idsNamed(teamId, name),
  }
}

function parseBody(ctx: RequestContext): unknown {
  // A form is read by the route that takes one (forms.ts); as JSON it has no fields.
  if (!ctx.body || ctx.body.length === 0 || isForm(ctx)) return {}
  let body: unknown
  try {
    body = JSON.parse(ctx.body.toString('utf8'))
  } catch (error) {
    throw new ValidationError('parse_error', `JSON parse error - ${(error as Error).message}`)
  }
  // Deeper bodies overflowed the stack of the readers and serialisers after this (a 500 instead of a 400).
  if (nestingExceeds(body, MAX_NESTING)) throw new ValidationError('parse_error', `JSON parse error - objects and arrays may nest at most ${MAX_NESTING} levels deep.`)
  return body
}

function toReply(result: ApiResult, defaultStatus: number): Reply {
  if (!(result instanceof Answer)) return rawJson(defaultStatus, JSON.stringify(result))
  if (result.body === null || result.body === undefined) return empty(result.status, result.headers)
  const body = typeof result.body === 'string' ? result.body : JSON.stringify(result.body)
  return rawJson(result.status, body, result.headers)
}

export interface RouteSpec {
  scope: Scope | null
  /** A second scope the key needs as well, checked after the first. */
  alsoScope?: Scope
  /** Status of a plain value result (200, or 201 for creation). */
  status?: number
}

function base(api: ApiContext, ctx: RequestContext): ApiRequest {
  const principal = api.management.auth.authenticate(ctx.headers.authorization)
  return {
    ctx,
    principal,
    params: ctx.params,
    query: new URLSearchParams(ctx.query),
    body: parseBody(ctx),
    baseUrl: api.baseUrl(),
  }
}

/** A route that needs a personal key and a scope but no project. */
export function apiRoute(
  api: ApiContext,
  spec: RouteSpec,
  fn: (req: ApiRequest) => ApiResult | Promise<ApiResult>,
): Handler {
  return (ctx) => {
    const req = base(api, ctx)
    if (spec.scope) requireScope(req.principal, spec.scope)
    return finish(fn(req), spec.status ?? 200)
  }
}

function finish(result: ApiResult | Promise<ApiResult>, status: number): Reply | Promise<Reply> {
  return result instanceof Promise ? result.then((r) => toReply(r, status)) : toReply(result, status)
}

export const TOKEN_DETAIL = 'The token query parameter must be a valid project API key.'

/** The project a project API key names, if the personal key can see it. */
export function tokenProject(api: ApiContext, principal: Principal, token: string): Project | null {
  const ref = api.management.projects.byToken(token)
  return ref ? api.management.auth.visibleProject(principal, String(ref.id)) : null
}

/**
 * The project a request under /api/projects/:project_id/ is about. As PostHog's TeamAndOrgViewSetMixin, a
 * `?token=` (project API key) names it over the path (posthog-node sends `@current` with its key). An
 * unknown token, or one of a project the key can't see, is 401 alike: keys can't probe other tokens.
 */
export function requestProject(api: ApiContext, req: ApiRequest): Project {
  const token = req.query.get('token')
  if (!token) return api.management.auth.project(req.principal, req.params.project_id)
  const project = tokenProject(api, req.principal, token)
  if (!project) throw new AppError('invalid_api_key', { detail: TOKEN_DETAIL })
  return project
}

export interface SecretKeyRequest {
  readonly ctx: RequestContext
  readonly params: Record<string, string>
  readonly query: URLSearchParams
  /** The project whose secret key authenticated the request. */
  readonly projectId: number
}

/**
 * Server SDKs' flag reads (definitions, remote config) also take a project secret key (`Bearer phs_…`,
 * PostHog's ProjectSecretAPIKeyAuthentication, posthog-node's `secretKey`). It reads its own project's
 * flags and nothing else: a `?token=` must name that project (401 otherwise, as a wrong token) and so must a
 * project id in the path (404 otherwise, as a project out of sight). Any other credential goes to `personal`.
 */
export function orProjectSecretKey(api: ApiContext, personal: Handler, fn: (req: SecretKeyRequest) => ApiResult): Handler {
  return (ctx) => {
    const secret = /^Bearer\s+(phs_\S+)\s*$/i.exec(ctx.headers.authorization ?? '')?.[1]
    if (secret === undefined) return personal(ctx)
    const project = api.management.projects.bySecret(secret)
    if (!project) throw new AppError('invalid_personal_api_key', { detail: 'Project secret API key found in request Authorization header is invalid.' })
    const query = new URLSearchParams(ctx.query)
    const token = query.get('token') ?? query.get('api_key')
    if (token && token !== project.apiToken) throw new AppError('invalid_api_key', { detail: TOKEN_DETAIL })
    const pathId = ctx.params.project_id
    if (pathId !== undefined && pathId !== '@current' && pathId !== String(project.id)) {
      throw new AppError('not_found', { detail: 'Project not found.' })
    }
    return finish(fn({ ctx, params: ctx.params, query, projectId: project.id }), 200)
  }
}

/** A route under /api/projects/:project_id/ — the project must be visible to the key. */
export function projectRoute(
  api: ApiContext,
  spec: RouteSpec,
  fn: (req: ProjectApiRequest) => ApiResult | Promise<ApiResult>,
): Handler {
  return (ctx) => {
    const req = base(api, ctx)
    if (spec.scope) requireScope(req.principal, spec.scope)
    if (spec.alsoScope) requireScope(req.principal, spec.alsoScope)
    return finish(fn({ ...req, project: requestProject(api, req) }), spec.status ?? 200)
  }
}

export const noContent = (): Answer => answer(204)

/** Parses a path parameter that must be a positive integer id; anything else is a 404, as in Django. */
export function intParam(value: string | undefined): number {
  if (value === undefined || !/^\d{1,15}$/.test(value)) throw new AppError('not_found')
  return Number(value)
}
