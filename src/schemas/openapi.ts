/**
 * Builds an OpenAPI 3.1 document from operation descriptions and the very schema objects the validators
 * and serializers compile, so the published contract can't drift from what the server enforces.
 */
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from '../common/pagination.js'
import { errorEnvelopeSchema, type JsonSchema } from './shared.js'

export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete'

export interface QueryParamDoc {
  readonly name: string
  readonly description: string
  readonly schema: JsonSchema
}

/** The `limit` and `offset` of every limit/offset list (common/pagination.ts). */
export const PAGE_QUERY: readonly QueryParamDoc[] = [
  { name: 'limit', description: `Page size (default ${DEFAULT_PAGE_SIZE}, at most ${MAX_PAGE_SIZE}).`, schema: { type: 'integer', minimum: 1 } },
  { name: 'offset', description: 'Index of the first result.', schema: { type: 'integer', minimum: 0 } },
]

/** The lists that also answer CSV (src/http/csv.ts). */
export const CSV_QUERY: readonly QueryParamDoc[] = [
  { name: 'format', description: '`csv` for the page as CSV (up to 10,000 rows unless limit asks fewer; Accept: text/csv asks the same).', schema: { type: 'string', enum: ['json', 'csv'] } },
]

export interface OperationDoc {
  readonly operationId: string
  readonly method: HttpMethod
  /** Router pattern: `:name` parameters, trailing slash. */
  readonly path: string
  /** Path parameters that are strings (uuids, keys) where the name alone says an integer id. */
  readonly stringParams?: readonly string[]
  readonly summary: string
  readonly tag: string
  /** Personal key scope; null = no authentication. */
  readonly scope: string | null
  /** A second scope the key needs as well (PostHog's `required_scopes` of two, as persons of a cohort). */
  readonly alsoScope?: string
  readonly query?: readonly QueryParamDoc[]
  /** Component name of the JSON body. */
  readonly requestBody?: string
  /** Status → component name of the body, or null for an empty body. */
  readonly responses: Readonly<Record<number, string | null>>
  /** The media type of a successful answer's body, when it is not JSON (a download). */
  readonly responseType?: string
}

export interface OpenApiInfo {
  title: string
  version: string
  description: string
}

const ERROR_STATUSES: Record<number, string> = {
  400: 'Validation error: `code` names the broken rule, `attr` the field.',
  401: 'No personal API key, or an unknown or revoked one.',
  403: 'The key lacks the scope, or the user the right.',
  404: 'Unknown object, or a project the key cannot see.',
}

/** `:project_id` is a string (`@current` works); other path parameters are the ids of objects. */
function pathParameter(name: string, op: OperationDoc): Record<string, unknown> {
  const isString = name === 'project_id' || name.endsWith('uuid') || op.stringParams?.includes(name)
  const schema = isString ? { type: 'string' } : { type: 'integer' }
  return { name, in: 'path', required: true, schema }
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` })

function operationObject(op: OperationDoc): Record<string, unknown> {
  const params = [...op.path.matchAll(/:([A-Za-z_]+)/g)].map((m) => pathParameter(m[1], op))
  for (const q of op.query ?? []) params.push({ name: q.name, in: 'query', required: false, description: q.description, schema: q.schema })
  const responses: Record<string, unknown> = {}
  for (const [status, component] of Object.entries(op.responses)) {
    responses[status] =
      component === null
        ? { description: Number(status) >= 400 ? 'Refused, with an empty body.' : 'Empty body.' }
        : { description: 'OK', content: { [Number(status) < 300 ? (op.responseType ?? 'application/json') : 'application/json']: { schema: ref(component) } } }
  }
  if (op.scope !== null) {
    for (const [status, description] of Object.entries(ERROR_STATUSES)) {
      if (status === '400' && !op.requestBody && !op.query?.length) continue
      responses[status] ??= { description, content: { 'application/json': { schema: ref('Error') } } }
    }
  }
  const operation: Record<string, unknown> = {
    operationId: op.operationId,
    summary: op.summary,
    tags: [op.tag],
    parameters: params,
    responses,
    security: op.scope === null ? [] : [{ PersonalAPIKey: op.alsoScope ? [op.scope, op.alsoScope] : [op.scope] }],
  }
  if (op.scope !== null) operation['x-required-scope'] = op.scope
  if (op.alsoScope) operation['x-also-required-scope'] = op.alsoScope
  if (op.requestBody) {
    operation.requestBody = { required: true, content: { 'application/json': { schema: ref(op.requestBody) } } }
  }
  return operation
}

/** `/api/projects/:project_id/feature_flags/` → `/api/projects/{project_id}/feature_flags/`. */
export function openApiPath(pattern: string): string {
  return pattern.replace(/:([A-Za-z_]+)/g, '{$1}')
}

export function openApiDocument(
  info: OpenApiInfo,
  operations: readonly OperationDoc[],
  components: Readonly<Record<string, JsonSchema>>,
): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {}
  for (const op of operations) {
    const path = openApiPath(op.path)
    paths[path] ??= {}
    paths[path][op.method] = operationObject(op)
  }
  const schemas = { ...components, Error: errorEnvelopeSchema }
  const used = new Set(operations.flatMap((op) => [op.requestBody, ...Object.values(op.responses)]))
  for (const name of used) {
    if (name && !(name in schemas)) throw new Error(`OpenAPI: operation refers to unknown component ${name}`)
  }
  return {
    openapi: '3.1.0',
    info,
    paths,
    components: {
      schemas,
      securitySchemes: {
        PersonalAPIKey: { type: 'http', scheme: 'bearer', description: 'A personal API key (`phx_…`) with the scope named by each operation.' },
      },
    },
  }
}
