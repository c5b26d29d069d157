import t from 'tap'
import { flagServer, simpleFlag } from './fixture.js'

t.test('feature flags API', async (t) => {
  const f = await flagServer()
  t.teardown(() => f.close())
  const { server, flags } = f

  t.test('POST creates a flag and answers 201 with the whole object', async (t) => {
    const filters = {
      groups: [
        { properties: [{ key: 'email', value: ['a@x.com'], operator: 'exact', type: 'person' }], rollout_percentage: 40, variant: null, custom: { kept: true } },
      ],
      multivariate: { variants: [{ key: 'control', name: 'Control', rollout_percentage: 50 }, { key: 'test', rollout_percentage: 50, extra: 1 }] },
      payloads: { control: '{"a": 1}', test: { nested: ['x', null] } },
      aggregation_group_type_index: null,
      future_field: { anything: [1, 'two'] },
    }
    const res = await server.api('POST', flags, { key: 'checkout', name: 'New checkout', filters, tags: ['Web'], unknown_field: 'dropped', rollback_conditions: [{ threshold: 5 }] })
    t.equal(res.status, 201)
    t.equal(res.headers.get('content-type'), 'application/json')
    t.match(res.body, {
      id: Number,
      key: 'checkout',
      name: 'New checkout',
      version: 1,
      active: true,
      deleted: false,
      created_by: { email: 'admin@skylark.local', is_email_verified: false, hedgehog_config: null },
      is_simple_flag: false,
      rollout_percentage: null,
      experiment_set: [],
      can_edit: true,
      tags: ['web'],
      rollback_conditions: [{ threshold: 5 }],
      status: 'ACTIVE',
      user_access_level: 'editor',
    })
    t.same(res.body.filters, { ...filters, payloads: { control: '{"a": 1}', test: '{"nested": ["x", null]}' } }, 'free-form filters come back whole')
    t.notOk('unknown_field' in res.body)
    t.notOk('team_id' in res.body, 'no team or project field')
  })

  t.test('GET lists live flags in the pagination envelope', async (t) => {
    await server.api('POST', flags, simpleFlag('list-a'))
    await server.api('POST', flags, simpleFlag('list-b'))
    const res = await server.api('GET', `${flags}?limit=2`)
    t.equal(res.status, 200)
    t.equal(res.body.count, 3)
    t.same(res.body.results.map((r: { key: string }) => r.key), ['list-b', 'list-a'])
    t.equal(res.body.next, `${server.baseUrl}${flags}?limit=2&offset=2`)
    t.equal(res.body.previous, null)
    const second = await server.api('GET', `${flags}?limit=2&offset=2`)
    t.same(second.body.results.map((r: { key: string }) => r.key), ['checkout'])
    t.equal(second.body.previous, `${server.baseUrl}${flags}?limit=2`)
    const search = await server.api('GET', `${flags}?search=LIST-&active=true&order=key`)
    t.same(search.body.results.map((r: { key: string }) => r.key), ['list-a', 'list-b'])
    t.equal((await server.api('GET', `${flags}?limit=x`)).body.attr, 'limit')
    const inherited = await server.api('GET', `${flags}?order=constructor`)
    t.equal(inherited.status, 400, 'an order only Object.prototype knows is refused, not a 500')
    t.same(inherited.body, { type: 'validation_error', code: 'invalid_input', detail: 'Cannot order by "constructor".', attr: 'order' })
  })

  t.test('GET :id answers the flag and 404 for unknown ids', async (t) => {
    const created = (await server.api('POST', flags, simpleFlag('one'))).body
    const res = await server.api('GET', `${flags}${created.id}/`)
    t.equal(res.status, 200)
    t.equal(res.body.key, 'one')
    t.equal((await server.api('GET', `${flags}${created.id}`)).status, 200, 'trailing slash optional')
    const missing = await server.api('GET', `${flags}999999/`)
    t.equal(missing.status, 404)
    t.same(missing.body, { type: 'invalid_request', code: 'not_found', detail: 'Not found.', attr: null })
    t.equal((await server.api('GET', `${flags}abc/`)).status, 404)
  })

  t.test('PATCH changes fields, bumps the version and keeps filters without groups', async (t) => {
    const created = (await server.api('POST', flags, simpleFlag('patchable'))).body
    const res = await server.api('PATCH', `${flags}${created.id}/`, { name: 'Described', filters: { payloads: {} }, version: 1 })
    t.equal(res.status, 200)
    t.equal(res.body.name, 'Described')
    t.equal(res.body.version, 2)
    t.same(res.body.filters, simpleFlag('x').filters)
    t.equal(res.body.last_modified_by.email, 'admin@skylark.local')
  })

  t.test('evaluation_tags and bucketing_identifier are stored and served, evaluation tags among the tags', async (t) => {
    const created = await server.api('POST', flags, { ...simpleFlag('tagged-device'), tags: ['Web', 'app'], evaluation_tags: ['web'], bucketing_identifier: 'device_id' })
    t.equal(created.status, 201)
    t.match(created.body, { tags: ['app', 'web'], evaluation_tags: ['web'], bucketing_identifier: 'device_id' })
    const read = (await server.api('GET', `${flags}${created.body.id}/`)).body
    t.same([read.evaluation_tags, read.bucketing_identifier], [['web'], 'device_id'])
    const kept = await server.api('PATCH', `${flags}${created.body.id}/`, { name: 'Renamed' })
    t.same([kept.body.evaluation_tags, kept.body.bucketing_identifier], [['web'], 'device_id'], 'a PATCH without them keeps them')
    const cleared = await server.api('PATCH', `${flags}${created.body.id}/`, { evaluation_tags: [], bucketing_identifier: null })
    t.same([cleared.body.evaluation_tags, cleared.body.bucketing_identifier], [[], null])
    t.equal((await server.api('POST', flags, simpleFlag('plain-bucketing'))).body.bucketing_identifier, null, 'null by default')
    const stray = await server.api('POST', flags, { ...simpleFlag('stray-eval-tag'), tags: ['web'], evaluation_tags: ['web', 'ios'] })
    t.equal(stray.status, 400)
    t.match(stray.body, { type: 'validation_error', code: 'invalid', attr: null, detail: 'Evaluation tags must be a subset of tags. Invalid evaluation tags: ios' })
    const badBucket = await server.api('POST', flags, { ...simpleFlag('bad-bucketing'), bucketing_identifier: 'session_id' })
    t.match(badBucket.body, { type: 'validation_error', attr: 'bucketing_identifier' })
    // PostHog's current name for the field: taken on write, served beside the old one (posthog-node reads it first)
    const contexts = await server.api('POST', flags, { ...simpleFlag('with-contexts'), tags: ['ios'], evaluation_contexts: ['ios'] })
    t.match(contexts.body, { evaluation_contexts: ['ios'], evaluation_tags: ['ios'] })
    const served = (await server.api('GET', `${flags}local_evaluation/`)).body.flags.find((f: { key: string }) => f.key === 'with-contexts')
    t.match(served, { evaluation_contexts: ['ios'], evaluation_tags: ['ios'] })
  })

  t.test('PATCH with a stale version answers 409 when original_flag shows the field changed since', async (t) => {
    const created = (await server.api('POST', flags, simpleFlag('contended'))).body
    await server.api('PATCH', `${flags}${created.id}/`, { name: 'first writer', version: 1 })
    const res = await server.api('PATCH', `${flags}${created.id}/`, { name: 'second writer', version: 1, original_flag: { name: '' } })
    t.equal(res.status, 409)
    t.match(res.body, {
      type: 'invalid_request',
      code: 'conflict',
      detail: 'The feature flag was updated by admin@skylark.local since you started editing it. Please refresh and try again.',
      attr: null,
      original_flag: { id: created.id, name: 'first writer', version: 2 },
    })
    t.equal((await server.api('GET', `${flags}${created.id}/`)).body.name, 'first writer')
  })

  t.test('DELETE answers 405 with an empty body; PATCH deleted soft-deletes', async (t) => {
    const created = (await server.api('POST', flags, simpleFlag('doomed'))).body
    const del = await server.api('DELETE', `${flags}${created.id}/`)
    t.equal(del.status, 405)
    t.equal(del.text, '')
    t.equal((await server.api('GET', `${flags}${created.id}/`)).body.deleted, false, 'nothing was deleted')
    const soft = await server.api('PATCH', `${flags}${created.id}/`, { deleted: true })
    t.equal(soft.status, 200)
    t.equal(soft.body.deleted, true)
    const list = await server.api('GET', `${flags}?limit=1000`)
    t.notOk(list.body.results.some((r: { id: number }) => r.id === created.id), 'deleted flags are not listed')
    t.equal((await server.api('GET', `${flags}${created.id}/`)).body.status, 'DELETED', 'but can still be read')
    const reuse = await server.api('POST', flags, simpleFlag('doomed'))
    t.equal(reuse.status, 201, 'the key is free again')
  })

  t.test('validation errors are 400 validation_error with code and attr', async (t) => {
    const cases: Array<[unknown, string, string | null]> = [
      [{ key: 'bad key' }, 'invalid_key', 'key'],
      [{ key: 'checkout' }, 'unique', 'key'],
      [{}, 'required', 'key'],
      [{ key: 'typed', active: 'yes' }, 'invalid_input', 'active'],
      [{ key: 'typed', filters: { groups: [{ rollout_percentage: 'x' }] } }, 'invalid_input', 'filters.groups.0.rollout_percentage'],
      [{ key: 'v', filters: { groups: [{}], multivariate: { variants: [{ key: 'a', rollout_percentage: 10 }] } } }, 'invalid_input', 'filters'],
      [{ key: 'c', filters: { groups: [{ properties: [{ key: 'id', type: 'cohort', value: 424242 }] }] } }, 'cohort_does_not_exist', 'filters'],
      [[1, 2], 'invalid_input', null],
    ]
    for (const [body, code, attr] of cases) {
      const res = await server.api('POST', flags, body)
      t.equal(res.status, 400, JSON.stringify(body))
      t.match(res.body, { type: 'validation_error', code, attr }, JSON.stringify(body))
    }
    const parse = await server.request('POST', flags, { rawBody: '{nope', headers: { authorization: `Bearer ${server.boot.personal_api_key}`, 'content-type': 'application/json' } })
    t.match(parse.body, { type: 'validation_error', code: 'parse_error' })
  })

  t.test('filters.version is reserved (PostHog keeps its config formats to itself): any value, on create and update, stores nothing', async (t) => {
    const reserved = { status: 400, body: { type: 'validation_error', code: 'reserved_config_version', detail: 'filters.version is reserved. Remove it from the request.', attr: 'filters' } }
    const rules = { version: 2, return_type: 'boolean', default_value: false, rules: [] }
    for (const filters of [rules, { version: 1, groups: [] }, { version: '1', groups: [{ rollout_percentage: 40 }] }, { version: null }]) {
      t.match(await server.api('POST', flags, { key: 'reserved-version', filters }), reserved, JSON.stringify(filters))
    }
    t.equal((await server.api('GET', `${flags}?search=reserved-version`)).body.count, 0, 'nothing created')
    const flag = (await server.api('POST', flags, { key: 'kept-format', filters: { groups: [{ rollout_percentage: 40 }] } })).body
    t.match(await server.api('PATCH', `${flags}${flag.id}/`, { filters: { version: '1' } }), reserved)
    t.match(await server.api('PATCH', `${flags}${flag.id}/`, { filters: { ...rules, groups: [] } }), reserved, 'before the groups are read')
    t.match((await server.api('GET', `${flags}${flag.id}/`)).body, { version: 1, filters: { groups: [{ rollout_percentage: 40 }] } }, 'unchanged')
    t.notOk('version' in (await server.api('GET', `${flags}${flag.id}/`)).body.filters)
    await server.api('PATCH', `${flags}${flag.id}/`, { deleted: true })
  })

  t.test('a stored flag of another config format (restored, or written by SQL) is left out of local evaluation and keeps its filters', async (t) => {
    const stored = (await server.api('POST', flags, { key: 'stored-format-2', filters: { groups: [{ rollout_percentage: 100 }] } })).body
    const dependent = (await server.api('POST', flags, { key: 'reads-format-2', filters: { groups: [{ properties: [{ key: String(stored.id), type: 'flag', value: true, operator: 'flag_evaluates_to' }] }] } })).body
    const format2 = { version: 2, return_type: 'boolean', default_value: false, rules: [] }
    f.db.prepare("UPDATE feature_flags SET filters = ?, version = version + 1, updated_at = strftime('%Y-%m-%dT%H:%M:%fZ') WHERE id = ?").run(JSON.stringify(format2), stored.id)

    const served = (await server.api('GET', `${flags}local_evaluation/`)).body.flags
    t.notOk(served.some((flag: { key: string }) => flag.key === 'stored-format-2'), 'SDKs read format 1 only')
    const condition = served.find((flag: { key: string }) => flag.key === 'reads-format-2').filters.groups[0].properties[0]
    t.match(condition, { key: String(stored.id), dependency_chain: [] }, "the dependent's chain is broken, so SDKs ask the server")

    const unsupported = { status: 400, body: { type: 'validation_error', code: 'unsupported_config_version', detail: "This flag's stored configuration cannot be updated through this API. Contact support.", attr: 'filters' } }
    t.match(await server.api('PATCH', `${flags}${stored.id}/`, { filters: { groups: [{ rollout_percentage: 50 }] } }), unsupported)
    t.match(await server.api('PATCH', `${flags}${stored.id}/`, { filters: {} }), unsupported, 'even filters without groups')
    t.match(await server.api('PATCH', `${flags}${stored.id}/`, { name: 'Renamed' }), { status: 200, body: { name: 'Renamed', filters: format2 } }, 'its other fields still change')

    const dependency = { key: 'new-reader', filters: { groups: [{ properties: [{ key: String(stored.id), type: 'flag', value: true, operator: 'flag_evaluates_to' }] }] } }
    t.match(await server.api('POST', flags, dependency), {
      status: 400,
      body: { type: 'validation_error', code: 'unsupported_dependency_config_version', detail: 'A flag dependency uses an unsupported configuration format. Remove this dependency to continue.', attr: 'filters' },
    })
    t.equal((await server.api('GET', `${flags}?search=new-reader`)).body.count, 0, 'nothing created')
    for (const id of [dependent.id, stored.id]) t.equal((await server.api('PATCH', `${flags}${id}/`, { deleted: true })).status, 200, 'and it can be deleted')
  })

  t.test('a body nested deeper than capture accepts is a 400, not a 500 from the readers and serialisers after it', async (t) => {
    const auth = { authorization: `Bearer ${server.boot.personal_api_key}`, 'content-type': 'application/json' }
    const nested = (levels: number) => '{"a":'.repeat(levels) + '1' + '}'.repeat(levels)
    const payloadFlag = (key: string, levels: number) => `{"key":"${key}","filters":{"groups":[{"properties":[]}],"payloads":{"true":${nested(levels)}}}}`
    // 100,000 levels overflowed the Python-style payload writer's stack.
    const deep = await server.request('POST', flags, { rawBody: payloadFlag('deep-payload', 100_000), headers: auth })
    t.equal(deep.status, 400)
    t.match(deep.body, { type: 'validation_error', code: 'parse_error', detail: /nest at most 127 levels/, attr: null })
    // The body, filters and payloads are 3 of the 127 levels.
    const deepest = await server.request('POST', flags, { rawBody: payloadFlag('deepest-payload', 124), headers: auth })
    t.equal(deepest.status, 201, 'the deepest body allowed is stored')
    const over = await server.request('POST', flags, { rawBody: payloadFlag('too-deep-payload', 125), headers: auth })
    t.equal(over.status, 400)
  })

  t.test('PATCH rejects wrong types with attr set', async (t) => {
    const created = (await server.api('POST', flags, simpleFlag('typed-patch'))).body
    const res = await server.api('PATCH', `${flags}${created.id}/`, { version: '1' })
    t.match(res.body, { type: 'validation_error', code: 'invalid_input', attr: 'version' })
    const filters = await server.api('PATCH', `${flags}${created.id}/`, { filters: { groups: [{ properties: [{ key: 'a', type: 'person', group_type_index: 'x' }] }] } })
    t.match(filters.body, { type: 'validation_error', attr: 'filters.groups.0.properties.0.group_type_index' })
  })

  t.test('bodies over API_MAX_BYTES are 413', async (t) => {
    const res = await server.api('POST', flags, { key: 'huge', name: 'x'.repeat(1024 * 1024 + 1) })
    t.equal(res.status, 413)
    t.equal(res.body.code, 'request_too_large')
  })

  t.test('scopes: feature_flag:read reads, feature_flag:write writes', async (t) => {
    const reader = f.member(1, ['feature_flag:read'])
    const created = (await server.api('POST', flags, simpleFlag('scoped'))).body
    t.equal((await reader.call('GET', flags)).status, 200)
    t.equal((await reader.call('GET', `${flags}${created.id}/`)).status, 200)
    for (const [method, path, body] of [
      ['POST', flags, simpleFlag('nope')],
      ['PATCH', `${flags}${created.id}/`, { name: 'x' }],
      ['DELETE', `${flags}${created.id}/`, undefined],
    ] as const) {
      const res = await reader.call(method, path, body)
      t.equal(res.status, 403, `${method} ${path}`)
      t.same(res.body, { type: 'authentication_error', code: 'permission_denied', detail: "API key missing required scope 'feature_flag:write'", attr: null })
    }
    const writer = f.member(1, ['feature_flag:write'])
    t.equal((await writer.call('GET', flags)).status, 200, 'write implies read')
    const other = f.member(1, ['experiment:read'])
    t.equal((await other.call('GET', flags)).status, 403)
  })

  t.test('authentication failures are 401', async (t) => {
    t.equal((await server.request('GET', flags)).body.code, 'not_authenticated')
    t.equal((await server.api('GET', flags, undefined, 'phx_nope')).body.code, 'invalid_personal_api_key')
    t.equal((await server.api('DELETE', `${flags}1/`, undefined, 'phx_nope')).status, 401, 'DELETE authenticates before refusing')
  })

  t.test('@current resolves to the key’s project', async (t) => {
    const res = await server.api('GET', '/api/projects/@current/feature_flags/')
    t.equal(res.status, 200)
    t.ok(res.body.count > 0)
  })
})
