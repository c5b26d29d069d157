/**
 * The cohort routes that read persons.db, as PostHog's CohortViewSet actions:
 * - GET cohorts/:id/persons/: a cohort's persons, newest first (`created_at DESC, id DESC`), `limit` (100 by
 *   default) and `offset`, narrowed by `search` and `properties` as the persons list is, each person with at most
 *   10 distinct ids, and no count: `next` whenever the page is full, `previous` only when a whole page lies before
 *   it. Both `cohort:read` and `person:read` are needed. As CSV (../csv.ts), PostHog's export of them: `id`,
 *   `email`, `name`, `created_at`, the properties and distinct ids first, the actor fields left out.
 * - GET cohorts/:id/duplicate_as_static_cohort/ (`cohort:write`): a new static cohort, "<name> (static copy)",
 *   holding the dynamic cohort's persons now. PostHog fills it in the background; here it is filled before the
 *   answer, so its `count` is already known.
 * PostHog reads precalculated members; skylark evaluates the cohort when asked (management/cohorts/condition.ts),
 * its behavioural conditions read from the event store first (evaluate.ts).
 */
import { AppError, ValidationError } from '../../common/errors.js'
import { evaluatedCohortCondition, performedReader, type CohortRecord } from '../../management/index.js'
import type { PersonReader, StaticCohortWriter } from '../../persons/index.js'
import { cohortSchema } from '../../schemas/cohort.js'
import { compileSerializer } from '../../schemas/index.js'
import { CSV_QUERY, PAGE_QUERY, type OperationDoc } from '../../schemas/openapi.js'
import type { EventStore } from '../../storage/events/index.js'
import { answer, intParam, projectRoute, type ApiContext, type ApiResult, type ProjectApiRequest } from '../api.js'
import { csvAnswer, csvHeaders, listRead } from '../csv.js'
import type { Router } from '../router.js'
import { personObject } from './person-object.js'
import { PERSON_COMPONENTS, personFilters } from './persons.js'

/** PostHog's get_serialized_people(…, distinct_id_limit=10). */
const DISTINCT_ID_LIMIT = 10
/** The distinct-id text a static copy may hold (≈400,000 ids of 40 characters): read and written in one go. */
const MAX_COPY_CHARS = 16 * 1024 * 1024

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
      ...CSV_QUERY,
      { name: 'search', description: 'Persons whose email contains this (any case), or with this distinct id or uuid.', schema: { type: 'string' } },
      { name: 'properties', description: 'Person property, HogQL and cohort filters that must all hold (JSON).', schema: { type: 'string' } },
    ],
    responses: { 200: 'CohortPersons' },
  },
  {
    operationId: 'cohorts_duplicate_as_static_cohort_retrieve',
    method: 'get',
    path: '/api/projects/:project_id/cohorts/:id/duplicate_as_static_cohort/',
    summary: 'A new static cohort, "<name> (static copy)", of the persons the dynamic cohort matches now.',
    tag: 'cohorts',
    scope: 'cohort:write',
    responses: { 200: 'Cohort' },
  },
] as const satisfies readonly OperationDoc[]

export const COHORT_PERSONS_COMPONENTS = {
  CohortPersons: {
    type: 'object',
    properties: { results: { type: 'array', items: PERSON_COMPONENTS.Person }, next: { type: ['string', 'null'] }, previous: { type: ['string', 'null'] } },
  },
}

type OperationId = (typeof COHORT_PERSONS_OPERATIONS)[number]['operationId']

/** The columns PostHog's cohort persons CSV puts first, and those it leaves out. */
const CSV_FIRST = ['id', 'email', 'name', 'created_at', 'properties', 'distinct_ids']
const CSV_LEFT_OUT = new Set(['value_at_data_point', 'uuid', 'type', 'is_identified', 'matched_recordings'])

/** A person as a row of PostHog's cohort persons CSV: its email out of its properties into a column of its own. */
function csvPerson(person: ReturnType<typeof personObject>): Record<string, unknown> {
  const { email, ...rest } = person.properties
  const row: Record<string, unknown> = email ? { ...person, email, properties: rest } : { ...person }
  const rank = (key: string) => {
    const at = CSV_FIRST.indexOf(key)
    return at < 0 ? CSV_FIRST.length : at
  }
  return Object.fromEntries(Object.entries(row).filter(([key]) => !CSV_LEFT_OUT.has(key)).sort(([a], [b]) => rank(a) - rank(b)))
}

/**
 * `copies` writes static cohorts' members (without it the copy is not served); `events` reads behavioural
 * conditions (without it they are refused).
 */
export function registerCohortPersonRoutes(
  router: Router,
  api: ApiContext,
  persons: PersonReader,
  copies: StaticCohortWriter | null,
  events: EventStore | null,
  maxBodyBytes: number,
): void {
  const cohorts = api.management.cohorts
  const cohortById = (teamId: number, id: number) => cohorts.record(teamId, id)
  const performed = events && performedReader(events, api.management.actions)
  const conditionOf = (cohort: CohortRecord) => evaluatedCohortCondition(cohort.id, cohortById, cohort.team_id, performed, Date.now())
  const cohortOf = (req: ProjectApiRequest): CohortRecord => {
    const cohort = cohortById(req.project.id, intParam(req.params.id))
    if (cohort === null) throw new AppError('not_found')
    return cohort
  }
  const cohortJson = compileSerializer(cohortSchema)

  const list = async (req: ProjectApiRequest) => {
    const teamId = req.project.id
    const { csv, page } = listRead(req)
    const cohort = cohortOf(req)
    const members = cohort.is_static ? { staticCohort: cohort.id, teamId } : await conditionOf(cohort)
    const narrowed = (await personFilters(api, teamId, req.query.get('properties'), performed)) ?? []
    const rows = await persons.scans.listing.listPersons(teamId, { search: req.query.get('search') || null, properties: [members, ...narrowed], ...page })
    const results = rows.map((person) => {
      const object = personObject(person)
      return { ...object, distinct_ids: object.distinct_ids.slice(0, DISTINCT_ID_LIMIT) }
    })
    if (csv) return csvAnswer(results.map(csvPerson))
    const link = (offset: number) => {
      const params = new URLSearchParams(req.query)
      params.set('offset', String(offset))
      return `${req.baseUrl}${req.ctx.path}?${params.toString()}`
    }
    return {
      results,
      next: rows.length >= page.limit ? link(page.offset + page.limit) : null,
      previous: page.offset - page.limit >= 0 ? link(page.offset - page.limit) : null,
    }
  }

  const duplicate = async (req: ProjectApiRequest) => {
    const teamId = req.project.id
    const cohort = cohortOf(req)
    if (cohort.is_static) throw new ValidationError('invalid', 'Cannot duplicate a static cohort as a static cohort.')
    const ids = await persons.scans.listing.distinctIdsMatching(teamId, [await conditionOf(cohort)], MAX_COPY_CHARS)
    if (ids === null) throw new ValidationError('invalid', `Cohort ${cohort.id} holds too many persons to copy at once.`)
    const copy = cohorts.create(teamId, { name: `${cohort.name} (static copy)`, is_static: true }, req.principal.user.id)
    cohorts.setCount(teamId, copy.id, copies!.replaceMembers(teamId, copy.id, ids))
    return answer(200, cohortJson(cohorts.get(teamId, copy.id)))
  }

  const handlers: Record<OperationId, (req: ProjectApiRequest) => Promise<ApiResult>> = {
    cohorts_persons_retrieve: list,
    cohorts_duplicate_as_static_cohort_retrieve: duplicate,
  }
  for (const op of COHORT_PERSONS_OPERATIONS) {
    if (op.operationId === 'cohorts_duplicate_as_static_cohort_retrieve' && copies === null) continue
    const spec = { scope: op.scope, alsoScope: 'alsoScope' in op ? op.alsoScope : undefined }
    router.add(op.method, op.path, projectRoute(api, spec, handlers[op.operationId]), { maxBodyBytes, readsHeaders: csvHeaders(op) })
  }
}
