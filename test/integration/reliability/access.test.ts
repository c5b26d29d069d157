/**
 * Access control as a matrix: every management route the server registers × {no key, bad key, revoked key,
 * key of another organisation, key without the route's scope, key with only that scope}. Only the last one
 * gets through; the others get the contract's 401/403/404, and a key of another organisation learns nothing
 * (the answer for someone else's project is byte-for-byte the answer for a project that does not exist).
 * Then the public side: /decide and capture never cross projects, 401 bodies never echo a key, keys are
 * stored hashed, and no secret reaches the logs.
 */
import t from 'tap'
import { randomBytes, randomUUID } from 'node:crypto'
import { readFileSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { systemClock } from '../../../src/common/clock.js'
import { ALL_SCOPES, MembershipLevel, createManagement } from '../../../src/management/index.js'
import { dataPaths, openManagementDb } from '../../../src/storage/index.js'
import { bootstrapDataDir, serverFor, tempDir, type TestResponse } from '../../helpers/server.js'
import { registeredRoutes, storedEvents, until } from './lib.js'
import { seedPersons } from '../../helpers/seed.js'

/** What each management route needs, and what a valid request with the right key is answered. */
interface RouteCase {
  scope: string
  /** A second scope the route needs (the key "with the scope" holds both; one without the first is refused for it). */
  alsoScope?: string
  /** Statuses a valid request gets (a documented non-2xx included, such as 405 for DELETE on a flag). */
  ok: number[]
  /** Documented refusals of a valid request that depend on data, e.g. results without events. */
  okCodes?: string[]
  body?: unknown
  query?: string
  /** Overrides of path parameters for this route (fresh objects for destructive routes). */
  params?: () => Record<string, string | number>
}

const P = '/api/projects/:project_id'
const E = '/api/environments/:project_id'
const FF = `${P}/feature_flags`
const EX = `${P}/experiments`
const EA = `${P}/early_access_feature`
const SC = `${P}/scheduled_changes`
const AN = `${P}/annotations`
const EXP = `${P}/exports`
const AC = `${P}/actions`
const EH = `${P}/experiment_holdouts`
const SM = `${P}/experiment_saved_metrics`
const ORG = '/api/organizations/:organization_id/roles'

t.test('access matrix and isolation', async (t) => {
  const dataDir = tempDir('skylark-access-')
  const boot = bootstrapDataDir(dataDir)
  const db = openManagementDb(dataPaths(dataDir))
  const m = createManagement(db, systemClock)
  t.teardown(() => db.close())
  const owner = m.accounts.userByEmail('admin@skylark.local')!
  const colleague = m.accounts.createUser({ email: 'colleague@example.com' })
  m.accounts.addMember(boot.organization_id, colleague.id, MembershipLevel.member)
  // Another organisation, with its own project, owner and all-scopes key.
  const otherOrg = m.accounts.createOrganization('Other org')
  const stranger = m.accounts.createUser({ email: 'stranger@example.com' })
  m.accounts.addMember(otherOrg.id, stranger.id, MembershipLevel.owner)
  const theirProject = m.accounts.createProject(otherOrg.id, 'Theirs')
  const strangerKey = m.keys.create({ userId: stranger.id, label: 'stranger', scopes: ['*'] }).key
  const revokedKey = m.keys.create({ userId: owner.id, label: 'revoked', scopes: ['*'] }).key
  m.keys.revoke(revokedKey)
  const badKey = `phx_${randomBytes(24).toString('base64url')}`
  const keysWith = new Map<string, string>()
  const keysWithout = new Map<string, string>()
  const keyWith = (scope: string, also?: string) => {
    const scopes = also ? [scope, also] : [scope]
    const name = scopes.join(' ')
    if (!keysWith.has(name)) keysWith.set(name, m.keys.create({ userId: owner.id, label: `only ${name}`, scopes }).key)
    return keysWith.get(name)!
  }
  const keyWithout = (scope: string) => {
    // Without the scope means without what implies it too: `x:write` grants `x:read`.
    const implied = scope.endsWith(':read') ? [scope, scope.replace(':read', ':write')] : [scope]
    if (!keysWithout.has(scope)) keysWithout.set(scope, m.keys.create({ userId: owner.id, label: `all but ${scope}`, scopes: ALL_SCOPES.filter((s) => !implied.includes(s)) }).key)
    return keysWithout.get(scope)!
  }

  // Persons for the persons routes: one to read and change, one to delete under each prefix (the one key with the scope does).
  const now = Date.now()
  const personEvent = (distinctId: string) => ({ uuid: randomUUID(), event: '$pageview', distinct_id: distinctId, properties: {}, timestamp: now, team_id: boot.project_id, now })
  const seeded = ['access-kept', 'access-doomed', 'access-doomed-env']
  const [kept, doomed, doomedInEnvironment] = seedPersons(dataDir, seeded.map(personEvent), (pdb) =>
    seeded.map((id) => (pdb.prepare('SELECT uuid FROM persons p JOIN person_distinct_ids d ON d.person_id = p.id WHERE d.distinct_id = ?').get(id) as { uuid: string }).uuid),
  )

  const server = await serverFor(t, { dataDir, env: { LOG_LEVEL: 'trace' } })
  const A = boot.project_id
  const base = `/api/projects/${A}`
  const api = (method: string, path: string, body?: unknown, key = boot.personal_api_key!) => server.api(method, path, body, key)
  const created = async (method: string, path: string, body: unknown): Promise<TestResponse['body']> => {
    const res = await api(method, path, body)
    if (res.status >= 300) throw new Error(`fixture ${method} ${path}: ${res.status} ${res.text}`)
    return res.body
  }

  // Fixtures in our project; destructive routes get objects of their own.
  const flag = await created('POST', `${base}/feature_flags/`, { key: 'ours', filters: { groups: [{ properties: [], rollout_percentage: 100 }] } })
  const remote = await created('POST', `${base}/feature_flags/`, { key: 'remote', is_remote_configuration: true, filters: { groups: [{ rollout_percentage: 100 }], payloads: { true: '{"a":1}' } } })
  const cohort = await created('POST', `${base}/cohorts/`, { name: 'Ours' })
  const experiment = await created('POST', `${base}/experiments/`, { name: 'Ours', feature_flag_key: 'exp-ours', start_date: '2024-01-01T00:00:00Z', filters: { events: [{ id: '$pageview', order: 0 }], insight: 'TRENDS' } })
  const doomedExperiment = await created('POST', `${base}/experiments/`, { name: 'Doomed', feature_flag_key: 'exp-doomed' })
  const exposure = await created('POST', `${base}/experiments/`, { name: 'Exposure', feature_flag_key: 'exp-exposure', start_date: '2024-01-01T00:00:00Z' })
  const cycled = await created('POST', `${base}/experiments/`, { name: 'Cycled', feature_flag_key: 'exp-cycled', start_date: '2024-01-01T00:00:00Z' })
  const feature = await created('POST', `${base}/early_access_feature/`, { name: 'Our feature', stage: 'beta' })
  const doomedFeature = await created('POST', `${base}/early_access_feature/`, { name: 'Doomed feature', stage: 'concept' })
  // Far ahead, so the applier leaves them alone while the matrix runs.
  const change = { record_id: flag.id, model_name: 'FeatureFlag', payload: { operation: 'update_status', value: true }, scheduled_at: '2099-01-01T00:00:00Z' }
  const scheduled = await created('POST', `${base}/scheduled_changes/`, change)
  const doomedScheduled = await created('POST', `${base}/scheduled_changes/`, change)
  const annotation = await created('POST', `${base}/annotations/`, { content: 'v1.2 deployed', scope: 'project' })
  const exported = await created('POST', `${base}/exports/`, { export_format: 'text/csv', export_context: { path: `${base}/annotations/` } })
  const action = await created('POST', `${base}/actions/`, { name: 'Signed up', steps: [{ event: 'signed_up' }] })
  const holdout = await created('POST', `${base}/experiment_holdouts/`, { name: 'Our holdout', filters: [{ properties: [], rollout_percentage: 10 }] })
  const doomedHoldout = await created('POST', `${base}/experiment_holdouts/`, { name: 'Doomed holdout', filters: [{ properties: [], rollout_percentage: 10 }] })
  const metricQuery = { kind: 'ExperimentMetric', metric_type: 'mean', source: { kind: 'EventsNode', event: '$pageview' } }
  const savedMetric = await created('POST', `${base}/experiment_saved_metrics/`, { name: 'Our metric', query: metricQuery })
  const doomedMetric = await created('POST', `${base}/experiment_saved_metrics/`, { name: 'Doomed metric', query: metricQuery })
  const role = await created('POST', `/api/organizations/${boot.organization_id}/roles/`, { name: 'Readers' })
  const doomedRole = await created('POST', `/api/organizations/${boot.organization_id}/roles/`, { name: 'Doomed' })
  const membership = await created('POST', `/api/organizations/${boot.organization_id}/roles/${role.id}/role_memberships/`, { user_uuid: colleague.uuid })
  const access = await created('POST', `${base}/feature_flags/${flag.id}/role_access/`, { role_id: role.id })
  const doomedAccess = await created('POST', `${base}/feature_flags/${remote.id}/role_access/`, { role_id: role.id })
  const dashFlag = await created('POST', `${base}/feature_flags/`, { key: 'dash' })
  const enriched = await created('POST', `${base}/feature_flags/`, { key: 'enriched' })
  await created('POST', `${base}/feature_flags/${enriched.id}/dashboard/`, {})
  await created('PATCH', `${base}/feature_flags/${enriched.id}/`, { has_enriched_analytics: true })
  const dashboardId = (await created('GET', `${base}/feature_flags/${enriched.id}/`, undefined)).usage_dashboard
  // An event and a group, through /batch/, for the routes that read one.
  const eventUuid = randomUUID()
  const fixtures = [
    { event: '$groupidentify', properties: { distinct_id: 'fixture', $group_type: 'company', $group_key: 'acme', $group_set: { name: 'Acme', tier: 'gold' } } },
    { event: 'view', uuid: eventUuid, properties: { distinct_id: 'fixture', plan: 'pro', $groups: { company: 'acme' } } },
  ]
  t.equal((await server.request('POST', '/batch/', { body: { api_key: boot.project_api_key, batch: fixtures } })).status, 200)
  await until('the fixture event and group are stored', async () => (await api('GET', `${base}/groups/find/?group_type_index=0&group_key=acme`)).status === 200 && storedEvents(dataDir, 'uuid = ?', [eventUuid]).length === 1)
  const definitionId = async (list: string) => (await created('GET', `${base}/${list}/`, undefined)).results[0].id as string
  const eventDefinition = await definitionId('event_definitions')
  const propertyDefinition = await definitionId('property_definitions')
  // An asynchronous query to poll (GET …/query/:query_id/): 202 while it runs, 200 once done.
  const asyncQuery = { refresh: 'force_async', client_query_id: 'access-async', query: { kind: 'ExperimentQuery', experiment_id: experiment.id, metric: metricQuery } }
  await created('POST', `${base}/query/`, asyncQuery)
  let keyCounter = 0

  const CASES: Record<string, RouteCase> = {
    'get /api/projects/': { scope: 'project:read', ok: [200] },
    [`get ${P}/`]: { scope: 'project:read', ok: [200] },
    // The settings as they are: the matrix changes nothing.
    [`patch ${P}/`]: { scope: 'project:write', ok: [200], body: { anonymize_ips: false } },
    [`get ${E}/`]: { scope: 'project:read', ok: [200] },
    [`patch ${E}/`]: { scope: 'project:write', ok: [200], body: { anonymize_ips: false } },
    'get /api/users/:uuid/': { scope: 'user:read', ok: [200], params: () => ({ uuid: '@me' }) },
    'get /api/organizations/': { scope: 'organization:read', ok: [200] },
    'get /api/organizations/:organization_id/': { scope: 'organization:read', ok: [200] },
    'get /api/organizations/:organization_id/projects/': { scope: 'project:read', ok: [200] },
    [`get ${ORG}/`]: { scope: 'organization:read', ok: [200] },
    [`post ${ORG}/`]: { scope: 'organization:write', ok: [201], body: { name: 'New role' } },
    [`get ${ORG}/:role_id/`]: { scope: 'organization:read', ok: [200] },
    [`delete ${ORG}/:role_id/`]: { scope: 'organization:write', ok: [204], params: () => ({ role_id: doomedRole.id }) },
    [`get ${ORG}/:role_id/role_memberships/`]: { scope: 'organization:read', ok: [200] },
    [`post ${ORG}/:role_id/role_memberships/`]: { scope: 'organization:write', ok: [201], body: { user_uuid: owner.uuid } },
    [`delete ${ORG}/:role_id/role_memberships/:membership_id/`]: { scope: 'organization:write', ok: [204] },
    [`get ${FF}/`]: { scope: 'feature_flag:read', ok: [200] },
    [`post ${FF}/`]: { scope: 'feature_flag:write', ok: [201], body: () => ({ key: `created-${++keyCounter}` }) },
    [`get ${FF}/:id/`]: { scope: 'feature_flag:read', ok: [200] },
    [`patch ${FF}/:id/`]: { scope: 'feature_flag:write', ok: [200], body: { name: 'renamed' } },
    [`delete ${FF}/:id/`]: { scope: 'feature_flag:write', ok: [405] },
    [`get ${FF}/activity/`]: { scope: 'activity_log:read', ok: [200] },
    [`get ${FF}/matching_ids/`]: { scope: 'feature_flag:read', ok: [200] },
    [`post ${FF}/bulk_keys/`]: { scope: 'feature_flag:read', ok: [200], body: { ids: [1] } },
    [`post ${FF}/bulk_delete/`]: { scope: 'feature_flag:write', ok: [200], body: { ids: [999_999] } },
    [`get ${FF}/:id/status/`]: { scope: 'feature_flag:read', ok: [200] },
    [`get ${FF}/:id/dependent_flags/`]: { scope: 'feature_flag:read', ok: [200] },
    [`get ${FF}/:id/activity/`]: { scope: 'activity_log:read', ok: [200] },
    [`get ${FF}/:feature_flag_id/role_access/`]: { scope: 'feature_flag:read', ok: [200] },
    [`post ${FF}/:feature_flag_id/role_access/`]: { scope: 'feature_flag:write', ok: [201], body: { role_id: doomedRole.id }, params: () => ({ feature_flag_id: flag.id }) },
    [`get ${FF}/:feature_flag_id/role_access/:id/`]: { scope: 'feature_flag:read', ok: [200] },
    [`delete ${FF}/:feature_flag_id/role_access/:id/`]: { scope: 'feature_flag:write', ok: [204], params: () => ({ feature_flag_id: remote.id, id: doomedAccess.id }) },
    [`get ${FF}/local_evaluation/`]: { scope: 'feature_flag:read', ok: [200] },
    [`get ${FF}/evaluation_reasons/`]: { scope: 'feature_flag:read', ok: [200], query: '?distinct_id=u1' },
    [`get ${FF}/my_flags/`]: { scope: 'feature_flag:read', ok: [200] },
    [`post ${FF}/user_blast_radius/`]: { scope: 'feature_flag:write', ok: [200], body: { condition: { properties: [] } } },
    [`post ${FF}/:id/create_static_cohort_for_flag/`]: { scope: 'feature_flag:write', ok: [200], body: {} },
    [`get ${FF}/:id/remote_config/`]: { scope: 'feature_flag:read', ok: [200], params: () => ({ id: remote.id }) },
    [`post ${FF}/:id/dashboard/`]: { scope: 'feature_flag:write', ok: [200], body: {}, params: () => ({ id: dashFlag.id }) },
    [`post ${FF}/:id/enrich_usage_dashboard/`]: { scope: 'feature_flag:write', ok: [200], body: {}, params: () => ({ id: enriched.id }) },
    [`get ${P}/dashboards/:id/`]: { scope: 'dashboard:read', ok: [200], params: () => ({ id: dashboardId }) },
    [`get ${P}/cohorts/`]: { scope: 'cohort:read', ok: [200] },
    [`post ${P}/cohorts/`]: { scope: 'cohort:write', ok: [201], body: { name: 'New cohort' } },
    [`get ${P}/cohorts/:id/`]: { scope: 'cohort:read', ok: [200], params: () => ({ id: cohort.id }) },
    [`get ${P}/cohorts/activity/`]: { scope: 'activity_log:read', ok: [200] },
    [`get ${P}/cohorts/:id/activity/`]: { scope: 'activity_log:read', ok: [200], params: () => ({ id: cohort.id }) },
    [`get ${P}/cohorts/:id/used_in/`]: { scope: 'cohort:read', ok: [200], params: () => ({ id: cohort.id }) },
    [`get ${P}/cohorts/:id/calculation_history/`]: { scope: 'cohort:read', ok: [200], params: () => ({ id: cohort.id }) },
    [`get ${P}/cohorts/:id/persons/`]: { scope: 'cohort:read', alsoScope: 'person:read', ok: [200], params: () => ({ id: cohort.id }) },
    [`get ${P}/cohorts/:id/duplicate_as_static_cohort/`]: { scope: 'cohort:write', ok: [200], params: () => ({ id: cohort.id }) },
    [`patch ${P}/cohorts/:id/`]: { scope: 'cohort:write', ok: [200], body: { name: 'Renamed' }, params: () => ({ id: cohort.id }) },
    // Ours is dynamic: the key gets as far as the cohort's own rule (400 invalid), past auth, scope and project.
    [`patch ${P}/cohorts/:id/add_persons_to_static_cohort/`]: { scope: 'cohort:write', ok: [], okCodes: ['invalid'], body: { person_ids: [randomUUID()] }, params: () => ({ id: cohort.id }) },
    [`patch ${P}/cohorts/:id/remove_person_from_static_cohort/`]: { scope: 'cohort:write', ok: [], okCodes: ['invalid'], body: { person_id: randomUUID() }, params: () => ({ id: cohort.id }) },
    [`get ${EX}/`]: { scope: 'experiment:read', ok: [200] },
    [`post ${EX}/`]: { scope: 'experiment:write', ok: [201], body: () => ({ name: 'New', feature_flag_key: `exp-new-${++keyCounter}` }) },
    [`get ${EX}/requires_flag_implementation/`]: { scope: 'experiment:read', ok: [200] },
    [`get ${EX}/:id/`]: { scope: 'experiment:read', ok: [200] },
    [`patch ${EX}/:id/`]: { scope: 'experiment:write', ok: [200], body: { description: 'changed' } },
    [`delete ${EX}/:id/`]: { scope: 'experiment:write', ok: [204], params: () => ({ id: doomedExperiment.id }) },
    [`post ${EX}/:id/create_exposure_cohort_for_experiment/`]: { scope: 'experiment:write', ok: [200], params: () => ({ id: exposure.id }) },
    // Lifecycle actions on an experiment of their own; a state refusal (400 invalid) is past auth, scope and project.
    ...Object.fromEntries(
      ['launch', 'end', 'pause', 'resume', 'reset', 'archive', 'unarchive', 'ship_variant', 'duplicate'].map((action) => [
        `post ${EX}/:id/${action}/`,
        { scope: 'experiment:write', ok: [200, 201], okCodes: ['invalid'], body: action === 'ship_variant' ? { variant_key: 'test' } : {}, params: () => ({ id: cycled.id }) },
      ]),
    ),
    // No events yet: the documented "no results" refusals are what a valid request gets.
    [`get ${EX}/:id/results/`]: { scope: 'experiment:read', ok: [200], okCodes: ['no-results', 'invalid'] },
    [`get ${EX}/:id/secondary_results/`]: { scope: 'experiment:read', ok: [200], okCodes: ['no-results', 'invalid', 'invalid_input'] },
    [`get ${EA}/`]: { scope: 'early_access_feature:read', ok: [200] },
    [`post ${EA}/`]: { scope: 'early_access_feature:write', ok: [201], body: () => ({ name: `New feature ${++keyCounter}`, stage: 'beta' }) },
    [`get ${EA}/:id/`]: { scope: 'early_access_feature:read', ok: [200], params: () => ({ id: feature.id }) },
    [`patch ${EA}/:id/`]: { scope: 'early_access_feature:write', ok: [200], body: { description: 'changed' }, params: () => ({ id: feature.id }) },
    [`delete ${EA}/:id/`]: { scope: 'early_access_feature:write', ok: [204], params: () => ({ id: doomedFeature.id }) },
    [`get ${SC}/`]: { scope: 'feature_flag:read', ok: [200], query: '?model_name=FeatureFlag' },
    [`post ${SC}/`]: { scope: 'feature_flag:write', ok: [201], body: change },
    [`get ${SC}/:id/`]: { scope: 'feature_flag:read', ok: [200], params: () => ({ id: scheduled.id }) },
    [`patch ${SC}/:id/`]: { scope: 'feature_flag:write', ok: [200], body: { scheduled_at: '2098-01-01T00:00:00Z' }, params: () => ({ id: scheduled.id }) },
    [`delete ${SC}/:id/`]: { scope: 'feature_flag:write', ok: [204], params: () => ({ id: doomedScheduled.id }) },
    [`get ${AN}/`]: { scope: 'annotation:read', ok: [200] },
    [`post ${AN}/`]: { scope: 'annotation:write', ok: [201], body: { content: 'v1.3 deployed', date_marker: '2024-01-01T00:00:00Z' } },
    [`get ${AN}/:id/`]: { scope: 'annotation:read', ok: [200], params: () => ({ id: annotation.id }) },
    [`patch ${AN}/:id/`]: { scope: 'annotation:write', ok: [200], body: { content: 'changed' }, params: () => ({ id: annotation.id }) },
    [`delete ${AN}/:id/`]: { scope: 'annotation:write', ok: [405], params: () => ({ id: annotation.id }) },
    [`get ${EXP}/`]: { scope: 'export:read', ok: [200] },
    [`post ${EXP}/`]: { scope: 'export:write', ok: [201], body: { export_format: 'text/csv', export_context: { path: `${base}/annotations/` } } },
    [`get ${EXP}/:id/`]: { scope: 'export:read', ok: [200], params: () => ({ id: exported.id }) },
    [`get ${EXP}/:id/content/`]: { scope: 'export:read', ok: [200], params: () => ({ id: exported.id }) },
    [`get ${AC}/`]: { scope: 'action:read', ok: [200] },
    [`post ${AC}/`]: { scope: 'action:write', ok: [201], body: () => ({ name: `New action ${++keyCounter}`, steps: [{ event: '$pageview', url: '/pricing' }] }) },
    [`get ${AC}/:id/`]: { scope: 'action:read', ok: [200], params: () => ({ id: action.id }) },
    [`patch ${AC}/:id/`]: { scope: 'action:write', ok: [200], body: { description: 'changed' }, params: () => ({ id: action.id }) },
    [`get ${AC}/:id/references/`]: { scope: 'action:read', ok: [200], params: () => ({ id: action.id }) },
    [`delete ${AC}/:id/`]: { scope: 'action:write', ok: [405], params: () => ({ id: action.id }) },
    [`get ${EH}/`]: { scope: 'experiment_holdout:read', ok: [200] },
    [`post ${EH}/`]: { scope: 'experiment_holdout:write', ok: [201], body: { name: 'New holdout', filters: [{ properties: [], rollout_percentage: 5 }] } },
    [`get ${EH}/:id/`]: { scope: 'experiment_holdout:read', ok: [200], params: () => ({ id: holdout.id }) },
    [`patch ${EH}/:id/`]: { scope: 'experiment_holdout:write', ok: [200], body: { description: 'changed' }, params: () => ({ id: holdout.id }) },
    [`delete ${EH}/:id/`]: { scope: 'experiment_holdout:write', ok: [204], params: () => ({ id: doomedHoldout.id }) },
    [`get ${SM}/`]: { scope: 'experiment_saved_metric:read', ok: [200] },
    [`post ${SM}/`]: { scope: 'experiment_saved_metric:write', ok: [201], body: () => ({ name: `New metric ${++keyCounter}`, query: metricQuery }) },
    [`get ${SM}/:id/`]: { scope: 'experiment_saved_metric:read', ok: [200], params: () => ({ id: savedMetric.id }) },
    [`patch ${SM}/:id/`]: { scope: 'experiment_saved_metric:write', ok: [200], body: { description: 'changed' }, params: () => ({ id: savedMetric.id }) },
    [`delete ${SM}/:id/`]: { scope: 'experiment_saved_metric:write', ok: [204], params: () => ({ id: doomedMetric.id }) },
    [`get ${P}/events/`]: { scope: 'query:read', ok: [200] },
    [`post ${P}/query/`]: { scope: 'query:read', ok: [200], body: () => ({ query: { kind: 'ExperimentQuery', experiment_id: experiment.id, metric: metricQuery } }) },
    [`get ${P}/query/:query_id/`]: { scope: 'query:read', ok: [200, 202], params: () => ({ query_id: asyncQuery.client_query_id }) },
    // PostHog answers 200 whatever the id; an unknown one is cancelled as nothing.
    [`delete ${P}/query/:query_id/`]: { scope: 'query:read', ok: [200], params: () => ({ query_id: 'access-cancel' }) },
    [`get ${P}/events/values/`]: { scope: 'query:read', ok: [200], query: '?key=plan&event_name=view' },
    [`get ${P}/events/:id/`]: { scope: 'query:read', ok: [200], params: () => ({ id: eventUuid }) },
    [`get ${P}/ingestion_warnings/`]: { scope: 'project:read', ok: [200] },
    [`get ${P}/persons/`]: { scope: 'person:read', ok: [200] },
    [`get ${P}/persons/:id/`]: { scope: 'person:read', ok: [200], params: () => ({ id: kept }) },
    [`delete ${P}/persons/:id/`]: { scope: 'person:write', ok: [202], params: () => ({ id: doomed }) },
    [`post ${P}/persons/bulk_delete/`]: { scope: 'person:write', ok: [202], body: { ids: [randomUUID()] } },
    [`put ${P}/persons/:id/`]: { scope: 'person:write', ok: [202], body: { properties: { plan: 'pro' } }, params: () => ({ id: kept }) },
    [`patch ${P}/persons/:id/`]: { scope: 'person:write', ok: [202], body: { properties: { plan: 'team' } }, params: () => ({ id: kept }) },
    [`post ${P}/persons/:id/update_property/`]: { scope: 'person:write', ok: [202], body: { key: 'plan', value: 'pro' }, params: () => ({ id: kept }) },
    [`post ${P}/persons/:id/delete_property/`]: { scope: 'person:write', ok: [201], body: { $unset: 'plan' }, params: () => ({ id: kept }) },
    // The kept person has one distinct id: a split leaves it as it is.
    [`post ${P}/persons/:id/split/`]: { scope: 'person:write', ok: [201], body: {}, params: () => ({ id: kept }) },
    [`get ${P}/groups/`]: { scope: 'group:read', ok: [200], query: '?group_type_index=0' },
    [`get ${P}/groups_types/`]: { scope: 'group:read', ok: [200] },
    [`get ${P}/groups/find/`]: { scope: 'group:read', ok: [200], query: '?group_type_index=0&group_key=acme' },
    [`get ${P}/groups/related/`]: { scope: 'group:read', ok: [200], query: '?group_type_index=0&id=acme' },
    [`get ${P}/groups/property_definitions/`]: { scope: 'group:read', ok: [200] },
    [`post ${P}/groups/`]: { scope: 'group:write', ok: [201], body: () => ({ group_type_index: 0, group_key: `created-${++keyCounter}`, group_properties: { name: 'New' } }) },
    [`post ${P}/groups/update_property/`]: { scope: 'group:write', ok: [200], query: '?group_type_index=0&group_key=acme', body: { key: 'plan', value: 'pro' } },
    // The fixture group's `name`, which only this one request (the key with the scope) removes.
    [`post ${P}/groups/delete_property/`]: { scope: 'group:write', ok: [200], query: '?group_type_index=0&group_key=acme', body: { $unset: 'name' } },
    [`get ${P}/groups/property_values/`]: { scope: 'group:read', ok: [200], query: '?group_type_index=0&key=name' },
    [`get ${P}/event_definitions/`]: { scope: 'event_definition:read', ok: [200] },
    [`get ${P}/event_definitions/:id/`]: { scope: 'event_definition:read', ok: [200], params: () => ({ id: eventDefinition }) },
    [`get ${P}/property_definitions/`]: { scope: 'property_definition:read', ok: [200] },
    [`get ${P}/property_definitions/:id/`]: { scope: 'property_definition:read', ok: [200], params: () => ({ id: propertyDefinition }) },
    [`post ${P}/logs/query/`]: { scope: 'logs:read', ok: [200], body: { query: {} } },
    [`post ${P}/logs/sparkline/`]: { scope: 'logs:read', ok: [200], body: { query: {} } },
    [`get ${P}/logs/attributes/`]: { scope: 'logs:read', ok: [200] },
    [`get ${P}/logs/values/`]: { scope: 'logs:read', ok: [200], query: '?key=code' },
    [`post ${P}/metrics/query/`]: { scope: 'metrics:read', ok: [200], body: { query: { metricName: 'm', dateFrom: '2026-01-01T00:00:00Z', dateTo: '2026-01-02T00:00:00Z' } } },
    [`post ${P}/metrics/samples/`]: { scope: 'metrics:read', ok: [200], body: { query: { metricName: 'm', dateFrom: '2026-01-01T00:00:00Z' } } },
    [`get ${P}/metrics/values/`]: { scope: 'metrics:read', ok: [200] },
    [`get ${P}/metrics/attributes/`]: { scope: 'metrics:read', ok: [200] },
    [`get ${P}/metrics/attribute_values/`]: { scope: 'metrics:read', ok: [200], query: '?key=route' },
    [`get ${P}/metrics/has_metrics/`]: { scope: 'metrics:read', ok: [200] },
    [`get ${P}/metrics/overview/`]: { scope: 'metrics:read', ok: [200] },
    'get /api/feature_flag/local_evaluation/': { scope: 'feature_flag:read', ok: [200], query: `?token=${boot.project_api_key}` },
    'get /flags/definitions/': { scope: 'feature_flag:read', ok: [200], query: `?token=${boot.project_api_key}` },
  }

  // PostHog's environment paths of the team-scoped routes (src/http/routes/environments.ts): the same scopes and answers.
  for (const [key, c] of Object.entries(CASES)) {
    if (/^\w+ \/api\/projects\/:project_id\/(events|persons|groups|dashboards|ingestion_warnings|query|logs|metrics)\//.test(key)) CASES[key.replace('/api/projects/', '/api/environments/')] = c
  }
  CASES[`delete ${E}/persons/:id/`] = { ...CASES[`delete ${P}/persons/:id/`]!, params: () => ({ id: doomedInEnvironment }) }
  CASES[`post ${E}/groups/delete_property/`] = { ...CASES[`post ${P}/groups/delete_property/`]!, body: { $unset: 'tier' } }

  // Every route that takes a personal key is in the table, and the table names nothing that isn't served. The
  // public /api/ routes browsers call (CORS: the schema, posthog-js's lists by project key) take none.
  const routes = registeredRoutes().filter((r) => (r.pattern.startsWith('/api/') && !r.options.cors) || r.pattern === '/flags/definitions/')
  const served = routes.map((r) => `${r.method} ${r.pattern}`).sort()
  t.same(served, Object.keys(CASES).sort(), 'the matrix covers exactly the management routes the router serves')
  const schema = (await server.request('GET', '/api/schema/')).body as { paths: Record<string, Record<string, { 'x-required-scope'?: string; 'x-also-required-scope'?: string }>> }
  for (const [path, ops] of Object.entries(schema.paths)) {
    for (const [method, op] of Object.entries(ops)) {
      const key = `${method} ${path.replace(/\{(\w+)\}/g, ':$1')}`
      if (op['x-required-scope'] && CASES[key]) t.equal(CASES[key].scope, op['x-required-scope'], `${key}: the scope matches the OpenAPI document`)
      if (CASES[key] && (CASES[key].alsoScope || op['x-also-required-scope'])) t.equal(CASES[key].alsoScope, op['x-also-required-scope'], `${key}: the second scope matches the OpenAPI document`)
    }
  }

  const defaults: Record<string, string | number> = {
    project_id: A,
    organization_id: boot.organization_id,
    role_id: role.id,
    membership_id: membership.id,
    feature_flag_id: flag.id,
  }
  const idFor = (pattern: string): string | number =>
    pattern.includes('/role_access/') ? access.id : pattern.includes('/cohorts/') ? cohort.id : pattern.includes('/experiments/') ? experiment.id : flag.id
  const pathOf = (pattern: string, params: Record<string, string | number>) => pattern.replace(/:(\w+)/g, (_, name: string) => String(params[name] ?? (name === 'id' ? idFor(pattern) : defaults[name])))
  const missing = { project_id: 987_654, organization_id: randomUUID(), token: `phc_${randomBytes(24).toString('base64url')}` }
  const call = (method: string, path: string, key: string | null, body?: unknown) =>
    server.request(method.toUpperCase(), path, { body, headers: key === null ? {} : { authorization: `Bearer ${key}` } })

  let tried = 0
  const problems: string[] = []
  const expectRefusal = (label: string, res: TestResponse, status: number, code: string, detail?: RegExp) => {
    tried++
    if (res.status !== status || res.body?.code !== code || (detail && !detail.test(res.body?.detail))) {
      problems.push(`${label}: expected ${status} ${code}, got ${res.status} ${res.text.slice(0, 160)}`)
    }
  }
  const same = (label: string, a: TestResponse, b: TestResponse) => {
    tried++
    if (a.status !== b.status || a.text !== b.text) problems.push(`${label}: answers differ (${a.status} ${a.text.slice(0, 100)} vs ${b.status} ${b.text.slice(0, 100)})`)
  }

  for (const route of routes) {
    const key = `${route.method} ${route.pattern}`
    const c = CASES[key]
    if (!c) continue // reported above: the table must name it
    const params = { ...defaults, ...c.params?.() }
    const path = pathOf(route.pattern, params) + (c.query ?? '')
    const body = () => (typeof c.body === 'function' ? (c.body as () => unknown)() : c.body)
    const label = `${route.method.toUpperCase()} ${route.pattern}`

    expectRefusal(`${label}, no key`, await call(route.method, path, null, body()), 401, 'not_authenticated')
    expectRefusal(`${label}, unknown key`, await call(route.method, path, badKey, body()), 401, 'invalid_personal_api_key')
    expectRefusal(`${label}, revoked key`, await call(route.method, path, revokedKey, body()), 401, 'invalid_personal_api_key')
    const without = await call(route.method, path, keyWithout(c.scope), body())
    expectRefusal(`${label}, key without ${c.scope}`, without, 403, 'permission_denied', new RegExp(`'${c.scope}'`))

    // Another organisation's key: someone else's project (or organisation, or token) answers exactly like
    // one that does not exist.
    const stranger = await call(route.method, path, strangerKey, body())
    if (route.pattern === '/api/projects/' || route.pattern === '/api/organizations/') {
      tried++
      const ours = route.pattern === '/api/projects/' ? A : boot.organization_id
      const theirs = route.pattern === '/api/projects/' ? theirProject.id : otherOrg.id
      const ids = (stranger.body?.results ?? []).map((p: { id: number | string }) => p.id)
      if (stranger.status !== 200 || ids.includes(ours) || !ids.includes(theirs)) problems.push(`${label}, stranger: lists ${JSON.stringify(ids)}`)
    } else if (route.pattern === '/api/users/:uuid/') {
      // `@me` is whoever holds the key: the stranger sees itself, in its own organisation, and nothing of ours.
      tried++
      const me = stranger.body
      if (stranger.status !== 200 || me?.email !== 'stranger@example.com' || me?.organization?.id !== otherOrg.id || stranger.text.includes(boot.organization_id)) {
        problems.push(`${label}, stranger: ${stranger.status} ${stranger.text.slice(0, 160)}`)
      }
    } else {
      const ghostPath = path
        .replace(`/api/projects/${A}/`, `/api/projects/${missing.project_id}/`)
        .replace(`/api/environments/${A}/`, `/api/environments/${missing.project_id}/`)
        .replace(`/api/organizations/${boot.organization_id}/`, `/api/organizations/${missing.organization_id}/`)
        .replace(boot.project_api_key, missing.token)
      if (ghostPath === path) problems.push(`${label}: no project, organisation or token to swap`)
      const ghost = await call(route.method, ghostPath, strangerKey, body())
      same(`${label}, stranger: existing vs missing`, stranger, ghost)
      tried++
      if (![401, 404].includes(stranger.status)) problems.push(`${label}, stranger: expected 401/404, got ${stranger.status} ${stranger.text.slice(0, 120)}`)
      // A key without the scope is refused before the project is looked up, so it can't probe either.
      const withoutGhost = await call(route.method, ghostPath, keyWithout(c.scope), body())
      same(`${label}, key without the scope: existing vs missing`, without, withoutGhost)
    }

    if (c.alsoScope) expectRefusal(`${label}, key without ${c.alsoScope}`, await call(route.method, path, keyWith(c.scope), body()), 403, 'permission_denied', new RegExp(`'${c.alsoScope}'`))
    const res = await call(route.method, path, keyWith(c.scope, c.alsoScope), body())
    tried++
    if (!c.ok.includes(res.status) && !(res.status === 400 && c.okCodes?.includes(res.body?.code))) {
      problems.push(`${label}, key with only ${[c.scope, c.alsoScope].filter(Boolean).join(' and ')}: got ${res.status} ${res.text.slice(0, 200)}`)
    }
  }
  // posthog-node's remote config form names the project by token under `@current`.
  const byToken = (token: string) => call('get', `/api/projects/@current/feature_flags/remote/remote_config/?token=${token}`, strangerKey)
  same('remote_config by token, stranger: existing vs missing', await byToken(boot.project_api_key), await byToken(missing.token))
  // As PostHog, a token names the project over the path on every project route.
  const overPath = await call('get', `/api/projects/${theirProject.id}/feature_flags/remote/remote_config/?token=${boot.project_api_key}`, boot.personal_api_key!)
  t.equal(overPath.status, 200, 'our token under their project id: our flag')
  expectRefusal('their token with our key', await call('get', `${base}/feature_flags/?token=${theirProject.api_token}`, boot.personal_api_key!), 401, 'invalid_api_key')
  expectRefusal('an unknown token', await call('get', `${base}/feature_flags/local_evaluation/?token=${missing.token}`, boot.personal_api_key!), 401, 'invalid_api_key')
  t.same(problems, [], `${routes.length} routes × 6 keys: only the key with the scope gets through`)
  t.comment(`${tried} access cases tried over ${routes.length} management routes`)

  const secrets = [boot.personal_api_key!, strangerKey, revokedKey, badKey, ...keysWith.values(), ...keysWithout.values()]

  t.test('public endpoints never cross projects', async (t) => {
    const theirs = await server.api('POST', `/api/projects/${theirProject.id}/feature_flags/`, { key: 'their-secret-flag', filters: { groups: [{ rollout_percentage: 100 }] } }, strangerKey)
    t.equal(theirs.status, 201)
    const mine = new Set((await api('GET', `${base}/feature_flags/?limit=1000`)).body.results.map((f: { key: string }) => f.key))
    for (const path of ['/decide/?v=3', '/decide/?v=4', '/flags/?v=2']) {
      const res = await server.request('POST', path, { body: { api_key: boot.project_api_key, distinct_id: 'someone' } })
      const keys = Object.keys(res.body.featureFlags ?? res.body.flags ?? {})
      t.ok(keys.length > 0 && keys.every((k) => mine.has(k)), `${path} with our key answers only our flags (${keys.join(', ')})`)
      t.notOk(res.text.includes('their-secret-flag'), `${path} never mentions their flag`)
    }
    const config = await server.request('GET', `/array/${boot.project_api_key}/config`)
    t.notOk(config.text.includes('their-secret-flag') || config.text.includes(theirProject.api_token), 'remote config of our project says nothing about theirs')

    const uuid = randomUUID()
    const captured = await server.request('POST', '/capture/', { body: { api_key: boot.project_api_key, event: 'isolation', distinct_id: 'me', uuid } })
    t.equal(captured.status, 200)
    await until('our event is stored', () => storedEvents(dataDir, 'uuid = ?', [uuid]).length === 1)
    t.equal(storedEvents(dataDir, 'uuid = ?', [uuid])[0].team_id, A, 'it is stored in our project')
    const theirEvents = await server.api('GET', `/api/projects/${theirProject.id}/events/?event=isolation`, undefined, strangerKey)
    t.same([theirEvents.status, theirEvents.body.results], [200, []], 'their events API does not show it')
    const ourEvents = await api('GET', `${base}/events/?event=isolation`)
    t.equal(ourEvents.body.results.length, 1, 'ours does')
  })

  t.test('error bodies never echo a key', async (t) => {
    const fakeProjectKey = `phc_${randomBytes(24).toString('base64url')}`
    for (const [path, body] of [
      ['/capture/', { api_key: fakeProjectKey, event: 'x', distinct_id: 'd' }],
      ['/batch/', { api_key: fakeProjectKey, batch: [{ event: 'x', properties: { distinct_id: 'd' } }] }],
      ['/decide/?v=3', { api_key: fakeProjectKey, distinct_id: 'd' }],
    ] as const) {
      const res = await server.request('POST', path, { body })
      t.equal(res.status, 401, `${path} refuses an unknown project key`)
      t.notOk(res.text.includes(fakeProjectKey), `${path}: the 401 body does not contain the key`)
    }
    for (const key of [badKey, revokedKey]) {
      const res = await call('get', `${base}/feature_flags/`, key)
      t.notOk(res.text.includes(key) || res.text.includes(key.slice(4, 20)), 'a refused personal key is not echoed')
    }
    // Kept for the log check below.
    secrets.push(fakeProjectKey)
  })

  t.test('personal keys are stored hashed and never logged', async (t) => {
    const rows = db.prepare('SELECT secure_value, mask_value FROM personal_api_keys').all() as Array<{ secure_value: string; mask_value: string }>
    t.ok(rows.length >= secrets.length - 2, `${rows.length} keys stored`)
    t.ok(rows.every((r) => /^sha256\$[0-9a-f]{64}$/.test(r.secure_value)), 'every stored key is a SHA-256 digest')
    t.ok(rows.every((r) => /^phx_….{4}$/.test(r.mask_value)), 'and a mask that shows 4 characters')
    const files = readdirSync(dataDir).filter((f) => f.startsWith('management.db')).map((f) => readFileSync(join(dataDir, f)).toString('latin1'))
    const inFiles = secrets.filter((s) => s.startsWith('phx_') && files.some((content) => content.includes(s) || content.includes(s.slice(4))))
    t.same(inFiles, [], 'no personal key appears in management.db or its WAL')
    await new Promise((r) => setTimeout(r, 300)) // let the logger flush
    const logs = [...server.stdout, ...server.stderr].join('\n')
    t.ok(server.stdout.length > 100, `${server.stdout.length} log lines at trace level`)
    t.same(secrets.filter((s) => logs.includes(s) || logs.includes(s.slice(4))), [], 'no key appears in the logs')
  })
})
