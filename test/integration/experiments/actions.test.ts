/**
 * PostHog's actions API over HTTP against the real server: create in PostHog's shape (test_create_action's
 * answer), list, read, PATCH (which soft-deletes and restores), DELETE refused with 405, the name rules and
 * DRF's messages in the contract's envelope, the `action` scope, project isolation, and an experiment whose
 * metric names an action: refused before the action exists, accepted once it does, listed by its step event.
 */
import t from 'tap'
import { experimentServer } from './fixture.js'

const FIELDS = [
  'id', 'name', 'description', 'tags', 'post_to_slack', 'slack_message_format', 'steps', 'created_at', 'created_by', 'deleted', 'is_calculating',
  'last_calculated_at', 'team_id', 'is_action', 'bytecode_error', 'pinned_at', 'creation_context', 'user_access_level',
]

t.test('actions API', async (t) => {
  const f = await experimentServer()
  t.teardown(() => f.close())
  const actions = `${f.base}/actions/`
  const create = async (body: Record<string, unknown>, path = actions) => {
    const res = await f.api('POST', path, body)
    if (res.status !== 201) throw new Error(`create: ${res.status} ${res.text}`)
    return res.body
  }

  t.test("an action is created in PostHog's shape", async (t) => {
    const res = await f.api('POST', actions, { name: 'user signed up', steps: [{ text: 'sign up', selector: 'div > button', url: '/signup', isNew: 'asdf' }], description: 'Test description', team_id: 999 })
    t.equal(res.status, 201)
    t.same(Object.keys(res.body), FIELDS)
    t.match(res.body, {
      name: 'user signed up',
      description: 'Test description',
      post_to_slack: false,
      slack_message_format: '',
      created_by: { email: 'admin@skylark.local' },
      pinned_at: null,
      deleted: false,
      creation_context: null,
      is_calculating: false,
      team_id: Number(f.server.boot.project_id),
      is_action: true,
      bytecode_error: null,
      tags: [],
    })
    t.same(res.body.steps, [
      {
        event: null,
        properties: null,
        selector: 'div > button',
        selector_regex: res.body.steps[0].selector_regex,
        tag_name: null,
        text: 'sign up',
        text_matching: null,
        href: null,
        href_matching: null,
        url: '/signup',
        url_matching: 'contains',
      },
    ])
    t.match(res.body.steps[0].selector_regex, /^\(\^\|;\)button/)
    t.same((await f.api('GET', `${actions}${res.body.id}/`)).body, res.body, 'read back as created')
  })

  t.test('names are unique among live actions and never blank', async (t) => {
    const first = await create({ name: 'checkout' })
    t.match(await f.api('POST', actions, { name: 'checkout' }), {
      status: 400,
      body: { type: 'validation_error', code: 'unique', detail: `This project already has an action with this name, ID ${first.id}`, attr: 'name' },
    })
    t.match(await f.api('POST', actions, { name: '   ' }), { status: 400, body: { type: 'validation_error', code: 'blank', detail: 'This field may not be blank.', attr: 'name' } })
    t.match(await f.api('POST', actions, { name: 'x', steps: [{ url_matching: 'prefix' }] }), {
      status: 400,
      body: { code: 'invalid_choice', detail: '"prefix" is not a valid choice.', attr: 'steps.0.url_matching' },
    })
    t.match(await f.api('POST', actions, { name: 'y', steps: [{ url: '(', url_matching: 'regex' }] }), { status: 400, body: { code: 'invalid', attr: 'steps.0.url' } })
    const renamed = await f.api('PATCH', `${actions}${first.id}/`, { name: 'checkout' })
    t.equal(renamed.status, 200, 'its own name is no collision')
  })

  t.test('PATCH soft-deletes and restores; DELETE is refused with 405; the list shows live actions', async (t) => {
    const a = await create({ name: 'doomed', steps: [{ event: '$pageview', url: '/bye', url_matching: 'exact' }] })
    t.equal((await f.api('DELETE', `${actions}${a.id}/`)).status, 405)
    // By another member: PostHog's activity entry names the action's creator all the same.
    const deleted = await f.api('PATCH', `${actions}${a.id}/`, { deleted: true }, f.keyWith(['action:write']).key)
    t.match(deleted, { status: 200, body: { deleted: true } })
    const names = async () => (await f.api('GET', `${actions}?limit=1000`)).body.results.map((x: { name: string }) => x.name)
    t.notOk((await names()).includes('doomed'))
    t.equal((await f.api('GET', `${actions}${a.id}/`)).status, 200, 'still read by id, as in PostHog')
    await create({ name: 'doomed' })
    t.match(await f.api('PATCH', `${actions}${a.id}/`, { deleted: false }), { status: 200, body: { deleted: false } }, 'restored')
    const rows = f.db.prepare("SELECT activity, user_id FROM activity_log WHERE scope = 'Action' AND item_id = ? ORDER BY id").all(String(a.id)) as Array<{ activity: string; user_id: number }>
    t.same(rows.map((r) => r.activity), ['created', 'deleted', 'updated'])
    t.same(new Set(rows.map((r) => r.user_id)).size, 1, 'all under the creator')
  })

  t.test('the list filters, orders and pages as PostHog does', async (t) => {
    const project = f.m.accounts.createProject(f.server.boot.organization_id, 'Lists')
    const list = `/api/projects/${project.id}/actions/`
    const made: Array<{ name: string; last_calculated_at: string }> = []
    for (const name of ['alpha', 'beta', 'gamma', 'delta']) made.push(await create({ name, tags: name === 'beta' ? ['Billing'] : [] }, list))
    const names = async (query: string) => (await f.api('GET', `${list}${query}`)).body.results.map((x: { name: string }) => x.name)
    // PostHog's `-last_calculated_at, name`: two made in the same millisecond go by name.
    const newestFirst = [...made].sort((a, b) => b.last_calculated_at.localeCompare(a.last_calculated_at) || a.name.localeCompare(b.name)).map((a) => a.name)
    t.same(await names(''), newestFirst, 'newest first')
    t.same(await names('?ordering=name'), ['alpha', 'beta', 'delta', 'gamma'])
    t.same(await names('?search=ALph'), ['alpha'])
    t.same(await names('?tags=["billing"]'), ['beta'])
    const page = (await f.api('GET', `${list}?ordering=name&limit=2&offset=2`)).body
    t.match(page, { count: 4, previous: String, next: null })
    t.same(page.results.map((x: { name: string }) => x.name), ['delta', 'gamma'])
  })

  t.test("another project's actions are not found; the action scope is needed", async (t) => {
    const sibling = f.m.accounts.createProject(f.server.boot.organization_id, 'Sibling')
    const theirs = await create({ name: 'theirs' }, `/api/projects/${sibling.id}/actions/`)
    t.match(await f.api('GET', `${actions}${theirs.id}/`), { status: 404, body: { type: 'invalid_request', code: 'not_found' } })
    t.equal((await f.api('PATCH', `${actions}${theirs.id}/`, { name: 'mine' })).status, 404)
    const reader = f.keyWith(['action:read']).key
    t.equal((await f.api('GET', actions, undefined, reader)).status, 200)
    t.match(await f.api('POST', actions, { name: 'nope' }, reader), { status: 403, body: { type: 'authentication_error', code: 'permission_denied' } })
    t.equal((await f.api('GET', actions, undefined, f.keyWith(['experiment:write']).key)).status, 403, 'another object’s scope is not enough')
    t.equal((await f.api('POST', actions, { name: 'by a writer' }, f.keyWith(['action:write']).key)).status, 201)
  })

  t.test('references/ lists the live experiments, then cohorts, naming the action; lists can count them', async (t) => {
    const project = f.m.accounts.createProject(f.server.boot.organization_id, 'References')
    const base = `/api/projects/${project.id}`
    const action = await create({ name: 'Referenced', steps: [{ event: 'purchase' }] }, `${base}/actions/`)
    const other = await create({ name: 'Unreferenced', steps: [{ event: 'refund' }] }, `${base}/actions/`)
    const experiment = async (name: string, body: object) => {
      const res = await f.api('POST', `${base}/experiments/`, { name, feature_flag_key: name.toLowerCase().replace(/ /g, '-'), ...body })
      if (res.status !== 201) throw new Error(`${name}: ${res.status} ${res.text}`)
      return res.body
    }
    const inline = await experiment('By metric', { metrics: [{ kind: 'ExperimentMetric', metric_type: 'mean', source: { kind: 'ActionsNode', id: action.id } }] })
    const legacy = await experiment('By filters', { filters: { insight: 'FUNNELS', actions: [{ id: String(action.id), order: 0 }] } })
    const gone = await experiment('Deleted', { filters: { insight: 'TRENDS', actions: [{ id: action.id, type: 'actions' }] } })
    t.equal((await f.api('DELETE', `${base}/experiments/${gone.id}/`)).status, 204)
    await experiment('Elsewhere', { filters: { insight: 'TRENDS', actions: [{ id: other.id, type: 'actions' }] } })
    const cohort = await f.api('POST', `${base}/cohorts/`, {
      name: 'Buyers',
      filters: { properties: { type: 'AND', values: [{ type: 'AND', values: [{ type: 'behavioral', key: action.id, value: 'performed_event', event_type: 'actions' }] }] } },
    })
    t.equal(cohort.status, 201, cohort.text)
    const refs = await f.api('GET', `${base}/actions/${action.id}/references/`)
    t.equal(refs.status, 200)
    t.same(refs.body.map((r: { type: string; id: string }) => [r.type, r.id]), [['experiment', String(inline.id)], ['experiment', String(legacy.id)], ['cohort', String(cohort.body.id)]])
    t.match(refs.body[0], { name: 'By metric', url: `/experiments/${inline.id}`, created_at: String, created_by: { email: 'admin@skylark.local' } })
    const counted = (await f.api('GET', `${base}/actions/?include_reference_count=1&ordering=name`)).body.results
    t.same(counted.map((a: { name: string; reference_count: number }) => [a.name, a.reference_count]), [['Referenced', 3], ['Unreferenced', 1]])
    t.notOk('reference_count' in (await f.api('GET', `${base}/actions/`)).body.results[0], 'only when asked')
    t.equal((await f.api('GET', `${actions}${action.id}/references/`)).status, 404, "another project's action")
  })

  t.test('an experiment metric naming an action is accepted once the action exists', async (t) => {
    const metric = (id: number) => ({ kind: 'ExperimentMetric', metric_type: 'mean', source: { kind: 'ActionsNode', id } })
    const nextId = (f.db.prepare('SELECT coalesce(max(id), 0) + 1 FROM actions').pluck().get() as number) + 10
    const refused = await f.api('POST', f.experiments, { name: 'By action', feature_flag_key: 'by-action', metrics: [metric(nextId)], allow_unknown_events: true })
    t.match(refused, { status: 400, body: { type: 'validation_error', detail: `Action(s) with ID ${nextId} not found or deleted. Each ActionsNode must reference an existing action belonging to this project.`, attr: null } })
    const purchase = await create({ name: 'purchased', steps: [{ event: 'purchase' }] })
    const accepted = await f.api('POST', f.experiments, { name: 'By action', feature_flag_key: 'by-action', metrics: [metric(purchase.id)] })
    t.equal(accepted.status, 201, accepted.text)
    const listed = (await f.api('GET', `${f.experiments}?event=purchase`)).body.results.map((e: { id: number }) => e.id)
    t.same(listed, [accepted.body.id], "found by the action's step event")
  })
})
