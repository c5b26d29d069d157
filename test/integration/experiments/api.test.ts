/**
 * The experiments API over HTTP against the real server: every endpoint and status code, scopes,
 * creation / launch / archive / soft delete with their effects on the flag, activity entries, the
 * exposure cohort's members in persons.db, the flag-implementation check and the OpenAPI document.
 */
import t from 'tap'
import { experimentServer, type ExperimentServer } from './fixture.js'

const HOUR = 3_600_000

t.test('experiments API', async (t) => {
  let f: ExperimentServer
  t.before(async () => {
    f = await experimentServer()
  })
  t.teardown(() => f?.close())
  const url = (id: number | string, action = '') => `${f.experiments}${id}/${action ? `${action}/` : ''}`

  t.test('create → list → retrieve → patch → delete, with their status codes', async (t) => {
    const created = await f.api('POST', f.experiments, { name: 'Checkout', feature_flag_key: 'checkout', description: 'New flow' })
    t.equal(created.status, 201)
    t.match(created.body, {
      id: Number,
      name: 'Checkout',
      description: 'New flow',
      start_date: null,
      end_date: null,
      feature_flag_key: 'checkout',
      feature_flag: { key: 'checkout', team_id: f.server.boot.project_id, active: false, deleted: false, ensure_experience_continuity: false, filters: Object },
      exposure_cohort: null,
      parameters: {},
      secondary_metrics: [],
      filters: {},
      archived: false,
      deleted: false,
      created_by: { email: 'admin@skylark.local', uuid: String, distinct_id: String, is_email_verified: Boolean },
      created_at: String,
      updated_at: String,
      type: 'product',
      holdout: null,
      saved_metrics: [],
      metrics: [],
    })
    const id = created.body.id

    const list = await f.api('GET', f.experiments)
    t.equal(list.status, 200)
    t.match(list.body, { count: 1, next: null, previous: null, results: [{ id }] })

    const got = await f.api('GET', url(id))
    t.equal(got.status, 200)
    t.same(got.body, created.body)

    const patched = await f.api('PATCH', url(id), { name: 'Checkout v2' })
    t.equal(patched.status, 200)
    t.equal(patched.body.name, 'Checkout v2')

    const deleted = await f.api('DELETE', url(id))
    t.equal(deleted.status, 204)
    t.equal(deleted.text, '')
    for (const [method, body] of [['GET'], ['PATCH', { name: 'x' }], ['DELETE']] as const) {
      const res = await f.api(method, url(id), body)
      t.equal(res.status, 404, `${method} after delete`)
      t.match(res.body, { type: 'invalid_request', code: 'not_found' })
    }
    t.equal((await f.api('GET', `/api/projects/${f.server.boot.project_id}/feature_flags/${created.body.feature_flag.id}/`)).body.deleted, false, 'the flag stays')
    t.same(
      (f.db.prepare("SELECT activity FROM activity_log WHERE scope = 'Experiment' AND item_id = ? ORDER BY id").all(String(id)) as any[]).map((r) => r.activity),
      ['created', 'updated', 'deleted'],
    )
  })

  t.test("answers PostHog's status and the flag's config in parameters; PATCH deleted:false restores", async (t) => {
    const created = await f.api('POST', f.experiments, {
      name: 'Projected',
      feature_flag_key: 'projected',
      parameters: { feature_flag_variants: [{ key: 'Control', split_percent: 25 }, { key: 'test', split_percent: 75 }], rollout_percentage: 60, custom: 1 },
    })
    t.equal(created.status, 201)
    t.same(created.body.parameters, {
      custom: 1,
      feature_flag_variants: [
        { key: 'control', rollout_percentage: 25, split_percent: 25 },
        { key: 'test', rollout_percentage: 75, split_percent: 75 },
      ],
      rollout_percentage: 60,
      ensure_experience_continuity: false,
    })
    t.equal(created.body.status, 'draft')
    const id = created.body.id
    const launched = await f.api('PATCH', url(id), { start_date: new Date(Date.now() - HOUR).toISOString() })
    t.equal(launched.body.status, 'running')
    await f.api('PATCH', `${f.base}/feature_flags/${created.body.feature_flag.id}/`, { active: false })
    t.equal((await f.api('GET', url(id))).body.status, 'paused', 'its flag switched off')
    t.equal((await f.api('PATCH', url(id), { end_date: new Date().toISOString() })).body.status, 'stopped')

    t.equal((await f.api('DELETE', url(id))).status, 204)
    const restored = await f.api('PATCH', url(id), { deleted: false })
    t.equal(restored.status, 200)
    t.equal(restored.body.deleted, false)
    t.equal((await f.api('GET', url(id))).status, 200)
  })

  t.test('ids that are not experiments of the project are 404; other methods 405', async (t) => {
    for (const id of ['999999', 'abc', '1.5']) t.equal((await f.api('GET', url(id))).status, 404, id)
    t.equal((await f.api('PUT', url(1), { name: 'x' })).status, 405)
    t.equal((await f.api('DELETE', f.experiments)).status, 405)
    const otherOrg = f.m.accounts.createOrganization('Elsewhere')
    const foreign = f.m.accounts.createProject(otherOrg.id, 'Foreign')
    t.equal((await f.api('GET', `/api/projects/${foreign.id}/experiments/`)).status, 404)
  })

  t.test('400s carry PostHog messages', async (t) => {
    const cases: Array<[unknown, Record<string, unknown>]> = [
      [{ feature_flag_key: 'x' }, { code: 'required', attr: 'name' }],
      [{ name: 'x', feature_flag_key: 'x', start_date: '2024-02-02T00:00:00Z', end_date: '2024-02-01T00:00:00Z' }, { detail: 'End date must be after start date', attr: null }],
      [{ name: 'x', feature_flag_key: 'x', parameters: { feature_flag_variants: [{ key: 'a', rollout_percentage: 50 }, { key: 'b', rollout_percentage: 50 }] } }, { detail: /^Feature flag variants must contain a variant with key 'control'/, attr: null }],
      ['not json', { code: 'parse_error' }],
    ]
    for (const [body, wanted] of cases) {
      const res =
        typeof body === 'string'
          ? await f.server.request('POST', f.experiments, { rawBody: body, headers: { authorization: `Bearer ${f.server.boot.personal_api_key}`, 'content-type': 'application/json' } })
          : await f.api('POST', f.experiments, body)
      t.equal(res.status, 400, JSON.stringify(body))
      t.match(res.body, { type: 'validation_error', ...wanted })
    }
  })

  t.test('scopes: experiment:read reads, experiment:write writes', async (t) => {
    const reader = f.keyWith(['experiment:read'])
    const writer = f.keyWith(['experiment:write'])
    const flagsOnly = f.keyWith(['feature_flag:read'])
    const e = (await f.api('POST', f.experiments, { name: 'Scoped', feature_flag_key: 'scoped', start_date: new Date(Date.now() - HOUR).toISOString() })).body
    const denied = (scope: string) => ({ type: 'authentication_error', code: 'permission_denied', detail: `API key missing required scope '${scope}'` })
    const cases: Array<[string, string, string, number, object?]> = [
      ['reader', 'GET', f.experiments, 200],
      ['reader', 'GET', url(e.id), 200],
      ['reader', 'GET', `${f.experiments}requires_flag_implementation/`, 200],
      ['reader', 'GET', url(e.id, 'results'), 400],
      ['reader', 'GET', url(e.id, 'secondary_results'), 400],
      ['reader', 'POST', f.experiments, 403, denied('experiment:write')],
      ['reader', 'PATCH', url(e.id), 403, denied('experiment:write')],
      ['reader', 'DELETE', url(e.id), 403, denied('experiment:write')],
      ['reader', 'POST', url(e.id, 'create_exposure_cohort_for_experiment'), 403, denied('experiment:write')],
      ['writer', 'PATCH', url(e.id), 200],
      ['writer', 'GET', url(e.id), 200],
      ['flagsOnly', 'GET', f.experiments, 403, denied('experiment:read')],
      ['flagsOnly', 'GET', url(e.id, 'results'), 403, denied('experiment:read')],
      ['nobody', 'GET', f.experiments, 401, { code: 'not_authenticated' }],
      ['bad key', 'GET', f.experiments, 401, { code: 'invalid_personal_api_key' }],
    ]
    const keys: Record<string, string | undefined> = { reader: reader.key, writer: writer.key, flagsOnly: flagsOnly.key, 'bad key': 'phx_not_a_key' }
    for (const [who, method, path, status, body] of cases) {
      const res =
        who === 'nobody'
          ? await f.server.request(method, path)
          : await f.api(method, path, method === 'PATCH' ? { description: who } : method === 'POST' ? { name: 'n', feature_flag_key: 'n' } : undefined, keys[who])
      t.equal(res.status, status, `${who} ${method} ${path}`)
      if (body) t.match(res.body, body)
    }
  })

  t.test('linking an existing flag, launching, archiving', async (t) => {
    const flags = `${f.base}/feature_flags/`
    const bool = await f.api('POST', flags, { key: 'plain', filters: { groups: [{ properties: [], rollout_percentage: 100 }] } })
    t.equal(bool.status, 201)
    const refused = await f.api('POST', f.experiments, { name: 'n', feature_flag_key: 'plain' })
    t.match(refused, { status: 400, body: { detail: 'Feature flag must have at least 2 variants (control and at least one test variant)' } })

    const mv = await f.api('POST', flags, {
      key: 'three-way',
      active: false,
      filters: {
        groups: [{ properties: [], rollout_percentage: 100 }],
        multivariate: { variants: [{ key: 'control', rollout_percentage: 34 }, { key: 'a', rollout_percentage: 33 }, { key: 'b', rollout_percentage: 33 }] },
      },
    })
    const e = await f.api('POST', f.experiments, { name: 'Linked', feature_flag_key: 'three-way' })
    t.equal(e.status, 201)
    t.equal(e.body.feature_flag.id, mv.body.id)

    const launched = await f.api('PATCH', url(e.body.id), { start_date: new Date(Date.now() - HOUR).toISOString() })
    t.equal(launched.status, 200)
    t.equal(launched.body.feature_flag.active, true, 'launching activates the flag')
    const flagActivity = await f.api('GET', `${flags}${mv.body.id}/activity/`)
    t.match(flagActivity.body.results[0], { activity: 'updated', scope: 'FeatureFlag', detail: { changes: [{ field: 'active', before: false, after: true }] } })

    const variants = await f.api('PATCH', url(e.body.id), { parameters: { feature_flag_variants: [{ key: 'control' }, { key: 'a' }] } })
    t.match(variants, { status: 400, body: { attr: 'feature_flag', detail: /^This experiment is running\./ } })
    const keys = await f.api('PATCH', url(e.body.id), { parameters: { feature_flag_variants: [{ key: 'control' }, { key: 'a' }] }, update_feature_flag_params: true })
    t.match(keys, { status: 400, body: { detail: "Can't update feature_flag_variants on Experiment" } })
    const key = await f.api('PATCH', url(e.body.id), { feature_flag_key: 'other' })
    t.match(key, { status: 400, body: { detail: "Can't update keys: get_feature_flag_key on Experiment" } })

    t.equal((await f.api('PATCH', url(e.body.id), { archived: true })).body.archived, true)
    const listed = async (query: string) => (await f.api('GET', `${f.experiments}?${query}`)).body.results.map((x: any) => x.id)
    t.notOk((await listed('')).includes(e.body.id), 'archived experiments are not listed by default')
    t.ok((await listed('archived=true')).includes(e.body.id))
    t.equal((await f.api('PATCH', url(e.body.id), { archived: false })).body.archived, false)
    t.ok((await listed('status=running')).includes(e.body.id))
    t.notOk((await listed('status=draft')).includes(e.body.id))
  })

  t.test('list pagination links', async (t) => {
    for (let i = 0; i < 3; i++) await f.api('POST', f.experiments, { name: `Page ${i}`, feature_flag_key: `page-${i}` })
    const first = await f.api('GET', `${f.experiments}?limit=2&search=page`)
    t.match(first.body, { count: 3, previous: null, results: [{ name: 'Page 2' }, { name: 'Page 1' }] })
    t.match(first.body.next, /limit=2/)
    const second = await f.api('GET', first.body.next.replace(f.server.baseUrl, ''))
    t.match(second.body, { count: 3, next: null, results: [{ name: 'Page 0' }] })
  })

  t.test('exposure cohort: the persons exposed since launch, in persons.db', async (t) => {
    const start = Date.now() - HOUR
    const e = (await f.api('POST', f.experiments, { name: 'Exposed', feature_flag_key: 'exposed', start_date: new Date(start).toISOString() })).body
    const called = (distinct_id: string, response: unknown, at: number, flag = 'exposed') => ({
      event: '$feature_flag_called',
      distinct_id,
      at,
      properties: { $feature_flag: flag, $feature_flag_response: response },
    })
    await f.send([
      called('alice', 'control', start + 1000),
      called('bob', 'test', start + 2000),
      called('bob', 'test', start + 3000),
      { event: '$identify', distinct_id: 'carol', at: start + 3500, properties: { $anon_distinct_id: 'carol-anon' } },
      called('carol-anon', 'test', start + 4000),
      called('dave', 'test', start - 60_000),
      called('erin', false, start + 5000),
      called('frank', 'test', start + 6000, 'another-flag'),
      { event: 'done', distinct_id: 'marker', at: start + 7000 },
    ])
    await f.waitFor('event=done', 1)
    const res = await f.api('POST', url(e.id, 'create_exposure_cohort_for_experiment'))
    t.equal(res.status, 200)
    t.match(res.body, { id: e.id, name: 'Exposed', exposure_cohort: Number, cohort: { id: Number, name: 'Users exposed to experiment "Exposed"', is_static: true } })
    t.equal(res.body.exposure_cohort, res.body.cohort.id)
    t.equal((await f.api('GET', url(e.id))).body.exposure_cohort, res.body.cohort.id)
    t.equal((await f.api('GET', `${f.base}/cohorts/${res.body.cohort.id}/`)).status, 200)

    const members = (
      f.persons
        .prepare(
          `SELECT DISTINCT d.distinct_id FROM cohort_people c JOIN person_distinct_ids d ON d.person_id = c.person_id
           WHERE c.cohort_id = ? AND c.team_id = ? ORDER BY d.distinct_id`,
        )
        .all(res.body.cohort.id, f.server.boot.project_id) as Array<{ distinct_id: string }>
    ).map((r) => r.distinct_id)
    t.same(members, ['alice', 'bob', 'carol', 'carol-anon', 'erin'], "carol is one person with two distinct ids; erin's call counts whatever it answered, as PostHog's cohort reads it")
    const rows = f.persons.prepare('SELECT COUNT(*) AS n FROM cohort_people WHERE cohort_id = ?').get(res.body.cohort.id) as { n: number }
    t.equal(rows.n, 4)
    t.equal(res.body.cohort.count, 4, 'the answer counts the persons')
    t.equal((await f.api('GET', `${f.base}/cohorts/${res.body.cohort.id}/`)).body.count, 4, 'and so does the cohort')

    const again = await f.api('POST', url(e.id, 'create_exposure_cohort_for_experiment'))
    t.match(again, { status: 400, body: { detail: 'Experiment already has an exposure cohort' } })
    const draft = (await f.api('POST', f.experiments, { name: 'Draft', feature_flag_key: 'draft-exp' })).body
    t.match(await f.api('POST', url(draft.id, 'create_exposure_cohort_for_experiment')), { status: 400, body: { detail: 'Experiment does not have a start date' } })

    const requiring = await f.api('GET', `${f.experiments}requires_flag_implementation/`)
    t.equal(requiring.status, 200)
    const ids = requiring.body.result.map((x: any) => x.id)
    t.notOk(ids.includes(e.id), 'its flag has been called')
    const scoped = (await f.api('GET', f.experiments + '?search=Scoped')).body.results[0]
    t.ok(ids.includes(scoped.id), 'a running experiment whose flag was never called is listed')
    t.notOk(ids.includes(draft.id), 'drafts are not listed')
  })

  t.test('results endpoints answer PostHog 400s without a metric', async (t) => {
    const e = (await f.api('POST', f.experiments, { name: 'No metric', feature_flag_key: 'no-metric', start_date: new Date(Date.now() - HOUR).toISOString() })).body
    t.match(await f.api('GET', url(e.id, 'results')), { status: 400, body: { type: 'validation_error', detail: 'Experiment has no target metric' } })
    t.match(await f.api('GET', url(e.id, 'secondary_results')), { status: 400, body: { detail: 'Experiment has no secondary metrics' } })
    t.equal((await f.api('GET', url(987654, 'results'))).status, 404)
  })

  t.test('the OpenAPI document describes every experiment operation', async (t) => {
    const doc = (await f.server.request('GET', '/api/schema/')).body
    const wanted: Array<[string, string, string]> = [
      ['get', '/api/projects/{project_id}/experiments/', 'experiment:read'],
      ['post', '/api/projects/{project_id}/experiments/', 'experiment:write'],
      ['get', '/api/projects/{project_id}/experiments/requires_flag_implementation/', 'experiment:read'],
      ['get', '/api/projects/{project_id}/experiments/{id}/', 'experiment:read'],
      ['patch', '/api/projects/{project_id}/experiments/{id}/', 'experiment:write'],
      ['delete', '/api/projects/{project_id}/experiments/{id}/', 'experiment:write'],
      ['post', '/api/projects/{project_id}/experiments/{id}/create_exposure_cohort_for_experiment/', 'experiment:write'],
      ['get', '/api/projects/{project_id}/experiments/{id}/results/', 'experiment:read'],
      ['get', '/api/projects/{project_id}/experiments/{id}/secondary_results/', 'experiment:read'],
      ...['launch', 'end', 'pause', 'resume', 'reset', 'archive', 'unarchive', 'ship_variant', 'duplicate'].map(
        (action): [string, string, string] => ['post', `/api/projects/{project_id}/experiments/{id}/${action}/`, 'experiment:write'],
      ),
    ]
    for (const [method, path, scope] of wanted) t.equal(doc.paths[path]?.[method]?.['x-required-scope'], scope, `${method} ${path}`)
    const documented = Object.keys(doc.paths).filter((p) => p.includes('/experiments/'))
    t.equal(documented.length, 15, 'no other experiment paths')
    t.ok(doc.components.schemas.Experiment && doc.components.schemas.ExperimentCreate && doc.components.schemas.ExperimentResults)
  })
})
