/**
 * /api/projects/:project_id/cohorts/ — the cohort API flags need: list, create, read, change (soft delete
 * with PATCH `{"deleted": true}`), adding or removing a static cohort's persons, what uses a cohort (`used_in`),
 * the activity these writes log (scope `Cohort`, as PostHog's viewset logs them), and a dynamic cohort's
 * calculations (the counts of its persons the calculator made, management/cohorts/calculator.ts). The operation table is also published by /api/schema/.
 * The routes that read persons are in cohort-persons.ts.
 */
import { pageEnvelope, parsePage } from '../../common/pagination.js'
import { ACTIVITY_QUERY, activityPageSchema } from '../../schemas/activity-log.js'
import {
  cohortAddPersonsSchema,
  cohortCalculationPageSchema,
  cohortCreateSchema,
  cohortMembersChangedSchema,
  cohortPageSchema,
  cohortRemovePersonSchema,
  cohortSchema,
  cohortUpdateSchema,
  cohortUsedInSchema,
} from '../../schemas/cohort.js'
import { compileSerializer } from '../../schemas/index.js'
import { PAGE_QUERY, type OperationDoc } from '../../schemas/openapi.js'
import {
  activityPageEnvelope,
  addPersonsToStaticCohort,
  addCsvMembers,
  createCohort,
  csvMembers,
  parseActivityPage,
  removePersonFromStaticCohort,
  type CohortActor,
  type CohortListQuery,
  type StaticCohortMembers,
} from '../../management/index.js'
import { answer, intParam, projectRoute, type ApiContext, type ApiResult, type ProjectApiRequest } from '../api.js'
import { formBody, readForm } from '../forms.js'
import type { Router } from '../router.js'

const COHORTS = '/api/projects/:project_id/cohorts'
const TAG = 'cohorts'

export const COHORT_OPERATIONS = [
  {
    operationId: 'cohorts_list',
    method: 'get',
    path: `${COHORTS}/`,
    summary: 'List live cohorts, newest first.',
    tag: TAG,
    scope: 'cohort:read',
    query: [
      ...PAGE_QUERY,
      { name: 'type', description: '`static` or `dynamic` cohorts only (any other value: both).', schema: { type: 'string' } },
      { name: 'search', description: 'Cohorts whose name contains this, case-insensitively.', schema: { type: 'string' } },
      { name: 'hide_behavioral_cohorts', description: '`true`: leave out dynamic cohorts that flags cannot use (event filters, themselves or in a cohort they reference).', schema: { type: 'string' } },
    ],
    responses: { 200: 'PaginatedCohortList' },
  },
  { operationId: 'cohorts_create', method: 'post', path: `${COHORTS}/`, summary: 'Create a cohort (JSON, or a multipart form whose `csv` file names a static cohort\'s persons).', tag: TAG, scope: 'cohort:write', requestBody: 'CohortCreate', responses: { 201: 'Cohort' } },
  // Before `:id/`: the router takes the first pattern that matches.
  { operationId: 'cohorts_all_activity_retrieve', method: 'get', path: `${COHORTS}/activity/`, summary: "Activity of the project's cohorts, newest first.", tag: TAG, scope: 'activity_log:read', query: ACTIVITY_QUERY, responses: { 200: 'ActivityLogPage' } },
  { operationId: 'cohorts_retrieve', method: 'get', path: `${COHORTS}/:id/`, summary: 'A cohort (deleted ones too).', tag: TAG, scope: 'cohort:read', responses: { 200: 'Cohort' } },
  { operationId: 'cohorts_partial_update', method: 'patch', path: `${COHORTS}/:id/`, summary: 'Change a cohort; `{"deleted": true}` soft-deletes it; a multipart form\'s `csv` file adds persons to a static one.', tag: TAG, scope: 'cohort:write', requestBody: 'CohortUpdate', responses: { 200: 'Cohort' } },
  { operationId: 'cohorts_add_persons_to_static_cohort_partial_update', method: 'patch', path: `${COHORTS}/:id/add_persons_to_static_cohort/`, summary: 'Add persons, by UUID, to a static cohort.', tag: TAG, scope: 'cohort:write', requestBody: 'CohortAddPersons', responses: { 200: 'CohortMembersChanged' } },
  { operationId: 'cohorts_used_in_retrieve', method: 'get', path: `${COHORTS}/:id/used_in/`, summary: 'What uses the cohort: live flags that evaluate it (directly or through cohorts), insights and live cohorts that name it.', tag: TAG, scope: 'cohort:read', responses: { 200: 'CohortUsedIn' } },
  { operationId: 'cohorts_calculation_history_retrieve', method: 'get', path: `${COHORTS}/:id/calculation_history/`, summary: "The cohort's calculations (counts of its persons), newest first.", tag: TAG, scope: 'cohort:read', query: PAGE_QUERY, responses: { 200: 'CohortCalculationPage' } },
  { operationId: 'cohorts_activity_retrieve', method: 'get', path: `${COHORTS}/:id/activity/`, summary: 'Activity of one cohort, newest first.', tag: TAG, scope: 'activity_log:read', query: ACTIVITY_QUERY, responses: { 200: 'ActivityLogPage' } },
  { operationId: 'cohorts_remove_person_from_static_cohort_partial_update', method: 'patch', path: `${COHORTS}/:id/remove_person_from_static_cohort/`, summary: 'Remove a person, by UUID, from a static cohort.', tag: TAG, scope: 'cohort:write', requestBody: 'CohortRemovePerson', responses: { 200: 'CohortMembersChanged' } },
] as const satisfies readonly OperationDoc[]

export const COHORT_COMPONENTS = {
  Cohort: cohortSchema,
  CohortCreate: cohortCreateSchema,
  CohortUpdate: cohortUpdateSchema,
  CohortAddPersons: cohortAddPersonsSchema,
  CohortRemovePerson: cohortRemovePersonSchema,
  CohortMembersChanged: cohortMembersChangedSchema,
  CohortUsedIn: cohortUsedInSchema,
  CohortCalculationPage: cohortCalculationPageSchema,
  PaginatedCohortList: cohortPageSchema,
}

type OperationId = (typeof COHORT_OPERATIONS)[number]['operationId']

/** A CSV of persons a cohort's create or update may carry: ≈400,000 distinct ids of 40 characters. */
const UPLOAD_MAX_BYTES = 16 * 1024 * 1024

/** The cohort fields a form gives as booleans and as JSON text, as the serializer's fields read them. */
const COHORT_FORM_FIELDS = { booleans: ['is_static', 'deleted'], json: ['filters', 'groups', 'query', '_create_static_person_ids'] }

/** PostHog's list filters; values it does not know are ignored, as its viewset ignores them. */
function listQuery(query: URLSearchParams): CohortListQuery {
  const type = query.get('type')
  return {
    type: type === 'static' || type === 'dynamic' ? type : null,
    search: query.get('search'),
    hideBehavioural: (query.get('hide_behavioral_cohorts') ?? 'false').toLowerCase() === 'true',
  }
}

/** `members` writes static cohorts' persons (persons.db); without it their routes are not served. */
export function registerCohortRoutes(router: Router, api: ApiContext, maxBodyBytes: number, members: StaticCohortMembers | null): void {
  const cohorts = api.management.cohorts
  const json = {
    cohort: compileSerializer(cohortSchema),
    page: compileSerializer(cohortPageSchema),
    changed: compileSerializer(cohortMembersChangedSchema),
    activity: compileSerializer(activityPageSchema),
    usedIn: compileSerializer(cohortUsedInSchema),
    calculations: compileSerializer(cohortCalculationPageSchema),
  }
  const actor = (req: ProjectApiRequest): CohortActor => ({ organizationId: req.project.organization_id, userId: req.principal.user.id })
  const activity = (req: ProjectApiRequest, id: number | null) => {
    const request = parseActivityPage(req.query)
    const page = cohorts.activity(req.project.id, id, request)
    return answer(200, json.activity(activityPageEnvelope(req.baseUrl, req.ctx.path, req.query, request, page)))
  }
  // A form (PostHog's upload) carries the cohort's fields and a `csv` of persons for a static cohort, read
  // before anything is written so a file that can't be read changes nothing. Without persons.db's writer the
  // file is left unread, as the person ids on create are.
  const bodyAndCsv = async (req: ProjectApiRequest) => {
    const form = await readForm(req.ctx)
    if (form === null) return { body: req.body, csv: null }
    const file = form.files.csv
    return { body: formBody(form.fields, COHORT_FORM_FIELDS), csv: file && members ? csvMembers(file) : null }
  }
  const handlers: Record<OperationId, (req: ProjectApiRequest) => ApiResult | Promise<ApiResult>> = {
    cohorts_list: (req) => {
      const page = parsePage(req.query)
      const { count, results } = cohorts.list(req.project.id, listQuery(req.query), page.limit, page.offset)
      return answer(200, json.page(pageEnvelope(req.baseUrl, req.ctx.path, req.query, page, count, results)))
    },
    cohorts_create: async (req) => {
      const { body, csv } = await bodyAndCsv(req)
      const created = members ? createCohort(cohorts, members, req.project.id, body, actor(req)) : cohorts.create(req.project.id, body, req.principal.user.id, actor(req))
      return answer(201, json.cohort(csv && created.is_static ? addCsvMembers(cohorts, members!, req.project.id, created.id, csv) : created))
    },
    cohorts_all_activity_retrieve: (req) => activity(req, null),
    cohorts_retrieve: (req) => answer(200, json.cohort(cohorts.get(req.project.id, intParam(req.params.id)))),
    cohorts_partial_update: async (req) => {
      const { body, csv } = await bodyAndCsv(req)
      const updated = cohorts.update(req.project.id, intParam(req.params.id), body, actor(req))
      return answer(200, json.cohort(csv && updated.is_static && !updated.deleted ? addCsvMembers(cohorts, members!, req.project.id, updated.id, csv) : updated))
    },
    cohorts_used_in_retrieve: (req) => answer(200, json.usedIn(cohorts.usedIn(req.project.id, intParam(req.params.id)))),
    cohorts_activity_retrieve: (req) => activity(req, intParam(req.params.id)),
    cohorts_calculation_history_retrieve: (req) => {
      const { limit, offset } = parsePage(req.query)
      const { count, results } = cohorts.calculationHistory(req.project.id, intParam(req.params.id), limit, offset)
      const link = (at: number) => `?limit=${limit}&offset=${at}`
      return answer(200, json.calculations({ results, count, next: offset + limit >= count ? null : link(offset + limit), previous: offset === 0 ? null : link(Math.max(0, offset - limit)) }))
    },
    cohorts_add_persons_to_static_cohort_partial_update: (req) => {
      addPersonsToStaticCohort(cohorts, members!, req.project.id, intParam(req.params.id), req.body, actor(req))
      return answer(200, json.changed({ success: true }))
    },
    cohorts_remove_person_from_static_cohort_partial_update: (req) => {
      removePersonFromStaticCohort(cohorts, members!, req.project.id, intParam(req.params.id), req.body, actor(req))
      return answer(200, json.changed({ success: true }))
    },
  }
  for (const op of COHORT_OPERATIONS) {
    // Static cohorts' persons live in persons.db: without its writer these routes are not served (and the
    // person ids on create are ignored).
    if (!members && op.path.endsWith('_static_cohort/')) continue
    const takesUpload = op.operationId === 'cohorts_create' || op.operationId === 'cohorts_partial_update'
    router.add(op.method, op.path, projectRoute(api, { scope: op.scope }, handlers[op.operationId]), { maxBodyBytes: takesUpload ? Math.max(maxBodyBytes, UPLOAD_MAX_BYTES) : maxBodyBytes })
  }
}
