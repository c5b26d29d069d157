/**
 * A project's timezone over HTTP, as PostHog's Team.timezone: UTC until changed, changed by PATCH of the
 * project or its environment (organisation admins only), refused with DRF's ChoiceField sentence in the
 * contract's envelope when it names no zone, read by /decide's date filters at once, and kept in management.db
 * across a restart of the server.
 */
import t from 'tap'
import { systemClock } from '../../../src/common/clock.js'
import { MembershipLevel, createManagement } from '../../../src/management/index.js'
import { dataPaths, openManagementDb } from '../../../src/storage/index.js'
import { bootstrapDataDir, startServer, tempDir } from '../../helpers/server.js'

t.test('project timezone', async (t) => {
  const dataDir = tempDir('skylark-timezone-')
  const boot = bootstrapDataDir(dataDir)
  const db = openManagementDb(dataPaths(dataDir))
  const m = createManagement(db, systemClock)
  const member = m.accounts.createUser({ email: 'member@example.com', first_name: 'Mem' })
  m.accounts.addMember(boot.organization_id, member.id, MembershipLevel.member)
  const memberKey = m.keys.create({ userId: member.id, label: 'member', scopes: ['*'] }).key
  db.close()

  let server = await startServer({ dataDir })
  t.teardown(async () => {
    await server.stop()
    server.cleanup()
  })
  const project = `/api/projects/${boot.project_id}/`
  const environment = `/api/environments/${boot.project_id}/`

  t.test('UTC until changed; a PATCH of the project or its environment changes it everywhere it is answered', async (t) => {
    t.equal((await server.api('GET', project)).body.timezone, 'UTC')
    const changed = await server.api('PATCH', project, { timezone: 'Europe/Berlin' })
    t.same([changed.status, changed.body.timezone], [200, 'Europe/Berlin'])
    t.equal((await server.api('GET', environment)).body.timezone, 'Europe/Berlin')
    t.equal((await server.api('GET', '/api/projects/')).body.results.find((p: { id: number }) => p.id === boot.project_id).timezone, 'Europe/Berlin', 'the list')
    t.equal((await server.api('GET', '/api/users/@me/')).body.team.timezone, 'Europe/Berlin', "the user's current team")
    const current = await server.api('PATCH', '/api/environments/@current/', { timezone: 'Asia/Kolkata' })
    t.same([current.status, current.body.timezone], [200, 'Asia/Kolkata'], 'a current name Intl lists under an older one')
  })

  t.test("a name that is no zone is a 400 in the contract's envelope, and changes nothing", async (t) => {
    for (const [value, shown] of [['Europe/Atlantis', 'Europe/Atlantis'], ['europe/berlin', 'europe/berlin'], ['', ''], [3, '3']] as const) {
      const res = await server.api('PATCH', project, { timezone: value, name: 'Renamed' })
      t.equal(res.status, 400, JSON.stringify(value))
      t.same(res.body, { type: 'validation_error', code: 'invalid_choice', detail: `"${shown}" is not a valid choice.`, attr: 'timezone' })
    }
    const nulled = await server.api('PATCH', environment, { timezone: null })
    t.same([nulled.status, nulled.body], [400, { type: 'validation_error', code: 'null', detail: 'This field may not be null.', attr: 'timezone' }])
    t.match((await server.api('GET', project)).body, { timezone: 'Asia/Kolkata', name: 'Default project' })
  })

  t.test('only organisation admins change it, as every admin setting', async (t) => {
    const res = await server.api('PATCH', project, { timezone: 'UTC' }, memberKey)
    t.same([res.status, res.body.detail], [403, 'Only project admins can modify these settings: timezone'])
  })

  t.test("/decide reads a flag's dates without an offset in the project's timezone, as PostHog's flag service", async (t) => {
    const properties = [{ key: 'signed_up', type: 'person', operator: 'is_date_before', value: '2026-03-01 00:00:00' }]
    const flag = await server.api('POST', `${project}feature_flags/`, { key: 'early-birds', filters: { groups: [{ properties, rollout_percentage: 100 }] } })
    t.equal(flag.status, 201)
    // Signed up at 23:30 UTC on 28 February: before midnight in UTC, but already 00:30 on 1 March in Berlin.
    const decide = async () =>
      (await server.request('POST', '/decide/?v=3', { body: { api_key: boot.project_api_key, distinct_id: 'bird', person_properties: { signed_up: '2026-02-28T23:30:00Z' } } })).body.featureFlags['early-birds']
    await server.api('PATCH', project, { timezone: 'UTC' })
    t.equal(await decide(), true, 'in UTC')
    await server.api('PATCH', project, { timezone: 'Europe/Berlin' })
    t.equal(await decide(), false, 'in Berlin, at once')
  })

  t.test('it is kept across a restart of the server', async (t) => {
    await server.api('PATCH', project, { timezone: 'America/New_York' })
    t.equal(await server.stop(), 0)
    server = await startServer({ dataDir })
    const after = await server.api('GET', project)
    t.same([after.status, after.body.timezone], [200, 'America/New_York'])
  })
})
