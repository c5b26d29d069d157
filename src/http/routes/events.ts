/**
 * Reading stored events: GET /api/projects/:id/events/ (scope `query:read`), newest first, with filters
 * `event`, `distinct_id`, `after`, `before` (ISO 8601 or epoch) and `properties` (PostHog's JSON list of
 * `{key, value, operator}`), so users can see what arrived. Also the project's ingestion warnings.
 */
import { AppError, ValidationError } from '../../common/errors.js'
import { isPlainObject } from '../../common/json.js'
import { pageEnvelope, parsePage } from '../../common/pagination.js'
import { parseTimestamp } from '../../ingestion/timestamps.js'
import type { PersonReader } from '../../persons/index.js'
import type { EventFilter, EventPropertyFilter, EventStore, PropertyOperator } from '../../storage/events/index.js'
import { projectRoute, type ApiContext } from '../api.js'
import type { Router } from '../router.js'

const OPERATORS: readonly PropertyOperator[] = ['exact', 'is_not', 'icontains', 'not_icontains', 'is_set', 'is_not_set', 'gt', 'gte', 'lt', 'lte']

function timeParam(query: URLSearchParams, name: string): number | undefined {
  const raw = query.get(name)
  if (raw === null || raw === '') return undefined
  const ms = parseTimestamp(raw)
  if (ms === null) throw new ValidationError('invalid_input', `${name} must be an ISO 8601 timestamp.`, name)
  return ms
}

function propertiesParam(raw: string | null): EventPropertyFilter[] | undefined {
  if (raw === null || raw === '') return undefined
  let parsed: unknown
  try {
    parsed = JSON.parse(raw)
  } catch {
    throw new ValidationError('invalid_input', 'properties must be a JSON list of property filters.', 'properties')
  }
  if (isPlainObject(parsed) && Array.isArray(parsed.values)) parsed = parsed.values
  if (!Array.isArray(parsed)) throw new ValidationError('invalid_input', 'properties must be a JSON list of property filters.', 'properties')
  return parsed.map((f, i) => {
    if (!isPlainObject(f) || typeof f.key !== 'string') {
      throw new ValidationError('invalid_input', `properties[${i}] needs a string key.`, 'properties')
    }
    const operator = (f.operator ?? 'exact') as PropertyOperator
    if (!OPERATORS.includes(operator)) {
      throw new ValidationError('invalid_input', `properties[${i}].operator must be one of ${OPERATORS.join(', ')}.`, 'properties')
    }
    const value = f.value
    const scalar = (v: unknown) => v === null || ['string', 'number', 'boolean'].includes(typeof v)
    if (!(scalar(value) || value === undefined || (Array.isArray(value) && value.every(scalar)))) {
      throw new ValidationError('invalid_input', `properties[${i}].value must be a scalar or a list of scalars.`, 'properties')
    }
    return { key: f.key, operator, value: value as EventPropertyFilter['value'] }
  })
}

export function registerEventRoutes(router: Router, api: ApiContext, events: EventStore, persons: PersonReader | undefined, maxBodyBytes: number): void {
  router.add(
    'get',
    '/api/projects/:project_id/events/',
    projectRoute(api, { scope: 'query:read' }, async (req) => {
      const q = req.query
      const filter: EventFilter = {
        teamId: req.project.id,
        event: q.get('event') || undefined,
        distinctId: q.get('distinct_id') ?? undefined,
        after: timeParam(q, 'after'),
        before: timeParam(q, 'before'),
        properties: propertiesParam(q.get('properties')),
      }
      const page = parsePage(q)
      let count: number
      let results
      try {
        ;[count, results] = await Promise.all([events.count(filter), events.list(filter, page)])
      } catch (error) {
        if (error instanceof AppError) throw error
        throw new AppError('service_unavailable', { detail: 'The event store is not reachable right now.', retryAfter: 5 })
      }
      return pageEnvelope(
        req.baseUrl,
        req.ctx.path,
        q,
        page,
        count,
        results.map((e) => ({ ...e, elements: [] })),
      )
    }),
    { maxBodyBytes },
  )
  if (persons) {
    router.add(
      'get',
      '/api/projects/:project_id/ingestion_warnings/',
      projectRoute(api, { scope: 'project:read' }, (req) => {
        const page = parsePage(req.query)
        const total = persons.countIngestionWarnings(req.project.id)
        const results = persons.listIngestionWarnings(req.project.id, page.limit, page.offset)
        return pageEnvelope(req.baseUrl, req.ctx.path, req.query, page, total, results)
      }),
      { maxBodyBytes },
    )
  }
}
