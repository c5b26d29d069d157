import t from 'tap'
import { MembershipLevel } from '../../../src/management/index.js'
import { flagServer, simpleFlag, type Member } from './fixture.js'

const EDIT_DENIED = "You don't have edit permissions for this feature flag."
const ROLE_DENIED = "You can't edit roles for this feature flag."

t.test('feature flag role access', async (t) => {
  const f = await flagServer()
  t.teardown(() => f.close())
  const { server, flags } = f
  const roles = '/api/organizations/@current/roles/'

  const creator = f.member(MembershipLevel.member)
  const admin = f.member(MembershipLevel.admin)
  const editor = f.member(MembershipLevel.member)
  const viewer = f.member(MembershipLevel.member)
  const otherViewer = f.member(MembershipLevel.member)
  const both = f.member(MembershipLevel.member)
  const other = f.member(MembershipLevel.member)
  // PostHog's levels: 37 "can always edit" (a role's default), 21 "can only view"
  const editors = (await server.api('POST', roles, { name: 'Editors' })).body
  const viewers = (await server.api('POST', roles, { name: 'Viewers', feature_flags_access_level: 21 })).body
  const support = (await server.api('POST', roles, { name: 'Support', feature_flags_access_level: 21 })).body
  await server.api('POST', `${roles}${editors.id}/role_memberships/`, { user_uuid: editor.user.uuid })
  await server.api('POST', `${roles}${viewers.id}/role_memberships/`, { user_uuid: viewer.user.uuid })
  await server.api('POST', `${roles}${support.id}/role_memberships/`, { user_uuid: otherViewer.user.uuid })
  await server.api('POST', `${roles}${support.id}/role_memberships/`, { user_uuid: both.user.uuid })
  await server.api('POST', `${roles}${editors.id}/role_memberships/`, { user_uuid: both.user.uuid })

  const flag = (await creator.call('POST', flags, simpleFlag('guarded'))).body
  const access = `${flags}${flag.id}/role_access/`

  t.test('without role access, everyone but view-only role members can edit', async (t) => {
    const res = await other.call('PATCH', `${flags}${flag.id}/`, { name: 'edited by anyone' })
    t.equal(res.status, 200, 'a member in no role gets the default, can always edit')
    t.equal(res.body.can_edit, true)
    const refused = await viewer.call('PATCH', `${flags}${flag.id}/`, { name: 'edited by a viewer' })
    t.equal(refused.status, 403, 'a member whose roles can only view')
    t.same(refused.body, { type: 'authentication_error', code: 'permission_denied', detail: EDIT_DENIED, attr: null })
  })

  let grant: { id: number }
  t.test('POST adds a role and answers the record with the role and the flag', async (t) => {
    const res = await creator.call('POST', access, { role_id: viewers.id, feature_flag: 999 })
    t.equal(res.status, 201)
    t.match(res.body, {
      id: Number,
      role_id: viewers.id,
      added_at: String,
      updated_at: String,
      role: { id: viewers.id, name: 'Viewers', feature_flags_access_level: 21, members: [{ user: { uuid: viewer.user.uuid } }] },
      feature_flag: { id: flag.id, key: 'guarded', can_edit: true, filters: simpleFlag('x').filters },
    })
    t.notOk('team_id' in res.body.feature_flag)
    grant = res.body
  })

  t.test('GET lists and retrieves role access; reading stays open', async (t) => {
    const list = await otherViewer.call('GET', access)
    t.equal(list.status, 200)
    t.equal(list.body.count, 1)
    t.equal(list.body.next, null)
    t.equal(list.body.results[0].id, grant.id)
    const one = await otherViewer.call('GET', `${access}${grant.id}/`)
    t.equal(one.status, 200)
    t.equal(one.body.role.name, 'Viewers')
    t.equal(one.body.feature_flag.can_edit, false, 'can_edit is computed for the caller')
    t.equal(one.body.feature_flag.user_access_level, 'viewer')
    t.equal((await otherViewer.call('GET', `${access}999999/`)).status, 404)
  })

  t.test("flag edits follow PostHog's rule: creator, admins, edit roles, no role, and view-only roles the flag names", async (t) => {
    const matrix: Array<[string, Member | null, number]> = [
      ['creator', creator, 200],
      ['organisation admin', admin, 200],
      ['organisation owner', null, 200],
      ['member of a can-always-edit role', editor, 200],
      ['member in no role', other, 200],
      ['view-only member of a role the flag names', viewer, 200],
      ['view-only member of another role', otherViewer, 403],
      ['member of a view-only and an edit role (the highest counts)', both, 200],
    ]
    for (const [who, member, status] of matrix) {
      const call = member ? member.call : (m: string, p: string, b?: unknown) => server.api(m, p, b)
      const res = await call('PATCH', `${flags}${flag.id}/`, { name: `edited by ${who}` })
      t.equal(res.status, status, who)
      if (status === 403) t.same(res.body, { type: 'authentication_error', code: 'permission_denied', detail: EDIT_DENIED, attr: null }, who)
      const read = await call('GET', `${flags}${flag.id}/`)
      t.equal(read.status, 200, `${who} reads`)
      t.equal(read.body.can_edit, status === 200, `${who} can_edit`)
    }
    const list = await otherViewer.call('GET', `${flags}?search=guarded`)
    t.equal(list.body.results[0].can_edit, false, 'can_edit in lists too')
    const refused = await otherViewer.call('PATCH', `${flags}${flag.id}/`, { deleted: true })
    t.equal(refused.status, 403, 'soft delete is an edit')
  })

  t.test('role access writes need the right to edit the flag', async (t) => {
    const denied = await otherViewer.call('POST', access, { role_id: support.id })
    t.equal(denied.status, 403)
    t.same(denied.body, { type: 'authentication_error', code: 'permission_denied', detail: ROLE_DENIED, attr: null })
    t.equal((await otherViewer.call('DELETE', `${access}${grant.id}/`)).status, 403)
    const byViewer = await viewer.call('POST', access, { role_id: support.id })
    t.equal(byViewer.status, 201, 'a view-only member the flag names may add roles')
    t.equal((await otherViewer.call('PATCH', `${flags}${flag.id}/`, { name: 'support can edit now' })).status, 200)
    t.equal((await admin.call('DELETE', `${access}${byViewer.body.id}/`)).status, 204)
    t.equal((await otherViewer.call('PATCH', `${flags}${flag.id}/`, { name: 'not any more' })).status, 403)
  })

  t.test('a role is attached once', async (t) => {
    const dup = await creator.call('POST', access, { role_id: viewers.id })
    t.equal(dup.status, 400)
    t.match(dup.body, { type: 'validation_error', code: 'unique', attr: 'role_id' })
  })

  t.test('unknown flags, roles and other organisations’ roles are 404', async (t) => {
    const noFlag = await creator.call('POST', `${flags}999999/role_access/`, { role_id: editors.id })
    t.equal(noFlag.status, 404)
    t.equal(noFlag.body.detail, 'Feature flag not found.')
    t.equal((await creator.call('GET', `${flags}999999/role_access/`)).status, 404)
    const noRole = await creator.call('POST', access, { role_id: '00000000-0000-4000-8000-000000000000' })
    t.equal(noRole.status, 404)
    t.equal(noRole.body.detail, 'Role not found.')
    const foreignOrg = f.m.accounts.createOrganization('Elsewhere')
    const foreignRole = f.m.roles.create(foreignOrg.id, { name: 'Foreign' }, null)
    t.equal((await creator.call('POST', access, { role_id: foreignRole.id })).status, 404)
    const missing = await creator.call('POST', access, {})
    t.match(missing.body, { code: 'required', attr: 'role_id' })
    t.match((await creator.call('POST', access, { role_id: 5 })).body, { code: 'invalid_input', attr: 'role_id' })
  })

  t.test('scopes: feature_flag:read lists, feature_flag:write changes', async (t) => {
    const reader = f.keyFor(creator.user, ['feature_flag:read'])
    t.equal((await reader.call('GET', access)).status, 200)
    const denied = await reader.call('POST', access, { role_id: support.id })
    t.equal(denied.status, 403)
    t.equal(denied.body.detail, "API key missing required scope 'feature_flag:write'")
  })

  t.test("DELETE answers 204 with no body and takes the role's edit right with it", async (t) => {
    const res = await creator.call('DELETE', `${access}${grant.id}/`)
    t.equal(res.status, 204)
    t.equal(res.text, '')
    t.equal((await creator.call('GET', access)).body.count, 0)
    t.equal((await creator.call('DELETE', `${access}${grant.id}/`)).status, 404)
    t.equal((await viewer.call('PATCH', `${flags}${flag.id}/`, { name: 'view only again' })).status, 403)
  })

  t.test('deleting a role removes its access', async (t) => {
    await creator.call('POST', access, { role_id: support.id })
    t.equal((await server.api('DELETE', `${roles}${support.id}/`)).status, 204)
    t.equal((await creator.call('GET', access)).body.count, 0)
  })
})
