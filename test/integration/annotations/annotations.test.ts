/**
 * PostHog's annotations API over HTTP: a deploy script's POST answered in PostHog's shape, the list's order,
 * filters and pages, organisation-scoped annotations seen from every project of the organisation and
 * project-scoped ones from their own only, PATCH (which soft-deletes and restores), DELETE refused with 405,
 * the key's scopes, and bad input answered in the contract's envelope with DRF's messages.
 */
import t from 'tap'
import { flagServer } from '../flags-management/fixture.js'

const FIELDS = [
  'id', 'content', 'date_marker', 'creation_type', 'dashboard_item', 'dashboard_id', 'dashboard_name', 'insight_short_id', 'insight_name',
  'insight_derived_name', 'created_by', 'created_at', 'updated_at', 'deleted', 'scope', 'emoji', 'hidden_in_user_interface', 'tags',
]

t.test('annotations API', async (t) => {
  const f = await flagServer()
  t.teardown(() => f.close())
  const { server, base } = f
  const annotations = `${base}/annotations/`
  const api = (method: string, path: string, body?: unknown) => server.api(method, path, body)
  const create = async (body: Record<string, unknown>, path = annotations) => {
    const res = await api('POST', path, body)
    if (res.status !== 201) throw new Error(`create: ${res.status} ${res.text}`)
    return res.body
  }
  const sibling = f.m.accounts.createProject(f.orgId, 'Sibling')
  const siblingAnnotations = `/api/projects/${sibling.id}/annotations/`

  t.test("a deploy script's annotation is created in PostHog's shape", async (t) => {
    const res = await api('POST', annotations, { content: '  v1.2 deployed ', date_marker: '2024-05-01T12:30:00+02:00', scope: 'project', creation_type: 'GIT', team: 999 })
    t.equal(res.status, 201)
    t.same(Object.keys(res.body), FIELDS)
    t.match(res.body, {
      content: 'v1.2 deployed',
      date_marker: '2024-05-01T10:30:00.000Z',
      creation_type: 'GIT',
      dashboard_item: null,
      dashboard_id: null,
      dashboard_name: null,
      insight_short_id: null,
      deleted: false,
      scope: 'project',
      emoji: null,
      hidden_in_user_interface: null,
      tags: [],
      created_by: { email: 'admin@skylark.local' },
    })
    t.same((await api('GET', `${annotations}${res.body.id}/`)).body, res.body, 'read back as created')
  })

  t.test('an empty body takes the model defaults', async (t) => {
    const a = await create({})
    t.match(a, { content: null, date_marker: null, creation_type: 'USR', scope: 'dashboard_item', deleted: false })
  })

  t.test('organisation-scoped annotations are seen from every project of the organisation, project-scoped ones are not', async (t) => {
    const org = await create({ content: 'org-wide launch', scope: 'organization', date_marker: '2024-06-01T00:00:00Z' }, siblingAnnotations)
    const own = await create({ content: 'sibling only', scope: 'project', date_marker: '2024-06-01T00:00:00Z' }, siblingAnnotations)
    const seen = (await api('GET', `${annotations}?search=launch`)).body
    t.same(seen.results.map((a: { id: number }) => a.id), [org.id])
    t.equal((await api('GET', `${annotations}${org.id}/`)).status, 200)
    t.equal((await api('GET', `${annotations}${own.id}/`)).status, 404, "another project's own annotation is not found")
    t.equal((await api('PATCH', `${annotations}${own.id}/`, { content: 'x' })).status, 404)
    const stranger = f.m.accounts.createProject(f.m.accounts.createOrganization('Elsewhere').id, 'Theirs')
    const foreign = `/api/projects/${stranger.id}/annotations/`
    t.equal((await api('GET', foreign)).status, 404, "another organisation's project is not found for the key")
  })

  t.test('narrowing an organisation annotation to a project through another project moves it there', async (t) => {
    const org = await create({ content: 'moving', scope: 'organization' })
    const res = await api('PATCH', `${siblingAnnotations}${org.id}/`, { scope: 'project' })
    t.equal(res.status, 200)
    t.equal((await api('GET', `${siblingAnnotations}${org.id}/`)).status, 200)
    t.equal((await api('GET', `${annotations}${org.id}/`)).status, 404, 'no longer seen where it was created')
  })

  t.test('the list: newest date_marker first with undated ones first of all, pages, and filters', async (t) => {
    // An organisation of its own, so no other test's organisation-scoped annotation is listed.
    const org = f.m.accounts.createOrganization('Lists')
    const owner = f.member(undefined, ['*'], org.id)
    const list = `/api/projects/${f.m.accounts.createProject(org.id, 'Lists').id}/annotations/`
    const get = (query: string) => owner.call('GET', `${list}${query}`)
    const mk = async (body: Record<string, unknown>) => (await owner.call('POST', list, body)).body
    const old = await mk({ content: 'Old Release', scope: 'project', date_marker: '2023-01-01T00:00:00Z' })
    const mid = await mk({ content: 'mid release, hidden', scope: 'dashboard', date_marker: '2023-06-01T00:00:00Z', hidden_in_user_interface: true })
    const recent = await mk({ content: 'Recent incident', scope: 'project', date_marker: '2024-01-01T00:00:00Z', hidden_in_user_interface: false })
    const undated = await mk({ content: 'undated', scope: 'dashboard_item' })
    const ids = async (query: string) => (await get(query)).body.results.map((a: { id: number }) => a.id)
    const all = (await get('')).body
    t.equal(all.count, 4)
    t.same(all.results.map((a: { id: number }) => a.id), [undated.id, recent.id, mid.id, old.id])
    const page = (await get('?limit=2&offset=1')).body
    t.same(page.results.map((a: { id: number }) => a.id), [recent.id, mid.id])
    t.match(page.next, /limit=2&offset=3$/)
    t.match(page.previous, /limit=2$/)
    t.same(await ids('?scope=project'), [recent.id, old.id])
    t.same(await ids('?scope=insight'), [undated.id], '`insight` is the dashboard_item scope')
    t.same(await ids('?date_from=2023-03-01&date_to=2023-12-31T23:59:59Z'), [mid.id])
    t.same(await ids('?search=RELEASE'), [mid.id, old.id], 'case-insensitive')
    t.same(await ids('?search=old,release'), [old.id], 'every term must match')
    t.same(await ids('?hidden_in_user_interface=yes'), [mid.id])
    t.same(await ids('?hidden_in_user_interface=banana'), [undated.id, recent.id, old.id], 'shown: false or unset')
    t.same(await ids('?is_emoji=true'), [])
    t.same(await ids('?is_emoji=false'), [undated.id, recent.id, mid.id, old.id])
  })

  t.test('PATCH changes fields, soft-deletes and restores; DELETE is refused', async (t) => {
    const a = await create({ content: 'to change', scope: 'project', emoji: '🚀' })
    const changed = await api('PATCH', `${annotations}${a.id}/`, { content: 'changed', emoji: '', date_marker: '2024-02-02T02:02:02Z' })
    t.equal(changed.status, 200)
    t.match(changed.body, { content: 'changed', emoji: null, date_marker: '2024-02-02T02:02:02.000Z', scope: 'project' })
    const del = await api('DELETE', `${annotations}${a.id}/`)
    t.equal(del.status, 405)
    t.equal(del.text, '', 'no body')
    t.equal((await api('GET', `${annotations}${a.id}/`)).status, 200, 'still there')
    t.equal((await api('PATCH', `${annotations}${a.id}/`, { deleted: true })).body.deleted, true)
    t.equal((await api('GET', `${annotations}${a.id}/`)).status, 404, 'a soft-deleted annotation is not read')
    t.notOk((await api('GET', annotations)).body.results.some((r: { id: number }) => r.id === a.id), 'nor listed')
    const restored = await api('PATCH', `${annotations}${a.id}/`, { deleted: false })
    t.equal(restored.status, 200, 'PATCH reaches it to restore it')
    t.equal((await api('GET', `${annotations}${a.id}/`)).status, 200)
  })

  t.test('tags go with the tag scope', async (t) => {
    const tagged = await create({ content: 'for product A', scope: 'tag', tags: [' Product-A ', 'release', 'release'] })
    t.same(tagged.tags, ['product-a', 'release'])
    const bad = await api('POST', annotations, { scope: 'tag' })
    t.match(bad.body, { type: 'validation_error', code: 'invalid', detail: "At least one tag is required when scope is 'tag'.", attr: 'tags' })
    const wrong = await api('POST', annotations, { scope: 'project', tags: ['x'] })
    t.match(wrong.body, { detail: "Tags can only be set when scope is 'tag'.", attr: 'tags' })
  })

  t.test('a dashboard of the project can be named; insights and recordings cannot', async (t) => {
    const board = f.db.prepare("INSERT INTO dashboards (team_id, name, created_at, updated_at) VALUES (?, 'Launch board', '2024-01-01', '2024-01-01')").run(f.projectId)
    const onBoard = await create({ content: 'on the board', scope: 'dashboard', dashboard_id: Number(board.lastInsertRowid) })
    t.match(onBoard, { dashboard_id: Number(board.lastInsertRowid), dashboard_name: 'Launch board' })
    const siblingBoard = f.db.prepare("INSERT INTO dashboards (team_id, name, created_at, updated_at) VALUES (?, 'Theirs', '2024-01-01', '2024-01-01')").run(sibling.id)
    const res = await api('POST', annotations, { scope: 'dashboard', dashboard_id: Number(siblingBoard.lastInsertRowid) })
    t.same(res.body, { type: 'validation_error', code: 'invalid', detail: 'Dashboard not found.', attr: 'dashboard_id' })
    f.db.prepare('UPDATE dashboards SET deleted = 1 WHERE id = ?').run(board.lastInsertRowid)
    t.equal((await api('GET', `${annotations}${onBoard.id}/`)).status, 404, "hidden while its dashboard is deleted")
    t.match((await api('POST', annotations, { dashboard_item: 12 })).body, { code: 'does_not_exist', detail: 'Invalid pk "12" - object does not exist.', attr: 'dashboard_item' })
    t.match((await api('POST', annotations, { dashboard_item: null, content: 'no insight' })).body, { dashboard_item: null, content: 'no insight' })
    t.match((await api('POST', annotations, { scope: 'recording' })).body, { code: 'invalid', detail: 'Recording scope is deprecated', attr: null })
  })

  t.test('bad input is answered in the contract envelope with DRF messages, and nothing is stored', async (t) => {
    const before = (await api('GET', annotations)).body.count
    const cases: Array<[unknown, Record<string, unknown>]> = [
      [{ date_marker: 'yesterday' }, { code: 'invalid', attr: 'date_marker', detail: /^Datetime has wrong format/ }],
      [{ scope: 'galaxy' }, { code: 'invalid_choice', attr: 'scope', detail: '"galaxy" is not a valid choice.' }],
      [{ creation_type: null }, { code: 'null', attr: 'creation_type' }],
      [{ content: 'x'.repeat(8193) }, { code: 'max_length', attr: 'content' }],
      [{ emoji: '🚀'.repeat(17) }, { code: 'max_length', attr: 'emoji' }],
      [{ deleted: 'maybe' }, { code: 'invalid', attr: 'deleted', detail: 'Must be a valid boolean.' }],
      [{ dashboard_id: 'abc' }, { code: 'invalid', attr: 'dashboard_id', detail: 'A valid integer is required.' }],
      [{ scope: 'tag', tags: 'release' }, { code: 'not_a_list', attr: 'tags' }],
      [[1, 2], { code: 'invalid', attr: null, detail: 'Invalid data. Expected a dictionary, but got list.' }],
    ]
    for (const [body, expected] of cases) {
      const res = await api('POST', annotations, body)
      t.equal(res.status, 400, JSON.stringify(body).slice(0, 60))
      t.match(res.body, { type: 'validation_error', ...expected })
    }
    t.match((await api('GET', `${annotations}?scope=nope`)).body, { type: 'validation_error', detail: 'Invalid scope: nope', attr: null })
    t.match((await api('GET', `${annotations}?date_from=soon`)).body, { detail: 'Invalid date range: date_from must be a valid ISO 8601 date' })
    t.match((await api('GET', `${annotations}?date_from=2024-02-01&date_to=2024-01-01`)).body, { detail: 'Invalid date range: date_from must be before date_to' })
    t.equal((await api('GET', `${annotations}abc/`)).status, 404)
    t.equal((await api('GET', annotations)).body.count, before)
  })

  t.test('a read key cannot write; a write key can read', async (t) => {
    const reader = f.member(undefined, ['annotation:read'])
    t.equal((await reader.call('GET', annotations)).status, 200)
    const refused = await reader.call('POST', annotations, { content: 'nope' })
    t.equal(refused.status, 403)
    t.match(refused.body, { type: 'authentication_error', code: 'permission_denied' })
    const writer = f.member(undefined, ['annotation:write'])
    t.equal((await writer.call('POST', annotations, { content: 'yes' })).status, 201)
    t.equal((await writer.call('GET', annotations)).status, 200)
    t.equal((await f.member(undefined, ['feature_flag:write']).call('GET', annotations)).status, 403, 'another object’s scope is not enough')
  })

  t.test('each write is in the activity log under Annotation, with its context', async (t) => {
    const a = await create({ content: 'logged', scope: 'project' })
    await api('PATCH', `${annotations}${a.id}/`, { content: 'logged again' })
    const rows = f.db.prepare("SELECT activity, detail FROM activity_log WHERE scope = 'Annotation' AND item_id = ? ORDER BY id").all(String(a.id)) as Array<{ activity: string; detail: string }>
    t.same(rows.map((r) => r.activity), ['created', 'updated'])
    const detail = JSON.parse(rows[1]!.detail)
    t.match(detail, { name: 'logged again', context: { scope: 'project', dashboard_id: null }, changes: [{ type: 'Annotation', action: 'changed', field: 'content', before: 'logged', after: 'logged again' }] })
    t.equal(detail.changes.length, 1)
  })
})
