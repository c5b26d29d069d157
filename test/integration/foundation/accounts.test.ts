/**
 * The account surface PostHog's tools call first, against the real server: /api/users/@me/, organisations
 * and their projects, the project as an environment, and PATCH of a project's name and anonymize_ips (which
 * capture honours at once, without a restart).
 */
import t from 'tap'
import Database from 'better-sqlite3'
import { randomUUID } from 'node:crypto'
import { join } from 'node:path'
import { systemClock } from '../../../src/common/clock.js'
import { MembershipLevel, createManagement } from '../../../src/management/index.js'
import { dataPaths, openManagementDb } from '../../../src/storage/index.js'
import { bootstrapDataDir, serverFor, tempDir } from '../../helpers/server.js'
import { until } from '../reliability/lib.js'

function storedProperties(dataDir: string, uuid: string): Record<string, unknown> | null {
  const db = new Database(join(dataDir, 'events.db'), { readonly: true, fileMustExist: true })
  try {
    const row = db.prepare('SELECT properties FROM events WHERE uuid = ?').get(uuid) as { properties: string } | undefined
    return row ? (JSON.parse(row.properties) as Record<string, unknown>) : null
  } finally {
    db.close()
  }
}

t.test('account surface', async (t) => {
  const dataDir = tempDir('skylark-accounts-')
  const boot = bootstrapDataDir(dataDir)
  const db = openManagementDb(dataPaths(dataDir))
  const m = createManagement(db, systemClock)
  const owner = m.accounts.userByEmail('admin@skylark.local')!
  // The owner also belongs (as admin) to a second organisation with a project of its own; the first one gets a second project.
  const second = m.accounts.createOrganization('Second Org')
  m.accounts.addMember(second.id, owner.id, MembershipLevel.admin)
  const secondProject = m.accounts.createProject(second.id, 'Mobile')
  const sibling = m.accounts.createProject(boot.organization_id, 'Staging')
  // A key limited to the second organisation's project, a member's key, a key without user:read, and a stranger's organisation.
  const scopedKey = m.keys.create({ userId: owner.id, label: 'mobile only', scopes: ['*'], scopedTeams: [secondProject.id] }).key
  const member = m.accounts.createUser({ email: 'member@example.com', first_name: 'Mem' })
  m.accounts.addMember(boot.organization_id, member.id, MembershipLevel.member)
  const memberKey = m.keys.create({ userId: member.id, label: 'member', scopes: ['*'] }).key
  const flagsOnlyKey = m.keys.create({ userId: owner.id, label: 'flags', scopes: ['feature_flag:read'] }).key
  const readOnlyKey = m.keys.create({ userId: owner.id, label: 'read', scopes: ['project:read'] }).key
  const strangers = m.accounts.createOrganization('Elsewhere')
  const theirProject = m.accounts.createProject(strangers.id, 'Hidden')
  db.close()

  const server = await serverFor(t, { dataDir })
  const get = (path: string, key?: string) => server.api('GET', path, undefined, key)
  const patch = (path: string, body: unknown, key?: string) => server.api('PATCH', path, body, key)

  t.test('@me is the key\'s user with the organisation and project @current resolves to', async (t) => {
    const me = await get('/api/users/@me/')
    t.equal(me.status, 200)
    t.match(me.body, { uuid: owner.uuid, distinct_id: owner.distinct_id, email: 'admin@skylark.local', is_staff: false, id: owner.id })
    const project = (await get('/api/projects/@current/')).body
    const organization = (await get('/api/organizations/@current/')).body
    t.equal(me.body.team.id, boot.project_id, 'the first project')
    t.same(me.body.team, { ...me.body.team, id: project.id, uuid: project.uuid, api_token: project.api_token, project_id: project.id, organization: boot.organization_id })
    t.same(me.body.organization, organization, 'the current organisation in full, as /api/organizations/@current/ answers it')
    t.same(organization.teams.map((p: { id: number }) => p.id), [boot.project_id, sibling.id])
    t.same(organization.projects, [
      { id: boot.project_id, organization_id: boot.organization_id, name: project.name },
      { id: sibling.id, organization_id: boot.organization_id, name: 'Staging' },
    ])
    t.match(organization, { id: boot.organization_id, slug: /^[a-z0-9-]+$/, membership_level: MembershipLevel.owner, member_count: 2 })
    t.same(
      me.body.organizations.map((o: { id: string; slug: string; membership_level: number }) => [o.id, o.slug, o.membership_level]),
      [[boot.organization_id, organization.slug, MembershipLevel.owner], [second.id, 'second-org', MembershipLevel.admin]],
    )
  })

  t.test('a key limited to one project has that project and its organisation as current', async (t) => {
    const me = (await get('/api/users/@me/', scopedKey)).body
    t.equal(me.team.id, secondProject.id)
    t.equal(me.organization.id, second.id)
    t.equal((await get('/api/projects/@current/', scopedKey)).body.id, secondProject.id)
    t.equal((await get('/api/organizations/@current/', scopedKey)).body.id, second.id)
    t.same((await get('/api/organizations/', scopedKey)).body.results.map((o: { id: string }) => o.id), [second.id])
    t.equal((await get(`/api/organizations/${boot.organization_id}/`, scopedKey)).status, 404, 'the other organisation is out of its reach')
  })

  t.test('organisations and their projects; another organisation is not found', async (t) => {
    const list = await get('/api/organizations/')
    t.same([list.body.count, list.body.results.map((o: { id: string }) => o.id)], [2, [boot.organization_id, second.id]])
    const projects = await get(`/api/organizations/${second.id}/projects/`)
    t.same(projects.body.results.map((p: { id: number; name: string }) => [p.id, p.name]), [[secondProject.id, 'Mobile']])
    t.match(projects.body.results[0], { organization: second.id, project_id: secondProject.id, api_token: /^phc_/, timezone: 'UTC' })
    for (const path of [`/api/organizations/${strangers.id}/`, `/api/organizations/${strangers.id}/projects/`]) {
      const theirs = await get(path)
      const ghost = await get(path.replace(strangers.id, randomUUID()))
      t.same([theirs.status, theirs.text], [ghost.status, ghost.text], `${path} answers as for no organisation`)
      t.equal(theirs.status, 404)
    }
    t.equal((await get(`/api/environments/${theirProject.id}/`)).status, 404)
  })

  t.test('the environment is the project as PostHog\'s team object', async (t) => {
    const env = await get('/api/environments/@current/')
    const project = await get(`/api/projects/${boot.project_id}/`)
    t.equal(env.status, 200)
    t.same(env.body, project.body)
    t.match(env.body, {
      id: boot.project_id,
      project_id: boot.project_id,
      uuid: /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
      organization: boot.organization_id,
      api_token: boot.project_api_key,
      anonymize_ips: false,
      effective_membership_level: MembershipLevel.owner,
      timezone: 'UTC',
    })
    t.notOk(env.text.includes(boot.project_secret_api_key), 'the secret key stays out of the HTTP API')
  })

  t.test('PATCH renames, refuses what PostHog refuses, and keeps unhonoured settings as answered', async (t) => {
    const renamed = await patch(`/api/projects/${sibling.id}/`, { name: '  Staging EU  ', id: 999, api_token: 'phc_ignored' })
    t.same([renamed.status, renamed.body.name, renamed.body.id, renamed.body.api_token.startsWith('phc_ignored')], [200, 'Staging EU', sibling.id, false])
    t.equal((await get(`/api/environments/${sibling.id}/`)).body.name, 'Staging EU')
    const dup = await patch(`/api/environments/${sibling.id}/`, { name: 'staging eu ' })
    t.equal(dup.status, 200, 'its own name, differently cased, is its own')
    const taken = await patch(`/api/projects/${sibling.id}/`, { name: (await get('/api/projects/@current/')).body.name.toUpperCase() })
    t.match([taken.status, taken.body], [409, { code: 'conflict', detail: /^There is already a project called ".*" in this organization\. Choose a different name\.$/ }])
    t.match((await patch(`/api/projects/${sibling.id}/`, { name: ' ' })).body, { code: 'blank', attr: 'name', detail: 'This field may not be blank.' })
    t.match((await patch(`/api/projects/${sibling.id}/`, { name: 'x'.repeat(201) })).body, { code: 'max_length', attr: 'name' })
    t.match((await patch(`/api/projects/${sibling.id}/`, { anonymize_ips: 'maybe' })).body, { code: 'invalid', attr: 'anonymize_ips', detail: 'Must be a valid boolean.' })
    t.match((await patch(`/api/projects/${sibling.id}/`, { anonymize_ips: null })).body, { code: 'null', attr: 'anonymize_ips' })
    t.equal((await patch(`/api/projects/${sibling.id}/`, { is_demo: false })).status, 200, 'a setting at the value skylark keeps is accepted')
    t.match((await patch(`/api/projects/${sibling.id}/`, { is_demo: true })).body, { code: 'unsupported', attr: 'is_demo' })
    t.match((await patch(`/api/projects/${sibling.id}/`, { session_recording_sample_rate: '0.5' })).body, { code: 'unsupported', attr: 'session_recording_sample_rate' })
    const byMember = await patch(`/api/projects/${sibling.id}/`, { anonymize_ips: true, name: 'Mine', cookieless_server_hash_mode: 2 }, memberKey)
    t.match([byMember.status, byMember.body.detail], [403, 'Only project admins can modify these settings: anonymize_ips, cookieless_server_hash_mode, name'])
    t.equal((await get(`/api/projects/${sibling.id}/`, memberKey)).body.effective_membership_level, MembershipLevel.member)
  })

  t.test('anonymize_ips reaches capture without a restart', async (t) => {
    const capture = async () => {
      const uuid = randomUUID()
      const res = await server.request('POST', '/capture/', { body: { api_key: boot.project_api_key, event: 'ip-check', distinct_id: 'ip-user', uuid } })
      t.equal(res.status, 200)
      await until(`event ${uuid} is stored`, () => storedProperties(dataDir, uuid) !== null)
      return storedProperties(dataDir, uuid)!
    }
    t.equal((await capture()).$ip, '127.0.0.1', 'before: the IP is stored')
    const on = await patch('/api/projects/@current/', { anonymize_ips: 'true' })
    t.same([on.status, on.body.anonymize_ips], [200, true])
    t.notOk('$ip' in (await capture()), 'after: no IP')
    await patch('/api/environments/@current/', { anonymize_ips: false })
    t.equal((await capture()).$ip, '127.0.0.1', 'and back')
  })

  t.test('scopes and other users', async (t) => {
    const noUserScope = await get('/api/users/@me/', flagsOnlyKey)
    t.match([noUserScope.status, noUserScope.body], [403, { code: 'permission_denied', detail: "API key missing required scope 'user:read'" }])
    t.match((await get('/api/organizations/', flagsOnlyKey)).body, { detail: "API key missing required scope 'organization:read'" })
    t.match((await patch('/api/projects/@current/', { name: 'x' }, readOnlyKey)).body, { detail: "API key missing required scope 'project:write'" })
    const other = await get(`/api/users/${member.uuid}/`)
    t.match([other.status, other.body.detail], [403, "As a non-staff user you're only allowed to access the `@me` user instance."])
  })
})
