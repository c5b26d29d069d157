import t from 'tap'
import { MembershipLevel } from '../../../src/management/index.js'
import { flagServer, simpleFlag } from './fixture.js'

const OLD = '2020-01-01T00:00:00Z'
const dependsOn = (id: number) => ({ groups: [{ properties: [{ key: String(id), type: 'flag', value: true, operator: 'flag_evaluates_to' }], rollout_percentage: 100 }] })

t.test("PostHog's other flag actions", async (t) => {
  const f = await flagServer()
  t.teardown(() => f.close())
  const { server, flags } = f
  const create = async (body: Record<string, unknown>) => {
    const res = await server.api('POST', flags, body)
    if (res.status !== 201) throw new Error(`create ${JSON.stringify(body)}: ${res.status} ${res.text}`)
    return res.body as { id: number; key: string; usage_dashboard: number | null }
  }

  t.test('status says whether a flag is active, stale or deleted, and why', async (t) => {
    const fresh = await create(simpleFlag('status-fresh'))
    const rolledOut = await create(simpleFlag('status-old', { created_at: OLD }))
    const variant = await create({
      key: 'status-variant',
      created_at: OLD,
      filters: { groups: [{ properties: [], rollout_percentage: 100 }], multivariate: { variants: [{ key: 'a', rollout_percentage: 0 }, { key: 'b', rollout_percentage: 100 }] } },
    })
    const gone = await create(simpleFlag('status-gone'))
    await server.api('PATCH', `${flags}${gone.id}/`, { deleted: true })

    const status = async (id: number | string) => server.api('GET', `${flags}${id}/status/`)
    t.same((await status(fresh.id)).body, { status: 'active', reason: 'Flag is active and being evaluated' })
    t.same((await status(rolledOut.id)).body, { status: 'stale', reason: 'This boolean flag will always evaluate to "true"' })
    t.same((await status(variant.id)).body, { status: 'stale', reason: 'This flag will always use the variant "b"' })
    t.same((await status(gone.id)).body, { status: 'deleted', reason: 'Flag has been deleted' })
    const unknown = await status(999_999)
    t.equal(unknown.status, 404)
    t.same(unknown.body, { type: 'invalid_request', code: 'not_found', detail: 'Flag could not be found', attr: null }, 'the contract envelope, PostHog\'s sentence')
    t.equal((await server.api('GET', `${flags}${rolledOut.id}/`)).body.status, 'STALE', 'the flag object agrees, upper-case as PostHog serializes it')
  })

  t.test('dependent_flags lists the active flags with a condition on the flag', async (t) => {
    const base = await create(simpleFlag('dep-base'))
    const child = await create({ key: 'dep-child', name: 'Child', filters: dependsOn(base.id) })
    await create({ key: 'dep-unnamed', filters: dependsOn(base.id) })
    const res = await server.api('GET', `${flags}${base.id}/dependent_flags/`)
    t.equal(res.status, 200)
    t.same(res.body, [
      { id: child.id, key: 'dep-child', name: 'Child' },
      { id: child.id + 1, key: 'dep-unnamed', name: 'dep-unnamed' },
    ], 'by key; a blank name shows the key')
    t.same((await server.api('GET', `${flags}${child.id}/dependent_flags/`)).body, [])
    t.equal((await server.api('GET', `${flags}999999/dependent_flags/`)).status, 404)
  })

  t.test('bulk_keys maps ids of live flags to their keys and names the ids it could not read', async (t) => {
    const one = await create(simpleFlag('bulk-key-one'))
    const deleted = await create(simpleFlag('bulk-key-deleted'))
    await server.api('PATCH', `${flags}${deleted.id}/`, { deleted: true })
    const res = await server.api('POST', `${flags}bulk_keys/`, { ids: [one.id, String(deleted.id), 'x', null, 999_999] })
    t.equal(res.status, 200)
    t.same(res.body, { keys: { [one.id]: 'bulk-key-one' }, warning: "Invalid flag IDs ignored: ['x', None]" })
    t.same((await server.api('POST', `${flags}bulk_keys/`, {})).body, { keys: {} })
    const invalid = await server.api('POST', `${flags}bulk_keys/`, { ids: ['x'] })
    t.equal(invalid.status, 400)
    t.equal(invalid.body.detail, 'Invalid flag IDs provided')
  })

  t.test('has_evaluation_tags keeps flags with (or without) evaluation tags', async (t) => {
    await create(simpleFlag('tagged-eval', { tags: ['web'], evaluation_tags: ['web'] }))
    const keys = async (value: string) =>
      (await server.api('GET', `${flags}?has_evaluation_tags=${value}&search=tagged-&limit=100`)).body.results.map((r: { key: string }) => r.key)
    await create(simpleFlag('tagged-plain', { tags: ['web'] }))
    t.same(await keys('true'), ['tagged-eval'])
    t.same(await keys('false'), ['tagged-plain'])
  })

  t.test('matching_ids answers the ids the list filters match that the caller may change', async (t) => {
    const viewer = f.member(MembershipLevel.member)
    const role = (await server.api('POST', '/api/organizations/@current/roles/', { name: 'Viewers', feature_flags_access_level: 21 })).body
    await server.api('POST', `/api/organizations/@current/roles/${role.id}/role_memberships/`, { user_uuid: viewer.user.uuid })
    const a = await create(simpleFlag('match-a'))
    const b = await create(simpleFlag('match-b', { active: false }))
    await server.api('POST', `${flags}${b.id}/role_access/`, { role_id: role.id })

    const all = await server.api('GET', `${flags}matching_ids/?search=match-`)
    t.equal(all.status, 200)
    t.same(all.body, { ids: [b.id, a.id], total: 2 }, 'in the list order, newest first')
    t.same((await server.api('GET', `${flags}matching_ids/?search=match-&active=true`)).body, { ids: [a.id], total: 1 })
    t.same((await viewer.call('GET', `${flags}matching_ids/?search=match-`)).body, { ids: [b.id], total: 1 }, 'a view-only member may change only flags its role was given')
  })

  t.test('bulk_delete soft-deletes what ids name and reports what it refused', async (t) => {
    const plain = await create(simpleFlag('bd-plain'))
    const zero = await create({ key: 'bd-zero', filters: { groups: [{ properties: [], rollout_percentage: 0 }] } })
    const base = await create({ key: 'bd-base', filters: { groups: [{ properties: [{ key: 'email', type: 'person', value: 'x', operator: 'exact' }], rollout_percentage: 50 }] } })
    const child = await create({ key: 'bd-child', filters: dependsOn(base.id) })
    await server.api('POST', `${f.base}/experiments/`, { name: 'Uses flag', feature_flag_key: 'bd-experiment' })
    const experimentFlag = (await server.api('GET', `${flags}?search=bd-experiment`)).body.results[0]

    const res = await server.api('POST', `${flags}bulk_delete/`, { ids: [plain.id, zero.id, base.id, experimentFlag.id, 'nope', 999_999] })
    t.equal(res.status, 200)
    t.same(res.body.deleted, [
      { id: plain.id, key: 'bd-plain', rollout_state: 'fully_rolled_out', active_variant: null },
      { id: zero.id, key: 'bd-zero', rollout_state: 'not_rolled_out', active_variant: null },
    ])
    t.same(res.body.errors, [
      { id: 'nope', reason: 'Invalid flag ID format' },
      { id: 999_999, reason: 'Flag not found' },
      { id: base.id, key: 'bd-base', reason: `Cannot delete because other flags depend on it: bd-child (ID: ${child.id})` },
      { id: experimentFlag.id, key: 'bd-experiment', reason: `Cannot delete a feature flag linked to active experiment(s): ${experimentFlag.experiment_set[0]}` },
    ])
    const after = (await server.api('GET', `${flags}${plain.id}/`)).body
    t.match(after, { deleted: true, version: 1 }, 'deleted without a new version, as PostHog')
    const [entry] = (await server.api('GET', `${flags}${plain.id}/activity/`)).body.results
    t.match(entry, { activity: 'deleted', detail: { name: 'bd-plain', changes: [{ field: 'deleted', before: false, after: true }] } })

    const together = await server.api('POST', `${flags}bulk_delete/`, { ids: [base.id, child.id] })
    t.same(together.body.errors, [], 'a dependent deleted in the same batch does not hold its dependency back')
    t.same(together.body.deleted.map((d: { key: string }) => d.key), ['bd-base', 'bd-child'])
  })

  t.test('bulk_delete by list filters, and its refusals of the request', async (t) => {
    const doomed = await create(simpleFlag('bdf-doomed', { tags: ['cleanup'] }))
    const kept = await create(simpleFlag('bdf-kept', { tags: ['cleanup'] }))
    const res = await server.api('POST', `${flags}bulk_delete/`, { filters: { tags: ['cleanup'], excluded_properties: ['bdf-kept'], active: true } })
    t.same(res.body, { deleted: [{ id: doomed.id, key: 'bdf-doomed', rollout_state: 'fully_rolled_out', active_variant: null }], errors: [] })
    t.equal((await server.api('GET', `${flags}${kept.id}/`)).body.deleted, false)

    const refusal = async (body: unknown, detail: string) => {
      const r = await server.api('POST', `${flags}bulk_delete/`, body)
      t.equal(r.status, 400, detail)
      t.same(r.body, { type: 'validation_error', code: 'invalid_input', detail, attr: null })
    }
    await refusal({}, 'Must provide either filters or ids')
    await refusal({ filters: { search: 'x' }, ids: [1] }, 'Provide either filters or ids, not both')
    await refusal({ filters: { search: 'x', order: 'key', limit: 1 } }, 'Unknown filter keys: limit, order')
  })

  t.test('a new flag gets its usage dashboard unless the body says not to', async (t) => {
    const withBoard = await create(simpleFlag('with-board'))
    t.ok(Number.isInteger(withBoard.usage_dashboard))
    const board = await server.api('GET', `${f.base}/dashboards/${withBoard.usage_dashboard}/`)
    t.equal(board.body.name, 'Generated Dashboard: with-board Usage')
    t.equal(board.body.tiles.length, 2)
    t.equal((await create(simpleFlag('without-board', { _should_create_usage_dashboard: false }))).usage_dashboard, null)
  })

  t.test('creation_context is one of PostHog products; other write-only fields are taken', async (t) => {
    const ok = await server.api('POST', flags, simpleFlag('from-surveys', { creation_context: 'surveys', _create_in_folder: 'Unfiled', bucketing_identifier: 'distinct_id' }))
    t.equal(ok.status, 201)
    t.notOk('creation_context' in ok.body, 'write-only')
    t.equal(ok.body.bucketing_identifier, 'distinct_id')
    t.equal(ok.body.is_used_in_replay_settings, false)
    const bad = await server.api('POST', flags, simpleFlag('from-nowhere', { creation_context: 'nowhere' }))
    t.same(bad.body, { type: 'validation_error', code: 'invalid_choice', detail: '"nowhere" is not a valid choice.', attr: 'creation_context' })
  })

  t.test('renaming an early-access flag renames its enrollment property', async (t) => {
    const enrollment = (key: string) => [{ properties: [{ key: `$feature_enrollment/${key}`, type: 'person', operator: 'exact', value: ['true'] }], rollout_percentage: 100 }]
    const flag = await create({ key: 'beta-old', filters: { feature_enrollment: true, groups: [{ properties: [], rollout_percentage: 0 }], super_groups: enrollment('beta-old') } })
    const res = await server.api('PATCH', `${flags}${flag.id}/`, { key: 'beta-new' })
    t.same(res.body.filters.super_groups, enrollment('beta-new'))
  })

  t.test('a stale version conflicts only where original_flag shows another change', async (t) => {
    const flag = await create(simpleFlag('versioned', { name: 'v1' }))
    const url = `${flags}${flag.id}/`
    t.equal((await server.api('PATCH', url, { name: 'v2', version: 1 })).body.version, 2)
    const blind = await server.api('PATCH', url, { name: 'v3', version: 1 })
    t.equal(blind.status, 200, 'without original_flag a stale version is applied, as PostHog does')
    t.equal(blind.body.version, 3)
    const other = await server.api('PATCH', url, { active: false, version: 1, original_flag: { name: 'v1', active: true } })
    t.equal(other.status, 200, 'the field it changes was not changed by anyone else')
    const clash = await server.api('PATCH', url, { name: 'mine', version: 1, original_flag: { name: 'v1', version: 1 } })
    t.equal(clash.status, 409, 'the name it read was changed since, to something else')
    t.match(clash.body, { code: 'conflict', original_flag: { name: 'v3', version: 4 } })
    const colleague = f.member(MembershipLevel.member)
    t.equal((await colleague.call('PATCH', url, { name: 'theirs' })).body.version, 5)
    const theirs = await server.api('PATCH', url, { ensure_experience_continuity: true, version: 4, original_flag: { last_modified_by: {} } })
    t.equal(theirs.status, 409, 'an original_flag naming last_modified_by conflicts once someone else saved last')
  })
})
