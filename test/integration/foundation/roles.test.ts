import t from 'tap'
import { runCli, serverFor } from '../../helpers/server.js'

t.test('roles API', async (t) => {
  const server = await serverFor(t)
  const base = '/api/organizations/@current/roles/'

  t.test('creates, lists, retrieves and deletes a role', async (t) => {
    const created = await server.api('POST', base, { name: 'Release managers', feature_flags_access_level: 37 })
    t.equal(created.status, 201)
    t.match(created.body, {
      id: /^[0-9a-f-]{36}$/,
      name: 'Release managers',
      feature_flags_access_level: 37,
      members: [],
      associated_flags: [],
      created_by: { email: 'admin@skylark.local' },
    })
    const list = await server.api('GET', base)
    t.equal(list.body.count, 1)
    const one = await server.api('GET', `${base}${created.body.id}/`)
    t.equal(one.body.name, 'Release managers')
    t.equal((await server.api('DELETE', `${base}${created.body.id}/`)).status, 204)
    t.equal((await server.api('GET', `${base}${created.body.id}/`)).status, 404)
  })

  t.test('refuses a duplicate name and a missing name', async (t) => {
    await server.api('POST', base, { name: 'Dup' })
    const dup = await server.api('POST', base, { name: 'Dup' })
    t.equal(dup.status, 400)
    t.match(dup.body, { type: 'validation_error', code: 'unique', attr: 'name' })
    const missing = await server.api('POST', base, {})
    t.match(missing.body, { type: 'validation_error', code: 'required', attr: 'name' })
    const level = await server.api('POST', base, { name: 'x', feature_flags_access_level: 5 })
    t.match(level.body, { code: 'invalid_choice', attr: 'feature_flags_access_level' })
  })

  t.test('adds and removes members', async (t) => {
    const role = (await server.api('POST', base, { name: 'Members test' })).body
    const me = (await server.api('GET', `${base}${role.id}/`)).body.created_by
    const added = await server.api('POST', `${base}${role.id}/role_memberships/`, { user_uuid: me.uuid })
    t.equal(added.status, 201)
    t.equal(added.body.user.uuid, me.uuid)
    const again = await server.api('POST', `${base}${role.id}/role_memberships/`, { user_uuid: me.uuid })
    t.equal(again.status, 400)
    const members = await server.api('GET', `${base}${role.id}/role_memberships/`)
    t.equal(members.body.count, 1)
    t.equal((await server.api('DELETE', `${base}${role.id}/role_memberships/${added.body.id}/`)).status, 204)
    t.equal((await server.api('GET', `${base}${role.id}/`)).body.members.length, 0)
  })

  t.test('reading needs organization:read, writing organization:write', async (t) => {
    const env = { DATA_DIR: server.dataDir }
    const readOnly = JSON.parse((await runCli(['keys', 'create', '--scopes', 'organization:read', '--json'], env)).stdout)
    t.equal((await server.api('GET', base, undefined, readOnly.personal_api_key)).status, 200)
    const denied = await server.api('POST', base, { name: 'nope' }, readOnly.personal_api_key)
    t.equal(denied.status, 403)
    t.equal(denied.body.detail, "API key missing required scope 'organization:write'")
  })

  t.test('an organisation the key cannot see is 404', async (t) => {
    const res = await server.api('GET', '/api/organizations/00000000-0000-4000-8000-000000000000/roles/')
    t.equal(res.status, 404)
  })
})
