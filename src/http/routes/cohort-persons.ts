/**
 * GET /api/projects/:project_id/cohorts/:id/persons/ — a cohort's persons, as PostHog's CohortViewSet.persons
 * answers them: newest first (`created_at DESC, id DESC`), `limit` (100 by default) and `offset`, narrowed by
 * `search` and `properties` as the persons list is, each person with at most 10 distinct ids, and no count:
 * `next` whenever the page is full, `previous` only when a whole page lies before it. PostHog reads its
 * precalculated members; skylark evaluates the cohort when asked (management/cohorts/condition.ts), so a
 * dynamic cohort with behavioural conditions is a 400. Both `cohort:read` and `person:read` are needed.
 */
import { AppError } from '../../common/errors.js'
import { parsePage } from '../../common/pagination.js'
import { cohortCondition } from '../../management/index.js'
import type { PersonReader } from '../../persons/index.js'
import { PAGE_QUERY, type OperationDoc } from '../../schemas/openapi.js'
import { intParam, projectRoute, type ApiContext, type ProjectApiRequest } from '../api.js'
import type { Router } from '../router.js'
import { personObject } from './person-object.js'
import { PERSON_COMPONENTS, personFilters } from './persons.js'
import { parsePropertyFilters } from './property-filters.js'

/** PostHog's get_serialized_people(…, distinct_id_limit=10). */
const DISTINCT_ID_LIMIT = 10

export const COHORT_PERSONS_OPERATIONS = [
  {
    operationId: 'cohorts_persons_retrieve',
    method: 'get',
    path: '/api/projects/:project_id/cohorts/:id/persons/',
    summary: "The cohort's persons, newest first: its static members, or the persons its conditions match now.",
    tag: 'cohorts',
    scope: 'cohort:read',
    alsoScope: 'person:read',
    query: [
      ...PAGE_QUERY,
      { name: 'search', description: 'Persons whose email contains this (any case), or with this distinct id or uuid.', schema: { type: 'string' } },
      { name: 'properties', description: 'Person property, HogQL and cohort filters that must all hold (JSON).', schema: { type: 'string' } },
    ],
    responses: { 200: 'CohortPersons' },
  },
] as const satisfies readonly OperationDoc[]

export const COHORT_PERSONS_COMPONENTS = {
  CohortPersons: {
    type: 'object',
    properties: { results: { type: 'array', items: PERSON_COMPONENTS.Person }, next: { type: ['string', 'null'] }, previous: { type: ['string', 'null'] } },
  },
}

export function registerCohortPersonRoutes(router: Router, api: ApiContext, persons: PersonReader, maxBodyBytes: number): void {
  const cohortById = (teamId: number, id: number) => api.management.cohorts.record(teamId, id)
  const list = async (req: ProjectApiRequest) => {
    const teamId = req.project.id
    const cohort = cohortById(teamId, intParam(req.params.id))
    if (cohort === null) throw new AppError('not_found')
    const members = cohort.is_static ? { staticCohort: cohort.id, teamId } : cohortCondition(cohort.id, cohortById, teamId)
    const narrowed = parsePropertyFilters(req.query.get('properties'), personFilters(api, teamId)) ?? []
    const page = parsePage(req.query)
    const rows = await persons.scans.listing.listPersons(teamId, { search: req.query.get('search') || null, properties: [members, ...narrowed], ...page })
    const link = (offset: number) => {
      const params = new URLSearchParams(req.query)
      params.set('offset', String(offset))
      return `${req.baseUrl}${req.ctx.path}?${params.toString()}`
    }
    return {
      results: rows.map((person) => {
        const object = personObject(person)
        return { ...object, distinct_ids: object.distinct_ids.slice(0, DISTINCT_ID_LIMIT) }
      }),
      next: rows.length >= page.limit ? link(page.offset + page.limit) : null,
      previous: page.offset - page.limit >= 0 ? link(page.offset - page.limit) : null,
    }
  }
  for (const op of COHORT_PERSONS_OPERATIONS) {
    router.add(op.method, op.path, projectRoute(api, { scope: op.scope, alsoScope: op.alsoScope }, list), { maxBodyBytes })
  }
}
