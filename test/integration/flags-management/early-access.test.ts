/**
 * PostHog's early access feature API over HTTP: the feature object, PostHog's checks and messages, and what
 * each write does to the linked flag (enrollment on in alpha, beta and general-availability, off otherwise,
 * everyone with rollout_to_all, off again when the feature is deleted), with the flag's version and activity
 * moving as any flag change's do; a flag with a feature can't be deleted and lists it in `features`.
 */
import t from 'tap'
import { MembershipLevel } from '../../../src/management/index.js'
import { createAjv } from '../../../src/schemas/index.js'
import { flagServer, simpleFlag } from './fixture.js'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

t.test('early access feature API', async (t) => {
  const f = await flagServer()
  t.teardown(() => f.close())
  const { server, base, flags } = f
  const features = `${base}/early_access_feature/`
  const api = (method: string, path: string, body?: unknown) => server.api(method, path, body)
  const create = async (body: Record<string, unknown>) => {
    const res = await api('POST', features, body)
    if (res.status !== 201) throw new Error(`create: ${res.status} ${res.text}`)
    return res.body
  }
  const flag = async (id: number) => (await api('GET', `${flags}${id}/`)).body

  t.test('a feature in beta creates its flag: the slug of its name, nobody at 0%, enrollment on', async (t) => {
    const res = await api('POST', features, { name: ' Hick bondoogling ', description: 'Boondoogle your hicks.', stage: 'beta', unknown: 'dropped' })
    t.equal(res.status, 201)
    t.match(res.body, {
      id: UUID,
      name: 'Hick bondoogling',
      description: 'Boondoogle your hicks.',
      stage: 'beta',
      documentation_url: '',
      payload: {},
      created_by: { email: 'admin@skylark.local' },
      user_access_level: 'editor',
    })
    t.same(Object.keys(res.body), ['id', 'feature_flag', 'name', 'description', 'stage', 'documentation_url', 'payload', 'created_at', 'created_by', 'assignee', 'user_access_level'])
    t.same(res.body.assignee, { type: 'user', id: res.body.created_by.id }, 'assigned to its creator')
    t.same(Object.keys(res.body.feature_flag), ['id', 'team_id', 'name', 'key', 'filters', 'deleted', 'active', 'ensure_experience_continuity', 'has_encrypted_payloads', 'version', 'evaluation_runtime', 'evaluation_tags'])
    t.match(res.body.feature_flag, { key: 'hick-bondoogling', name: 'Feature Flag for Early Access Feature Hick bondoogling', active: true, deleted: false, version: 1 })
    t.equal(res.body.feature_flag.filters.feature_enrollment, true)
    t.notOk('super_groups' in res.body.feature_flag.filters, 'enrollment replaced the legacy super condition')
    t.match(res.body.feature_flag.filters.groups, [{ properties: [], rollout_percentage: 0 }])
    t.equal(res.body.feature_flag.filters.groups.length, 1)
    const again = await api('GET', `${features}${res.body.id}/`)
    t.same(again.body, res.body, 'read back as created')
    t.same((await api('GET', `${features}${res.body.id.toUpperCase().replace(/-/g, '')}/`)).body.id, res.body.id, 'the id in any form uuid.UUID takes')
  })

  t.test('a concept creates its flag without enrollment', async (t) => {
    const feature = await create({ name: 'Sprocket concept', stage: 'concept' })
    t.same(feature.feature_flag.filters, { groups: [{ properties: [], rollout_percentage: 0, variant: null }] })
  })

  t.test("a name whose slug is a live flag's key is refused with the flag's message, and nothing is stored", async (t) => {
    await api('POST', flags, simpleFlag('taken-key'))
    const before = (await api('GET', features)).body.count
    const res = await api('POST', features, { name: 'Taken key', stage: 'beta' })
    t.equal(res.status, 400)
    t.match(res.body, { type: 'validation_error', code: 'unique', detail: 'There is already a feature flag with this key.', attr: 'key' })
    t.equal((await api('GET', features)).body.count, before)
  })

  t.test('linking a flag in an active stage turns its enrollment on and keeps the rest of its filters', async (t) => {
    const filters = { groups: [{ properties: [{ key: 'xyz', value: 'ok', type: 'person' }], rollout_percentage: null }], payloads: { true: '"hi"' } }
    const linked = (await api('POST', flags, { key: 'linked-flag', filters })).body
    const feature = await create({ name: 'Linked', stage: 'alpha', feature_flag_id: String(linked.id) })
    t.equal(feature.feature_flag.id, linked.id)
    const after = await flag(linked.id)
    t.same(after.filters.groups, filters.groups)
    t.same(after.filters.payloads, filters.payloads)
    t.equal(after.filters.feature_enrollment, true)
    t.equal(after.version, 2, 'a flag change like any other: new version')
    const activity = (await api('GET', `${flags}${linked.id}/activity/`)).body.results
    t.match(activity[0], { activity: 'updated', detail: { changes: [{ field: 'filters' }] } }, 'and an activity entry')
    t.match(after.features, [{ id: feature.id, name: 'Linked', description: '', stage: 'alpha', documentationUrl: '', flagKey: 'linked-flag', payload: {}, assignee: { type: 'user', name: 'Admin' } }], 'the public form, the assignee by name')
    t.same(Object.keys(after.features[0]), ['id', 'name', 'description', 'stage', 'documentationUrl', 'flagKey', 'payload', 'assignee'])
  })

  t.test('linking a flag in a stage that serves nobody leaves it as it is', async (t) => {
    const linked = (await api('POST', flags, simpleFlag('draft-link'))).body
    await create({ name: 'Draft', stage: 'draft', feature_flag_id: linked.id })
    const after = await flag(linked.id)
    t.equal(after.version, 1)
    t.notOk('feature_enrollment' in after.filters)
  })

  t.test("PostHog's refusals of the flag to link, with its messages", async (t) => {
    const group = (await api('POST', flags, { key: 'group-flag', filters: { aggregation_group_type_index: 0, groups: [{ properties: [], rollout_percentage: 100 }] } })).body
    const multi = (await api('POST', flags, { key: 'multi-flag', filters: { groups: [{ properties: [], rollout_percentage: 100 }], multivariate: { variants: [{ key: 'a', rollout_percentage: 50 }, { key: 'b', rollout_percentage: 50 }] } } })).body
    const taken = (await api('POST', flags, simpleFlag('taken-flag'))).body
    await create({ name: 'First', stage: 'beta', feature_flag_id: taken.id })
    const cases: Array<[unknown, string]> = [
      [999_999, 'Feature Flag with this ID does not exist'],
      [group.id, 'Group-based feature flags are not supported for Early Access Features.'],
      [multi.id, 'Multivariate feature flags are not supported for Early Access Features.'],
      [taken.id, 'Linked feature flag taken-flag already has a feature attached to it.'],
    ]
    for (const [id, detail] of cases) {
      const res = await api('POST', features, { name: 'Another', stage: 'beta', feature_flag_id: id })
      t.equal(res.status, 400, detail)
      t.same(res.body, { type: 'validation_error', code: 'invalid', detail, attr: null })
    }
    const other = await f.m.accounts.createProject(f.orgId, 'Other')
    const theirs = f.m.featureFlags.create(other, simpleFlag('theirs'), f.m.accounts.userByEmail('admin@skylark.local')!.id)
    const res = await api('POST', features, { name: 'Cross', stage: 'beta', feature_flag_id: theirs.id })
    t.equal(res.body.detail, 'Feature Flag with this ID does not exist', "another project's flag does not exist here")
  })

  t.test("the fields are read with DRF's messages, in the serializer's order", async (t) => {
    const cases: Array<[Record<string, unknown>, string, string, string | null]> = [
      [{ stage: 'beta' }, 'required', 'This field is required.', 'name'],
      [{ name: 'x' }, 'required', 'This field is required.', 'stage'],
      [{ name: '   ', stage: 'beta' }, 'blank', 'This field may not be blank.', 'name'],
      [{ name: 'x'.repeat(201), stage: 'beta' }, 'max_length', 'Ensure this field has no more than 200 characters.', 'name'],
      [{ name: ['x'], stage: 'beta' }, 'invalid', 'Not a valid string.', 'name'],
      [{ name: 'x', description: null, stage: 'beta' }, 'null', 'This field may not be null.', 'description'],
      [{ name: 'x', stage: 'gamma' }, 'invalid_choice', '"gamma" is not a valid choice.', 'stage'],
      [{ name: 'x', stage: 'beta', documentation_url: 'not a url' }, 'invalid', 'Enter a valid URL.', 'documentation_url'],
      [{ name: 'x', stage: 'beta', documentation_url: 'javascript:alert(1)' }, 'invalid', 'Enter a valid URL.', 'documentation_url'],
      [{ name: 'x', stage: 'beta', documentation_url: `https://x.io/${'a'.repeat(800)}` }, 'max_length', 'Ensure this field has no more than 800 characters.', 'documentation_url'],
      [{ name: 'x', stage: 'beta', payload: null }, 'null', 'This field may not be null.', 'payload'],
      [{ name: 'Beta\u0000', stage: 'beta' }, 'null_characters_not_allowed', 'Null characters are not allowed.', 'name'],
      [{ name: 'x', stage: 'beta', feature_flag_id: 'one' }, 'invalid', 'A valid integer is required.', 'feature_flag_id'],
      [{ name: 'x', stage: 'beta', assignee: { type: 'team', id: 1 } }, 'invalid', 'Expected null or an object of shape {"type": "user" | "role", "id": ...}.', 'assignee'],
      [{ name: 'x', stage: 'beta', assignee: { type: 'user', id: 'abc' } }, 'invalid', 'Assignee ID is invalid.', 'assignee'],
      [{ name: 'x', stage: 'beta', assignee: { type: 'user', id: 999_999 } }, 'invalid', 'Assignee user does not belong to this organization.', 'assignee'],
      [{ name: 'x', stage: 'beta', assignee: { type: 'role', id: '0190d8c1-0000-7000-8000-000000000000' } }, 'invalid', 'Assignee role does not belong to this organization.', 'assignee'],
    ]
    for (const [body, code, detail, attr] of cases) {
      const res = await api('POST', features, body)
      t.equal(res.status, 400, JSON.stringify(body).slice(0, 80))
      t.same(res.body, { type: 'validation_error', code, detail, attr }, detail)
    }
    const list = await api('POST', features, [1])
    t.same(list.body, { type: 'validation_error', code: 'invalid', detail: 'Invalid data. Expected a dictionary, but got list.', attr: null })
  })

  t.test('a documentation URL, a payload and a role as assignee are kept', async (t) => {
    const role = (await api('POST', `/api/organizations/${f.orgId}/roles/`, { name: 'Data modeling' })).body
    const payload = { key: 'value', nested: { number: 42 } }
    const feature = await create({ name: 'With docs', stage: 'beta', documentation_url: 'https://docs.example.com/f?v=2#start', payload, assignee: { type: 'role', id: role.id } })
    t.equal(feature.documentation_url, 'https://docs.example.com/f?v=2#start')
    t.same(feature.payload, payload)
    t.same(feature.assignee, { type: 'role', id: role.id })
  })

  t.test('PATCH changes the fields it names; a falsy payload empties it', async (t) => {
    const feature = await create({ name: 'Click counter', stage: 'beta', payload: { old: 1 } })
    const res = await api('PATCH', `${features}${feature.id}/`, { name: 'Mouse-up counter', description: 'Counts mouse-ups.', feature_flag_id: 1, assignee: null })
    t.equal(res.status, 200)
    t.match(res.body, { name: 'Mouse-up counter', description: 'Counts mouse-ups.', stage: 'beta', payload: { old: 1 }, assignee: null })
    t.equal(res.body.feature_flag.id, feature.feature_flag.id, 'the flag is not relinked')
    t.equal(res.body.feature_flag.version, 1, 'and not changed when the stage is not named')
    t.same((await api('PATCH', `${features}${feature.id}/`, { payload: [] })).body.payload, {})
    t.same((await api('PATCH', `${features}${feature.id}/`, { payload: 'text' })).body.payload, 'text')
  })

  t.test('stages turn enrollment on and off; general-availability with rollout_to_all serves everyone', async (t) => {
    const feature = await create({ name: 'Staged', stage: 'concept' })
    const patch = async (body: Record<string, unknown>) => {
      const res = await api('PATCH', `${features}${feature.id}/`, body)
      t.equal(res.status, 200)
      return res.body.feature_flag.filters
    }
    t.equal((await patch({ stage: 'alpha' })).feature_enrollment, true, 'concept → alpha: on')
    t.equal((await patch({ stage: 'beta' })).feature_enrollment, true, 'alpha → beta: stays on')
    t.equal((await patch({ stage: 'archived' })).feature_enrollment, null, 'beta → archived: off')
    t.equal((await patch({ stage: 'general-availability' })).feature_enrollment, true, 'archived → general-availability: on')
    t.equal((await patch({ stage: 'concept' })).feature_enrollment, null, 'back to concept: off')
    await patch({ stage: 'beta' })
    const everyone = await patch({ stage: 'general-availability', rollout_to_all: true })
    t.equal(everyone.feature_enrollment, null)
    t.match(everyone.groups, [{ properties: [], rollout_percentage: 100 }])
    t.equal(everyone.groups.length, 1)
    const res = await api('PATCH', `${features}${feature.id}/`, { stage: 'everywhere' })
    t.same(res.body, { type: 'validation_error', code: 'invalid_choice', detail: '"everywhere" is not a valid choice.', attr: 'stage' })
  })

  t.test("a flag with a feature can't be deleted, alone or in bulk; deleting the feature turns enrollment off and frees it", async (t) => {
    const feature = await create({ name: 'Doomed feature', stage: 'beta' })
    const flagPath = `${flags}${feature.feature_flag.id}/`
    const refused = await api('PATCH', flagPath, { deleted: true })
    t.equal(refused.status, 400)
    t.same(refused.body, {
      type: 'validation_error',
      code: 'invalid',
      detail: 'Cannot delete a feature flag that is in use with early access features. Please delete the early access feature before deleting the flag.',
      attr: null,
    })
    const bulk = await api('POST', `${flags}bulk_delete/`, { ids: [feature.feature_flag.id] })
    t.same(bulk.body, { deleted: [], errors: [{ id: feature.feature_flag.id, key: 'doomed-feature', reason: 'Cannot delete a feature flag that is in use with early access features' }] })

    const gone = await api('DELETE', `${features}${feature.id}/`)
    t.equal(gone.status, 204)
    t.equal((await api('GET', `${features}${feature.id}/`)).status, 404)
    const after = await flag(feature.feature_flag.id)
    t.equal(after.filters.feature_enrollment, null)
    t.same(after.features, [])
    t.equal((await api('PATCH', flagPath, { deleted: true })).status, 200, 'now it can be deleted')
  })

  t.test('unknown ids are 404 in the envelope', async (t) => {
    for (const id of ['0190d8c1-0000-7000-8000-000000000000', 'not-a-uuid']) {
      for (const method of ['GET', 'PATCH', 'DELETE']) {
        const res = await api(method, `${features}${id}/`, method === 'PATCH' ? { name: 'x' } : undefined)
        t.equal(res.status, 404, `${method} ${id}`)
        t.same(res.body, { type: 'invalid_request', code: 'not_found', detail: 'Not found.', attr: null })
      }
    }
  })

  t.test("a member who can't edit the flag can't change it through its feature", async (t) => {
    const viewer = f.member(MembershipLevel.member)
    const role = (await api('POST', `/api/organizations/${f.orgId}/roles/`, { name: 'Viewers', feature_flags_access_level: 21 })).body
    await api('POST', `/api/organizations/${f.orgId}/roles/${role.id}/role_memberships/`, { user_uuid: viewer.user.uuid })
    const feature = await create({ name: 'Guarded', stage: 'concept' })
    const res = await viewer.call('PATCH', `${features}${feature.id}/`, { stage: 'beta' })
    t.equal(res.status, 403)
    t.same(res.body, { type: 'authentication_error', code: 'permission_denied', detail: "You don't have sufficient permissions to modify the linked feature flag.", attr: null })
    t.equal((await api('GET', `${features}${feature.id}/`)).body.stage, 'concept', 'nothing changed')
    t.equal((await viewer.call('PATCH', `${features}${feature.id}/`, { description: 'allowed' })).status, 200, 'fields that leave the flag alone are open')
  })

  t.test('served answers match the schemas /api/schema/ publishes', async (t) => {
    const schemas = (await server.request('GET', '/api/schema/')).body.components.schemas
    const matches = (name: string, body: unknown) => {
      const validate = createAjv({ removeAdditional: false }).compile(schemas[name])
      t.ok(validate(body), `${name}: ${JSON.stringify(validate.errors)}`)
    }
    const feature = await create({ name: 'Schema check', stage: 'beta', payload: [1, 'two'] })
    matches('EarlyAccessFeature', feature)
    matches('PaginatedEarlyAccessFeatureList', (await api('GET', features)).body)
    matches('FeatureFlag', await flag(feature.feature_flag.id))
    const doc = (await server.request('GET', '/api/schema/')).body.paths['/api/projects/{project_id}/early_access_feature/{id}/']
    t.same(Object.keys(doc).sort(), ['delete', 'get', 'patch'])
    t.equal(doc.patch['x-required-scope'], 'early_access_feature:write')
    t.same(doc.get.parameters.find((p: { name: string }) => p.name === 'id').schema, { type: 'string' }, 'the id is a UUID string')
  })

  t.test('the list pages features in creation order', async (t) => {
    const page = await api('GET', `${features}?limit=2`)
    t.equal(page.status, 200)
    t.equal(page.body.results.length, 2)
    t.match(page.body.next, /offset=2/)
    const all = (await api('GET', `${features}?limit=100`)).body
    const created = all.results.map((r: { created_at: string }) => r.created_at)
    t.same(created, [...created].sort(), 'oldest first')
    t.equal(all.count, all.results.length)
  })
})
