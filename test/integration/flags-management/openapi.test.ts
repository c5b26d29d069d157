import t from 'tap'
import { cohortCreateSchema, cohortSchema } from '../../../src/schemas/cohort.js'
import {
  featureFlagCreateSchema,
  featureFlagSchema,
  featureFlagUpdateSchema,
  roleAccessCreateSchema,
} from '../../../src/schemas/feature-flag.js'
import { createAjv } from '../../../src/schemas/index.js'
import { openApiPath } from '../../../src/schemas/openapi.js'
import { registeredRoutes } from '../../helpers/routes.js'
import { flagServer } from './fixture.js'

/**
 * The routes this document must describe: flags (management and evaluation), role access, activity, cohorts,
 * experiments, early access features, dashboards, events and ingestion warnings, queries, persons, groups, the schema.
 */
const DOCUMENTED = /\/(feature_flags|cohorts|experiments|experiment_holdouts|experiment_saved_metrics|early_access_feature|scheduled_changes|annotations|exports|actions|dashboards|events|ingestion_warnings|persons|event_definitions|property_definitions|query|logs|metrics)\/|\/groups\/((find|related|property_definitions|property_values|update_property|delete_property)\/)?$|\/groups_types\/$|^\/api\/schema\/$|^\/api\/(users\/:uuid|organizations(\/:organization_id(\/projects)?)?|projects(\/:project_id)?|environments\/:project_id)\/$/

function documentedRoutes(): Array<{ method: string; path: string }> {
  return registeredRoutes()
    .filter((r) => DOCUMENTED.test(r.pattern))
    .map((r) => ({ method: r.method, path: openApiPath(r.pattern) }))
}

t.test('GET /api/schema/', async (t) => {
  const f = await flagServer()
  t.teardown(() => f.close())
  const res = await f.server.request('GET', '/api/schema/')
  const doc = res.body

  t.test('is served without authentication as an OpenAPI 3 document', async (t) => {
    t.equal(res.status, 200)
    t.equal(res.headers.get('content-type'), 'application/json')
    t.match(doc, { openapi: /^3\./, info: { title: String }, paths: Object, components: { schemas: Object, securitySchemes: { PersonalAPIKey: { type: 'http', scheme: 'bearer' } } } })
  })

  t.test('describes every registered flag, role access and cohort route with its methods, and nothing else', async (t) => {
    const routes = documentedRoutes()
    t.ok(routes.length >= 15, `found ${routes.length} routes`)
    for (const { method, path } of routes) t.ok(doc.paths[path]?.[method], `${method.toUpperCase()} ${path} is documented`)
    const documented = Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(([path, ops]) =>
      Object.keys(ops).map((method) => `${method} ${path}`),
    )
    t.same(documented.sort(), routes.map((r) => `${r.method} ${r.path}`).sort(), 'no undocumented and no phantom operations')
  })

  t.test('names the scope each operation needs', async (t) => {
    const flags = '/api/projects/{project_id}/feature_flags/'
    t.same(doc.paths[flags].get.security, [{ PersonalAPIKey: ['feature_flag:read'] }])
    t.same(doc.paths[flags].post.security, [{ PersonalAPIKey: ['feature_flag:write'] }])
    t.equal(doc.paths[`${flags}activity/`].get['x-required-scope'], 'activity_log:read')
    t.equal(doc.paths[`${flags}{id}/activity/`].get['x-required-scope'], 'activity_log:read')
    t.equal(doc.paths[`${flags}{feature_flag_id}/role_access/`].post['x-required-scope'], 'feature_flag:write')
    t.equal(doc.paths['/api/projects/{project_id}/cohorts/'].get['x-required-scope'], 'cohort:read')
    t.same(doc.paths['/api/schema/'].get.security, [])
    t.same(Object.keys(doc.paths[`${flags}{id}/`].delete.responses).sort(), ['401', '403', '404', '405'])
    t.same(doc.paths[`${flags}{id}/`].patch.requestBody.content['application/json'].schema, { $ref: '#/components/schemas/FeatureFlagUpdate' })
  })

  t.test('publishes the schemas the validators and serializers compile', async (t) => {
    const schemas = doc.components.schemas
    t.same(schemas.FeatureFlagCreate, featureFlagCreateSchema)
    t.same(schemas.FeatureFlagUpdate, featureFlagUpdateSchema)
    t.same(schemas.FeatureFlag, featureFlagSchema)
    t.same(schemas.FeatureFlagRoleAccessCreate, roleAccessCreateSchema)
    t.same(schemas.CohortCreate, cohortCreateSchema)
    t.same(schemas.Cohort, cohortSchema)
    for (const name of Object.keys(schemas)) t.doesNotThrow(() => createAjv().compile(schemas[name]), `${name} compiles`)
  })

  t.test('the published request schema accepts and refuses what the server does', async (t) => {
    const validate = createAjv().compile(doc.components.schemas.FeatureFlagCreate)
    const bodies = [
      { key: 'schema-ok', active: false },
      { key: 'schema-bad-type', active: 'no' },
      { name: 'no key' },
      { key: 'schema-groups', filters: { groups: [{ rollout_percentage: 'x' }] } },
    ]
    for (const body of bodies) {
      const accepted = validate(structuredClone(body))
      const res = await f.server.api('POST', f.flags, body)
      t.equal(res.status === 201, accepted, JSON.stringify(body))
    }
  })

  t.test('served responses match the published response schema', async (t) => {
    const created = await f.server.api('POST', f.flags, { key: 'shape-check', filters: { groups: [{ properties: [], rollout_percentage: 5 }] } })
    const validate = createAjv({ removeAdditional: false }).compile(doc.components.schemas.FeatureFlag)
    t.ok(validate(created.body), JSON.stringify(validate.errors))
    const list = await f.server.api('GET', f.flags)
    t.ok(createAjv({ removeAdditional: false }).compile(doc.components.schemas.PaginatedFeatureFlagList)(list.body))
    const activity = await f.server.api('GET', `${f.flags}activity/`)
    t.ok(createAjv({ removeAdditional: false }).compile(doc.components.schemas.ActivityLogPage)(activity.body))
  })
})
